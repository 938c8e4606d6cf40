package tokenizer

import (
	"runtime"
	"sync"
)

// backend is what a tokenizer implementation provides. Implementations: the Hugging Face
// tokenizer.json pipeline (hf*.go), tiktoken ranks (tiktoken*.go) and, under the build tag
// hftokenizers, the cgo binding of Hugging Face's Rust library. All must be safe for
// concurrent use.
type backend interface {
	encode(text string, addSpecial bool) []int
	decode(ids []int, skipSpecial bool) string
	vocabSize() int
	baseVocabSize() int
	idToToken(id int) (string, bool)
	tokenToID(tok string) (int, bool)
	specialIDs() []int
	numSpecialTokensToAdd() int
}

// Tokenizer counts, encodes and decodes text exactly as the Hugging Face tokenizer it was
// loaded from, and renders the model's chat template. It is safe for concurrent use.
type Tokenizer struct {
	name   string // what the user asked for (built-in name, path, hub id)
	source string // where it was loaded from (file path or "builtin:NAME")
	digest string // hex sha256 of the files it was built from (see Fingerprint)
	b      backend
	chat   *chatConfig // chat template and special-token strings; nil if none
	base   int         // BaseVocabSize when it differs from the backend's (gpt2); 0 = the backend's
}

// Name returns the name the tokenizer was loaded by.
func (t *Tokenizer) Name() string { return t.name }

// Source returns the file or built-in the tokenizer was loaded from.
func (t *Tokenizer) Source() string { return t.source }

// Fingerprint returns a hex SHA-256 of the files the tokenizer was built from, so run
// manifests can say exactly which tokenizer counted.
func (t *Tokenizer) Fingerprint() string { return t.digest }

// Encode returns the token ids of text. With addSpecial, the post-processor's special
// tokens (BOS, [CLS]/[SEP], …) are added, as Hugging Face's encode(add_special_tokens=True).
func (t *Tokenizer) Encode(text string, addSpecial bool) []int { return t.b.encode(text, addSpecial) }

// Count returns len(Encode(text, addSpecial)).
// Backends that can count without keeping the ids do so, so memory stays bounded on huge
// inputs.
func (t *Tokenizer) Count(text string, addSpecial bool) int {
	if c, ok := t.b.(interface{ count(string, bool) int }); ok {
		return c.count(text, addSpecial)
	}
	return len(t.b.encode(text, addSpecial))
}

// Decode returns the text of ids, as Hugging Face's decode(ids, skip_special_tokens=skipSpecial):
// invalid UTF-8 becomes U+FFFD exactly where Hugging Face puts it. Unknown ids are skipped.
func (t *Tokenizer) Decode(ids []int, skipSpecial bool) string { return t.b.decode(ids, skipSpecial) }

// VocabSize returns the vocabulary size including added tokens (Hugging Face's
// get_vocab_size(with_added_tokens=True), i.e. len(tokenizer)).
func (t *Tokenizer) VocabSize() int { return t.b.vocabSize() }

// BaseVocabSize returns the vocabulary size without added tokens: Hugging Face's
// tokenizer.vocab_size (get_vocab_size(with_added_tokens=False)), the number of entries
// in the model's vocabulary. It is what vLLM's RandomDataset draws token ids from, and
// is at most VocabSize. For tiktoken encodings it is the number of mergeable tokens
// (special tokens are added tokens in Hugging Face's conversions), except for "gpt2",
// whose Hugging Face vocab.json also holds <|endoftext|>: 50257, as transformers reports.
func (t *Tokenizer) BaseVocabSize() int {
	if t.base > 0 {
		return t.base
	}
	return t.b.baseVocabSize()
}

// IDToToken returns the vocabulary string of id.
func (t *Tokenizer) IDToToken(id int) (string, bool) { return t.b.idToToken(id) }

// TokenToID returns the id of a vocabulary string.
func (t *Tokenizer) TokenToID(tok string) (int, bool) { return t.b.tokenToID(tok) }

// SpecialIDs returns the ids of all special tokens, ascending.
func (t *Tokenizer) SpecialIDs() []int { return t.b.specialIDs() }

// NumSpecialTokensToAdd returns how many tokens Encode(text, true) adds around a single
// sequence (transformers' num_special_tokens_to_add(pair=False)).
func (t *Tokenizer) NumSpecialTokensToAdd() int { return t.b.numSpecialTokensToAdd() }

// EncodeBatch encodes texts in parallel on up to GOMAXPROCS goroutines; out[i] is
// Encode(texts[i], addSpecial).
func (t *Tokenizer) EncodeBatch(texts []string, addSpecial bool) [][]int {
	out := make([][]int, len(texts))
	workers := min(runtime.GOMAXPROCS(0), len(texts))
	if workers <= 1 {
		for i, s := range texts {
			out[i] = t.b.encode(s, addSpecial)
		}
		return out
	}
	var wg sync.WaitGroup
	next := make(chan int, len(texts))
	for i := range texts {
		next <- i
	}
	close(next)
	for range workers {
		wg.Go(func() {
			for i := range next {
				out[i] = t.b.encode(texts[i], addSpecial)
			}
		})
	}
	wg.Wait()
	return out
}
