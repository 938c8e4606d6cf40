package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

// Component coverage: real vocabularies (bert-base-uncased's WordPiece, Llama-3.1's BPE)
// with their pipeline components swapped for others, each variant checked against the
// oracle, which builds the same tokenizer from the same JSON.

func fixtureJSON(t *testing.T, rel string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(testutil.Fixture(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func js(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(fmt.Sprintf("bad JSON %s: %v", s, err))
	}
	return v
}

type variant struct {
	name string
	set  map[string]string // top-level key → JSON
	edit func(m map[string]any)
}

var bertVariants = []variant{
	{name: "nfkc-lowercase-whitespace", set: map[string]string{
		"normalizer":    `{"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"Lowercase"}]}`,
		"pre_tokenizer": `{"type":"Whitespace"}`}},
	{name: "nfd-stripaccents-whitespacesplit", set: map[string]string{
		"normalizer":    `{"type":"Sequence","normalizers":[{"type":"NFD"},{"type":"StripAccents"},{"type":"Lowercase"}]}`,
		"pre_tokenizer": `{"type":"WhitespaceSplit"}`}},
	{name: "strip-replace-punctuation", set: map[string]string{
		"normalizer":    `{"type":"Sequence","normalizers":[{"type":"Strip","strip_left":true,"strip_right":true},{"type":"Replace","pattern":{"Regex":"\\s+"},"content":" "},{"type":"Lowercase"}]}`,
		"pre_tokenizer": `{"type":"Sequence","pretokenizers":[{"type":"WhitespaceSplit"},{"type":"Punctuation","behavior":"Contiguous"}]}`}},
	{name: "metaspace-first", set: map[string]string{
		"normalizer":    `{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Lowercase"}]}`,
		"pre_tokenizer": `{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}`,
		"decoder":       `{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}`}},
	{name: "strip-metaspace-first", set: map[string]string{
		"normalizer":    `{"type":"Sequence","normalizers":[{"type":"Strip","strip_left":true,"strip_right":false},{"type":"Replace","pattern":{"Regex":"^x+"},"content":""},{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":true,"lowercase":true}]}`,
		"pre_tokenizer": `{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}`,
		"decoder":       `{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}`}},
	{name: "metaspace-never-nosplit", set: map[string]string{
		"normalizer":    `{"type":"NFKD"}`,
		"pre_tokenizer": `{"type":"Metaspace","replacement":"▁","prepend_scheme":"never","split":false}`}},
	{name: "digits-chardelimiter", set: map[string]string{
		"normalizer":    `{"type":"Lowercase"}`,
		"pre_tokenizer": `{"type":"Sequence","pretokenizers":[{"type":"WhitespaceSplit"},{"type":"Digits","individual_digits":true},{"type":"CharDelimiterSplit","delimiter":"-"},{"type":"Digits","individual_digits":false}]}`}},
	{name: "split-behaviors", set: map[string]string{
		"normalizer":     `{"type":"Lowercase"}`,
		"pre_tokenizer":  `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"String":" "},"behavior":"MergedWithNext","invert":false},{"type":"Split","pattern":{"Regex":"\\d+"},"behavior":"Contiguous","invert":true},{"type":"Split","pattern":{"Regex":"[aeiou]"},"behavior":"MergedWithPrevious","invert":false},{"type":"Split","pattern":{"String":"."},"behavior":"Removed","invert":false}]}`,
		"post_processor": `{"type":"BertProcessing","sep":["[SEP]",102],"cls":["[CLS]",101]}`}},
	{name: "roberta-decoders", set: map[string]string{
		"normalizer":     `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":false,"strip_accents":true,"lowercase":true}`,
		"post_processor": `{"type":"RobertaProcessing","sep":["[SEP]",102],"cls":["[CLS]",101],"trim_offsets":true,"add_prefix_space":false}`,
		"decoder":        `{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"##"},"content":""},{"type":"Strip","content":" ","start":1,"stop":1},{"type":"BPEDecoder","suffix":"</w>"},{"type":"Fuse"}]}`}},
	{name: "prepend-template", set: map[string]string{
		"normalizer":     `{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"x "},{"type":"Replace","pattern":{"String":"  "},"content":" "},{"type":"Lowercase"}]}`,
		"post_processor": `{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"SpecialToken":{"id":"[MASK]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}],"pair":[],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[101],"tokens":["[CLS]"]},"[SEP]":{"id":"[SEP]","ids":[102],"tokens":["[SEP]"]},"[MASK]":{"id":"[MASK]","ids":[103,103],"tokens":["[MASK]","[MASK]"]}}}`}},
	{name: "added-token-options", edit: func(m map[string]any) {
		m["added_tokens"] = append(m["added_tokens"].([]any),
			js(`{"id":30522,"content":"hello world","single_word":false,"lstrip":true,"rstrip":true,"normalized":true,"special":false}`),
			js(`{"id":30523,"content":"<tag>","single_word":true,"lstrip":false,"rstrip":false,"normalized":false,"special":true}`),
			js(`{"id":30524,"content":"ZZ","single_word":false,"lstrip":true,"rstrip":false,"normalized":false,"special":false}`),
			js(`{"id":30525,"content":"Cat","single_word":true,"lstrip":false,"rstrip":true,"normalized":true,"special":false}`),
			js(`{"id":2003,"content":"is","single_word":false,"lstrip":false,"rstrip":false,"normalized":true,"special":true}`))
	}},
}

var llamaVariants = []variant{
	{name: "bytelevel-gpt2-regex", set: map[string]string{
		"pre_tokenizer":  `{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}`,
		"post_processor": `{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}`}},
	{name: "merges-not-ignored-nfkc", set: map[string]string{
		"normalizer": `{"type":"NFKC"}`,
	}, edit: func(m map[string]any) { m["model"].(map[string]any)["ignore_merges"] = false }},
}

// variantTexts are the inputs for the component variants: the corpus plus cases aimed at
// the components (added-token options, digits, dashes, spaces).
func variantTexts(n int) []string {
	g := newCorpusGen(77, []string{"hello world", "<tag>", "ZZ", "Cat", "is", "[MASK]", "[CLS]"})
	texts := g.corpus(n, 0, 0)
	return append(texts, "  leading", "xxhello", "x", "\x01\x02abc", "\u0301abc", "́é", " \u0301a", "xx  y",
		"say hello world now", "  hello world  ", "x<tag>y", "a <tag> b", "ZZ top", "aZZ",
		"   ZZ", "Cat cat CAT", "Catalog Cat.", "this is it", "isis", "12-34-56 7-8", "a--b", "... .. .", "  ")
}

func runVariants(t *testing.T, rel string, vs []variant, n int) {
	texts := variantTexts(n)
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			m := fixtureJSON(t, rel)
			for k, s := range v.set {
				m[k] = js(s)
			}
			if v.edit != nil {
				v.edit(m)
			}
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			be, err := newHFBackend(data, v.name)
			if err != nil {
				t.Fatalf("newHFBackend(%s) error: %v", v.name, err)
			}
			b := be.(*hfBackend)
			dec := decodeCases(b, texts, 100, 3)
			want := runOracle(t, "", string(data), texts, dec)
			checkAgainstOracle(t, b, texts, dec, want)
		})
	}
}

