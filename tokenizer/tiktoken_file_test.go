package tokenizer

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

// TestTiktokenFileMatchesTiktoken loads the original Llama-3 and Kimi-K2 tiktoken.model
// releases (with tokenizer_config.json) and checks them against OpenAI's tiktoken built
// from the same ranks, special tokens and pattern.
func TestTiktokenFileMatchesTiktoken(t *testing.T) {
	n := 2000
	if testutil.Short() {
		n = 200
	}
	for _, c := range []struct {
		dir, pattern string
		bos          int
		vocab        int
	}{
		{"daulet/meta-llama-3-8b-instruct", tiktokenPatternLlama3, 128000, 128256},
		{"daulet/kimi-k2-instruct", tiktokenPatternKimi, -1, 163840},
	} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			path := filepath.Join(testutil.Fixture(t, c.dir), "tiktoken.model")
			tok, err := LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b := tok.b.(*tiktokenBackend)
			if got := tok.VocabSize(); got != c.vocab {
				t.Errorf("VocabSize() = %d, want %d", got, c.vocab)
			}
			if got := tok.Encode("hi", true); c.bos >= 0 && (len(got) == 0 || got[0] != c.bos) || c.bos < 0 && len(got) != 1 {
				t.Errorf("Encode(hi, true) = %v, want BOS %d first", got, c.bos)
			}
			var specials []string
			for s := range b.special {
				specials = append(specials, s)
			}
			slices.Sort(specials)
			texts := ttCorpus(11, n, specials)
			sent := make([]string, len(texts))
			for i, s := range texts {
				sent[i] = toValidUTF8(s)
			}
			r := rand.New(rand.NewPCG(5, 5))
			decs := make([][]int, n/2)
			for i := range decs {
				for range 1 + r.IntN(12) {
					decs[i] = append(decs[i], r.IntN(len(b.tokens)))
				}
			}
			want := ttOracle(t, ttOracleReq{File: path, Special: b.special, PatStr: c.pattern, Texts: sent, Decode: decs})
			bad := 0
			for i, s := range texts {
				if got := tok.Encode(s, false); !slices.Equal(got, want.IDs[i]) {
					if bad++; bad <= 5 {
						t.Errorf("Encode(%s)\n got %v\nwant %v", shortQ(s), got, want.IDs[i])
					}
				}
			}
			for i, ids := range decs {
				if got := tok.Decode(ids, false); got != want.Decoded[i] {
					if bad++; bad <= 10 {
						t.Errorf("Decode(%v) = %q, want %q", ids, got, want.Decoded[i])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d cases differ from tiktoken", bad, len(texts)+len(decs))
			}
		})
	}
}

func TestPythonPatStr(t *testing.T) {
	src := "class T:\n    pat_str = \"|\".join(\n        [\n            r\"\"\"[\\p{Han}]+\"\"\",\n            r\"\"\"\\s+(?!\\S)\"\"\",\n            r'''\\s+''',\n        ]\n    )\n"
	got, ok := pythonPatStr(src)
	if want := `[\p{Han}]+|\s+(?!\S)|\s+`; !ok || got != want {
		t.Errorf("pythonPatStr(join form) = %q, %v, want %q", got, ok, want)
	}
	got, ok = pythonPatStr(`pat_str = r"'s|\s+" # comment`)
	if want := `'s|\s+`; !ok || got != want {
		t.Errorf("pythonPatStr(plain) = %q, %v, want %q", got, ok, want)
	}
	if _, ok := pythonPatStr(`pat_str = compute()`); ok {
		t.Errorf("pythonPatStr(call) ok, want failure")
	}
}

