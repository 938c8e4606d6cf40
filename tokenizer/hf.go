package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
)

// hfBackend is the Hugging Face tokenizer.json pipeline: added tokens, normalizer,
// pre-tokenizer, model, post-processor and decoder, each exact to the Rust `tokenizers`
// crate (v0.22). It is immutable after construction except for the model's internal
// cache, which is safe for concurrent use.
type hfBackend struct {
	path  string
	added *addedVocab
	norm  normalizer   // nil: none
	pre   preTokenizer // nil: none
	model model
	post  postProcessor // nil: none
	dec   decoder       // nil: tokens joined by " "

	vocabN   int
	specials []int
}

// jsonComp is any pipeline component of tokenizer.json; which fields matter depends on Type.
type jsonComp struct {
	Type string `json:"type"`

	Normalizers   []json.RawMessage `json:"normalizers"`
	Pretokenizers []json.RawMessage `json:"pretokenizers"`
	Processors    []json.RawMessage `json:"processors"`
	Decoders      []json.RawMessage `json:"decoders"`

	Pattern *struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	} `json:"pattern"`
	Content  json.RawMessage `json:"content"`
	Prepend  *string         `json:"prepend"`
	Behavior string          `json:"behavior"`
	Invert   bool            `json:"invert"`

	AddPrefixSpace *bool   `json:"add_prefix_space"`
	TrimOffsets    *bool   `json:"trim_offsets"`
	UseRegex       *bool   `json:"use_regex"`
	Replacement    *string `json:"replacement"`
	PrependScheme  *string `json:"prepend_scheme"`
	Split          *bool   `json:"split"`

	// BertNormalizer
	CleanText          *bool `json:"clean_text"`
	HandleChineseChars *bool `json:"handle_chinese_chars"`
	StripAccents       *bool `json:"strip_accents"`
	Lowercase          *bool `json:"lowercase"`
	// Strip normalizer
	StripLeft  *bool `json:"strip_left"`
	StripRight *bool `json:"strip_right"`
	// Strip decoder
	Start *int `json:"start"`
	Stop  *int `json:"stop"`
	// Digits
	IndividualDigits bool `json:"individual_digits"`
	// CharDelimiterSplit
	Delimiter *string `json:"delimiter"`
	// Precompiled
	PrecompiledCharsmap *string `json:"precompiled_charsmap"`
	// decoders
	Prefix  *string `json:"prefix"`
	Cleanup *bool   `json:"cleanup"`
	Suffix  *string `json:"suffix"`
	// post-processors
	Single        []json.RawMessage `json:"single"`
	Pair          json.RawMessage   `json:"pair"`
	SpecialTokens map[string]struct {
		ID     string   `json:"id"`
		IDs    []int    `json:"ids"`
		Tokens []string `json:"tokens"`
	} `json:"special_tokens"`
	Sep json.RawMessage `json:"sep"`
	Cls json.RawMessage `json:"cls"`
}

type jsonAddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