func TestHFComponentsMatchOracle(t *testing.T) {
	n := 400
	if testutil.Short() {
		n = 100
	}
	t.Run("bert", func(t *testing.T) { runVariants(t, "daulet/bert-base-uncased.json", bertVariants, n) })
	if !testutil.Short() {
		t.Run("llama3.1", func(t *testing.T) { runVariants(t, relLlama31, llamaVariants, n) })
	}
}

// TestHFUnigramMatchesOracle builds a small Unigram model (no fixture ships one) with
// Metaspace and byte fallback and checks it against the oracle.
func TestHFUnigramMatchesOracle(t *testing.T) {
	vocab := [][2]any{{"<unk>", 0.0}, {"▁", -2.0}, {"<0xC3>", -9.0}, {"<0xA9>", -9.0}}
	words := strings.Fields("the of and to in is was for that on with as by at from it an be this which or are have not had but were they all one their been has there more when will would who so hello world token tokenizer tokeniz ation ization iz at ion ed ing er s e a o i u t n r l d h c m p")
	for i, w := range words {
		vocab = append(vocab, [2]any{"▁" + w, -3.0 - float64(i%17)/4})
		vocab = append(vocab, [2]any{w, -4.5 - float64(i%13)/3})
	}
	for _, c := range "abcdefghijklmnopqrstuvwxyz.,!?'" {
		vocab = append(vocab, [2]any{string(c), -7.0})
	}
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprintf("byte_fallback=%v", fallback), func(t *testing.T) {
			m := map[string]any{
				"version": "1.0", "truncation": nil, "padding": nil,
				"added_tokens":   []any{js(`{"id":0,"content":"<unk>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}`)},
				"normalizer":     js(`{"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"Lowercase"}]}`),
				"pre_tokenizer":  js(`{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}`),
				"post_processor": js(`{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"<unk>","type_id":0}}],"pair":[],"special_tokens":{"<unk>":{"id":"<unk>","ids":[0],"tokens":["<unk>"]}}}`),
				"decoder":        js(`{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]}`),
				"model":          map[string]any{"type": "Unigram", "unk_id": 0, "vocab": vocab, "byte_fallback": fallback},
			}
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			be, err := newHFBackend(data, "unigram.json")
			if err != nil {
				t.Fatal(err)
			}
			b := be.(*hfBackend)
			texts := variantTexts(300)
			texts = append(texts, "tokenization", "hello, world!", "the tokenizer was at it", "café é", "xyz qqq")
			dec := decodeCases(b, texts, 100, 4)
			want := runOracle(t, "", string(data), texts, dec)
			checkAgainstOracle(t, b, texts, dec, want)
		})
	}
}

