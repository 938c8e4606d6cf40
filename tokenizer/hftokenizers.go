//go:build hftokenizers

package tokenizer

import (
	"runtime"

	"github.com/daulet/tokenizers"
)

// This file adds the "hf" backend: Hugging Face's Rust tokenizers library through
// github.com/daulet/tokenizers (cgo). Build with -tags hftokenizers and link
// libtokenizers.a (see the README); select it with Options{Backend: "hf"} or
// PERFGATE_TOKENIZER_BACKEND=hf.

func init() { newRustBackend = newHFTokenizersBackend }

// rustBackend encodes and decodes with the Rust library. The binding has no vocabulary
// lookups, so those come from this package's own parse of the same tokenizer.json when
// it can parse it (vocab), else from single-id decodes and single-token encodes.
type rustBackend struct {
	t     *tokenizers.Tokenizer
	vocab backend // nil if the Go pipeline could not load the file
}

func newHFTokenizersBackend(data []byte, path string) (backend, error) {
	t, err := tokenizers.FromBytes(data)
	if err != nil {
		return nil, fmtErr(path, err)
	}
	b := &rustBackend{t: t}
	if v, err := newHFBackend(data, path); err == nil {
		b.vocab = v
	}
	runtime.AddCleanup(b, func(t *tokenizers.Tokenizer) { t.Close() }, t)
	return b, nil
}

func fmtErr(path string, err error) error {
	return &rustError{path: path, err: err}
}

type rustError struct {
	path string
	err  error
}

func (e *rustError) Error() string { return "tokenizer: " + e.path + ": hf backend: " + e.err.Error() }
func (e *rustError) Unwrap() error { return e.err }

func (b *rustBackend) encode(text string, addSpecial bool) []int {
	ids, _ := b.t.Encode(text, addSpecial)
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

func (b *rustBackend) decode(ids []int, skipSpecial bool) string {
	u := make([]uint32, 0, len(ids))
	n := b.vocabSize()
	for _, id := range ids {
		if id >= 0 && id < n { // unknown ids are skipped, as the Go backends do
			u = append(u, uint32(id))
		}
	}
	return b.t.Decode(u, skipSpecial)
}

func (b *rustBackend) vocabSize() int { return int(b.t.VocabSize()) }

// baseVocabSize comes from the Go parse of the same file: the binding only reports the
// size with added tokens, which is the fallback.
func (b *rustBackend) baseVocabSize() int {
	if b.vocab != nil {
		return b.vocab.baseVocabSize()
	}
	return b.vocabSize()
}

func (b *rustBackend) idToToken(id int) (string, bool) {
	if b.vocab != nil {
		return b.vocab.idToToken(id)
	}
	if id < 0 || id >= b.vocabSize() {
		return "", false
	}
	return b.t.Decode([]uint32{uint32(id)}, false), true
}

func (b *rustBackend) tokenToID(tok string) (int, bool) {
	if b.vocab != nil {
		return b.vocab.tokenToID(tok)
	}
	ids, _ := b.t.Encode(tok, false)
	if len(ids) != 1 {
		return 0, false
	}
	return int(ids[0]), true
}

func (b *rustBackend) specialIDs() []int {
	if b.vocab != nil {
		return b.vocab.specialIDs()
	}
	return nil
}

func (b *rustBackend) numSpecialTokensToAdd() int {
	ids, _ := b.t.Encode("", true)
	return len(ids)
}