func TestTiktokenFilePatternFromPython(t *testing.T) {
	dir := t.TempDir()
	ranks := "IQ== 0\nIg== 1\n"
	for c := 'a'; c <= 'z'; c++ {
		ranks += b64(string(c)) + " " + itoa(int(c)) + "\n"
	}
	ranks += b64("ab") + " 200\n"
	mustWrite(t, filepath.Join(dir, "x.tiktoken"), ranks)
	mustWrite(t, filepath.Join(dir, "tokenization_x.py"), "pat_str = r\"[a-z]\"\n")
	mustWrite(t, filepath.Join(dir, "tokenizer_config.json"), `{"added_tokens_decoder": {"205": {"content": "<s>", "special": true}, "203": {"content": "<x>", "special": false}}, "bos_token": "<s>", "add_bos_token": true}`)
	tok, err := LoadFile(filepath.Join(dir, "x.tiktoken"))
	if err != nil {
		t.Fatal(err)
	}
	// The Python pattern splits every letter apart, so "ab" is never merged.
	if got, want := tok.Encode("ab<x>", true), []int{205, 'a', 'b', 203}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if got := tok.SpecialIDs(); !slices.Equal(got, []int{201, 202, 204, 205}) {
		t.Errorf("SpecialIDs() = %v, want reserved 201 202 204 and <s> 205", got)
	}
	if got, _ := tok.IDToToken(201); got != "<|reserved_token_201|>" {
		t.Errorf("IDToToken(201) = %q", got)
	}
	if got := tok.Decode([]int{205, 'a', 203}, true); got != "a<x>" {
		t.Errorf("Decode(skipSpecial) = %q, want a<x>", got)
	}
}

func TestTiktokenFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{"", "no ranks"},
		{"IQ==\n", "line 1"},
		{"IQ== x\n", "bad rank"},
		{"!!! 0\n", "line 1"},
		{"IQ== 0\nIg== 0\n", "rank 0 appears twice"},
	} {
		p := filepath.Join(dir, "bad.tiktoken")
		mustWrite(t, p, c.body)
		if _, err := LoadFile(p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadFile(%q) error = %v, want it to mention %q", c.body, err, c.want)
		}
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKimiLongRuns checks that Kimi-K2 cuts runs of more than 25,000 whitespace or
// non-whitespace characters before encoding, as tokenization_kimi.py does, and that
// other tiktoken files do not.
func TestKimiLongRuns(t *testing.T) {
	kimi, err := LoadDir(testutil.Fixture(t, "daulet/kimi-k2-instruct"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testutil.Fixture(t, "daulet/kimi-k2-instruct"), "tiktoken.model")
	b := kimi.b.(*tiktokenBackend)
	// Many short pieces (tiktoken is quadratic in a piece's length); 25,000 is not a
	// multiple of 7, so the cut lands inside a piece.
	a, sp := strings.Repeat("abcdef,", 30000/7+1)[:30000], strings.Repeat(" ", 26000)
	text := a + "xy" + "hi" + sp + "yo"
	// The runs are a…xyhi (30,004 non-space characters: cut after 25,000), then 26,000
	// spaces (cut after 25,000).
	parts := []string{a[:25000], a[25000:] + "xyhi" + sp[:25000], sp[25000:] + "yo"}
	if testutil.Short() {
		// A run of spaces is one piece, which tiktoken merges in quadratic time.
		text = a + "xyhi"
		parts = []string{a[:25000], a[25000:] + "xyhi"}
	}
	want := ttOracle(t, ttOracleReq{File: path, Special: b.special, PatStr: tiktokenPatternKimi, Texts: parts})
	var flat []int
	for _, ids := range want.IDs {
		flat = append(flat, ids...)
	}
	if got := kimi.Encode(text, false); !slices.Equal(got, flat) {
		t.Errorf("Encode(long runs) = %d ids, want %d (tiktoken on Kimi's pieces)", len(got), len(flat))
	}
	if slices.Equal(b.encodeText(nil, text), flat) {
		t.Errorf("the cut made no difference: the test text does not exercise it")
	}
	var pieces []string
	kimiChunks(text, func(s string) { pieces = append(pieces, s) })
	if !slices.Equal(pieces, parts) {
		t.Errorf("kimiChunks cut %d pieces, want %d", len(pieces), len(parts))
	}
}