func TestHFBadInput(t *testing.T) {
	good := `{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,"model":{"type":"WordLevel","vocab":{"a":0,"<unk>":1},"unk_token":"<unk>"}}`
	if _, err := newHFBackend([]byte(good), "good.json"); err != nil {
		t.Fatalf("newHFBackend(good) error: %v", err)
	}
	tests := []struct {
		name, json, want string
	}{
		{"truncated", good[:len(good)-3], "unexpected end of JSON input"},
		{"truncated inside a literal", good[:len(good)/2], "invalid tokenizer.json"},
		{"not json", "hello", "invalid tokenizer.json"},
		{"not an object", "[1,2]", "not a JSON object"},
		{"no model", `{"version":"1.0"}`, "has no model"},
		{"bad version", strings.Replace(good, `"1.0"`, `"2.0"`, 1), `unknown tokenizer version "2.0"`},
		{"unknown model", strings.Replace(good, `"WordLevel"`, `"Magic"`, 1), `unsupported model type "Magic"`},
		{"unknown normalizer", strings.Replace(good, `"normalizer":null`, `"normalizer":{"type":"Precompiled","precompiled_charsmap":"AA=="}`, 1), `unsupported normalizer type "Precompiled"`},
		{"unknown pre_tokenizer", strings.Replace(good, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"UnicodeScripts"}`, 1), `unsupported pre_tokenizer type "UnicodeScripts"`},
		{"unknown decoder", strings.Replace(good, `"decoder":null`, `"decoder":{"type":"CTC"}`, 1), `unsupported decoder type "CTC"`},
		{"unknown post_processor", strings.Replace(good, `"post_processor":null`, `"post_processor":{"type":"Magic"}`, 1), `unsupported post_processor type "Magic"`},
		{"nested unknown", strings.Replace(good, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Whitespace"},{"type":"FixedLength"}]}`, 1), `unsupported pre_tokenizer type "FixedLength"`},
		{"dropout", `{"model":{"type":"BPE","dropout":0.1,"vocab":{"a":0},"merges":[]}}`, "dropout"},
		{"merge not in vocab", `{"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":["a b"]}}`, `token "ab" is not in the vocab`},
		{"bad merge line", `{"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":["a b c"]}}`, "not two tokens"},
		{"bad vocab", `{"model":{"type":"BPE","vocab":[1,2],"merges":[]}}`, "BPE vocab"},
		{"bad regex", strings.Replace(good, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Split","pattern":{"Regex":"("},"behavior":"Isolated","invert":false}`, 1), "compile split pattern"},
		{"bad behavior", strings.Replace(good, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Split","pattern":{"String":" "},"behavior":"Sideways","invert":false}`, 1), `unknown split behavior "Sideways"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newHFBackend([]byte(tt.json), "/x/tokenizer.json")
			if err == nil {
				t.Fatalf("newHFBackend(%s) = nil error, want one containing %q", tt.name, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "/x/tokenizer.json") {
				t.Errorf("newHFBackend(%s) error = %q, want it to name the file and contain %q", tt.name, err, tt.want)
			}
		})
	}
	// Every prefix of a real file is an error, never a panic.
	data := []byte(good)
	for i := range data {
		if _, err := newHFBackend(data[:i], "p.json"); err == nil {
			t.Errorf("newHFBackend(prefix of %d bytes) = nil error", i)
		}
	}
}