type jsonTokenizer struct {
	Version       string           `json:"version"`
	AddedTokens   []jsonAddedToken `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	Model         json.RawMessage  `json:"model"`
	PostProcessor json.RawMessage  `json:"post_processor"`
	Decoder       json.RawMessage  `json:"decoder"`
}

// errUnsupported reports a component type this package does not implement.
type errUnsupported struct{ kind, typ string }

func (e errUnsupported) Error() string {
	return fmt.Sprintf("unsupported %s type %q", e.kind, e.typ)
}

func isNull(m json.RawMessage) bool {
	m = bytes.TrimSpace(m)
	return len(m) == 0 || string(m) == "null"
}

// newHFBackend builds a backend from the contents of a tokenizer.json; path names the
// file in errors. Truncation and padding settings are ignored, as transformers ignores
// them unless asked.
func newHFBackend(tokenizerJSON []byte, path string) (backend, error) {
	b, err := buildHF(tokenizerJSON)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	b.path = path
	return b, nil
}

func buildHF(data []byte) (*hfBackend, error) {
	var j jsonTokenizer
	fields, modelFields, err := jsonFieldsNest(data, "model")
	if err != nil {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("invalid tokenizer.json: %w", err)
		}
		return nil, errors.New("invalid tokenizer.json: not a JSON object")
	}
	if err := unmarshalWithout(fields, &j, "model"); err != nil {
		return nil, fmt.Errorf("invalid tokenizer.json: %w", err)
	}
	j.Model = fields["model"]
	if j.Version != "" && j.Version != "1.0" {
		return nil, fmt.Errorf("unknown tokenizer version %q", j.Version)
	}
	if isNull(j.Model) {
		return nil, errors.New("tokenizer.json has no model")
	}
	b := &hfBackend{}
	if !isNull(j.Normalizer) {
		if b.norm, err = buildNormalizer(j.Normalizer); err != nil {
			return nil, fmt.Errorf("normalizer: %w", err)
		}
	}
	if !isNull(j.PreTokenizer) {
		if b.pre, err = buildPreTokenizer(j.PreTokenizer); err != nil {
			return nil, fmt.Errorf("pre_tokenizer: %w", err)
		}
	}
	if b.model, err = buildModel(j.Model, modelFields); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if !isNull(j.Decoder) {
		if b.dec, err = buildDecoder(j.Decoder); err != nil {
			return nil, fmt.Errorf("decoder: %w", err)
		}
	}
	b.added = newAddedVocab(j.AddedTokens, b.model, b.norm)
	if !isNull(j.PostProcessor) {
		if b.post, err = buildPostProcessor(j.PostProcessor, b); err != nil {
			return nil, fmt.Errorf("post_processor: %w", err)
		}
	}
	b.optimize()

	// get_vocab_size(with_added_tokens=True) counts the distinct strings of the model's
	// vocabulary and the added tokens.
	b.vocabN = b.model.vocabSize()
	for tok := range b.added.byContent {
		if _, ok := b.model.tokenToID(tok); !ok {
			b.vocabN++
		}
	}
	for tok := range b.added.special {
		if id, ok := b.tokenToID(tok); ok {
			b.specials = append(b.specials, id)
		}
	}
	sort.Ints(b.specials)
	b.specials = slices.Compact(b.specials)
	return b, nil
}

// optimize switches to faster equivalent paths where the pipeline allows: a byte-level
// BPE whose pre-tokenizer ends with ByteLevel works on raw bytes, skipping the byte→char
// mapping.
func (b *hfBackend) optimize() {
	bpe, ok := b.model.(*bpeModel)
	if !ok || bpe.prefix != "" || bpe.suffix != "" {
		return
	}
	last := b.pre
	if seq, ok := last.(preSequence); ok && len(seq) > 0 {
		last = seq[len(seq)-1]
	}
	bl, ok := last.(*preByteLevel)
	if !ok {
		return
	}
	if bpe.enableRawBytes() {
		bl.raw = true
	}
}

func (b *hfBackend) vocabSize() int { return b.vocabN }

// baseVocabSize is the model's own vocabulary (added tokens not in it left out), as
// Hugging Face's get_vocab_size(false).
func (b *hfBackend) baseVocabSize() int { return b.model.vocabSize() }

func (b *hfBackend) idToToken(id int) (string, bool) {
	if t, ok := b.added.byID[id]; ok {
		return t.content, true
	}
	return b.model.idToToken(id)
}

func (b *hfBackend) tokenToID(tok string) (int, bool) {
	if id, ok := b.added.byContent[tok]; ok {
		return id, true
	}
	return b.model.tokenToID(tok)
}

func (b *hfBackend) specialIDs() []int { return slices.Clone(b.specials) }

func (b *hfBackend) numSpecialTokensToAdd() int {
	if b.post == nil {
		return 0
	}
	return b.post.added()
}

// encode runs the pipeline. Invalid UTF-8 in text is first replaced as the Python and
// Node bindings do (see toValidUTF8).
func (b *hfBackend) encode(text string, addSpecial bool) []int {
	text = toValidUTF8(text)
	ids := make([]int, 0, len(text)/4+4)
	b.added.extract(text, b.norm, func(p piece, id int) {
		if id >= 0 {
			ids = append(ids, id)
			return
		}
		if b.pre == nil {
			ids = b.model.tokenize(p.s, ids)
			return
		}
		b.pre.split(p, func(q piece) {
			ids = b.model.tokenize(q.s, ids)
		})
	})
	if b.post != nil {
		ids = b.post.process(ids, addSpecial)
	}
	return ids
}

// count returns len(encode(text, addSpecial)) without keeping the ids: memory stays
// bounded by the longest piece, however long text is. (Tokenizer.Count may use it through
// an interface check: `if c, ok := t.b.(interface{ count(string, bool) int }); ok`.)
func (b *hfBackend) count(text string, addSpecial bool) int {
	text = toValidUTF8(text)
	n := 0
	var scratch []int
	b.added.extract(text, b.norm, func(p piece, id int) {
		if id >= 0 {
			n++
			return
		}
		if b.pre == nil {
			scratch = b.model.tokenize(p.s, scratch[:0])
			n += len(scratch)
			return
		}
		b.pre.split(p, func(q piece) {
			scratch = b.model.tokenize(q.s, scratch[:0])
			n += len(scratch)
		})
	})
	if addSpecial {
		n += b.numSpecialTokensToAdd()
	}
	return n
}

// decode maps ids to tokens (skipping unknown ids and, if asked, special tokens) and runs
// the decoder.
func (b *hfBackend) decode(ids []int, skipSpecial bool) string {
	toks := make([]string, 0, len(ids))
	for _, id := range ids {
		t, ok := b.idToToken(id)
		if !ok {
			continue
		}
		if skipSpecial && b.added.isSpecial(t) {
			continue
		}
		toks = append(toks, t)
	}
	if b.dec == nil {
		return joinStrings(toks, " ")
	}
	return joinStrings(b.dec.decodeChain(toks), "")
}

func joinStrings(s []string, sep string) string {
	n := 0
	for _, x := range s {
		n += len(x) + len(sep)
	}
	buf := make([]byte, 0, n)
	for i, x := range s {
		if i > 0 {
			buf = append(buf, sep...)
		}
		buf = append(buf, x...)
	}
	return string(buf)
}

// piece is a part of the input on its way through the pipeline. first reports whether it
// begins at the start of the original input (Metaspace's prepend_scheme "first").
type piece struct {
	s     string
	first bool
}

// jsonString decodes a JSON string (or returns def if m is null or absent).
func jsonString(m json.RawMessage, def string) (string, error) {
	if isNull(m) {
		return def, nil
	}
	var s string
	if err := json.Unmarshal(m, &s); err != nil {
		return "", err
	}
	return s, nil
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

func strOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}
