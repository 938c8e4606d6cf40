package tokenizer

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestBuiltinGPT2Basics(t *testing.T) {
	tok, err := Builtin("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tok.VocabSize(), 50257; got != want {
		t.Errorf("VocabSize() = %d, want %d", got, want)
	}
	// transformers' GPT2TokenizerFast.vocab_size: <|endoftext|> is in vocab.json.
	if got, want := tok.BaseVocabSize(), 50257; got != want {
		t.Errorf("BaseVocabSize() = %d, want %d", got, want)
	}
	r50k, err := Builtin("r50k_base")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r50k.BaseVocabSize(), 50256; got != want {
		t.Errorf("r50k_base BaseVocabSize() = %d, want %d (mergeable tokens; <|endoftext|> is special)", got, want)
	}
	if got, want := tok.Encode("Hello world<|endoftext|>", false), []int{15496, 995, 50256}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if got := tok.Decode([]int{15496, 995, 50256}, false); got != "Hello world<|endoftext|>" {
		t.Errorf("Decode = %q", got)
	}
	if got, ok := tok.IDToToken(995); !ok || got != "Ġworld" {
		t.Errorf("IDToToken(995) = %q, %v, want Ġworld", got, ok)
	}
}

func TestTiktokenLossyDecodeCases(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"abc", "abc"},
		{"\xe2\x82", "\ufffd"},                 // truncated 3-byte sequence: one replacement
		{"\xe2\x82x", "\ufffdx"},               // … followed by ASCII
		{"\xf0\x9f\x98", "\ufffd"},             // truncated 4-byte sequence
		{"\xc0\xaf", "\ufffd\ufffd"},           // overlong: C0 is never valid
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"}, // surrogate: ED A0 is not a valid prefix
		{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\x80\xbf", "\ufffd\ufffd"},
		{"a\xe2\x82\xacb", "a€b"},
		{"\xe2\x82\xe2\x82\xac", "\ufffd€"},
	} {
		if got := toValidUTF8(c.in); got != c.want {
			t.Errorf("toValidUTF8(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMergeLongMatchesShort checks that the heap merge used for long pieces gives the
// same ids as tiktoken's quadratic loop.
func TestMergeLongMatchesShort(t *testing.T) {
	tok, err := Builtin("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	b := tok.b.(*tiktokenBackend)
	for _, s := range ttCorpus(3, 400, nil) {
		for len(s) > 0 {
			p := s[:min(len(s), 64)]
			s = s[len(p):]
			short := b.mergeShort(nil, p)
			long := b.mergeLong(nil, p)
			if !slices.Equal(short, long) {
				t.Fatalf("mergeLong(%q) = %v, want %v", p, long, short)
			}
		}
	}
}

func TestBuiltinUnknown(t *testing.T) {
	if _, err := Builtin("gpt5"); err == nil || !strings.Contains(err.Error(), "cl100k_base") {
		t.Errorf("Builtin(gpt5) error = %v, want one listing the built-ins", err)
	}
}

func TestBuiltinTokenRoundTrip(t *testing.T) {
	tok, err := Builtin("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{0, 255, 1000, 199997, 199999, 200018} {
		s, ok := tok.IDToToken(id)
		if !ok {
			t.Fatalf("IDToToken(%d) not found", id)
		}
		if got, ok := tok.TokenToID(s); !ok || got != id {
			t.Errorf("TokenToID(%q) = %d, %v, want %d", s, got, ok, id)
		}
	}
	if _, ok := tok.IDToToken(199998); ok {
		t.Errorf("IDToToken(199998) found, want an unused id")
	}
	if got := tok.SpecialIDs(); !slices.Equal(got, []int{199999, 200018}) {
		t.Errorf("SpecialIDs() = %v", got)
	}
	if got := tok.Decode([]int{200018, 1000}, true); got != tok.Decode([]int{1000}, false) {
		t.Errorf("Decode(skipSpecial) kept the special token: %q", got)
	}
}

// TestBuiltinConcurrent loads and encodes from many goroutines at once (run with -race):
// the lazy load, the piece cache and the splitter are shared.
func TestBuiltinConcurrent(t *testing.T) {
	texts := ttCorpus(21, 200, []string{"<|endoftext|>"})
	var wg sync.WaitGroup
	results := make([][][]int, 4)
	for g := range results {
		wg.Go(func() {
			tok, err := Builtin("p50k_base")
			if err != nil {
				t.Error(err)
				return
			}
			results[g] = tok.EncodeBatch(texts, false)
		})
	}
	wg.Wait()
	tok, _ := Builtin("p50k_base")
	for i, s := range texts {
		want := tok.Encode(s, false)
		for g := range results {
			if !slices.Equal(results[g][i], want) {
				t.Fatalf("goroutine %d: Encode(%s) = %v, want %v", g, shortQ(s), results[g][i], want)
			}
		}
	}
}
