package tokenizer

import (
	"bufio"
	"compress/bzip2"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// The built-in encodings, generated from tiktoken's npm package by builtin/gen.go.
//
//go:embed builtin/*.bpe.bz2
var builtinFS embed.FS

// builtinFiles maps each built-in name to its embedded file. gpt2 is r50k_base: the same
// ranks, pattern and <|endoftext|>, and so the same ids as Hugging Face's gpt2.
var builtinFiles = map[string]string{
	"gpt2":        "r50k_base",
	"r50k_base":   "r50k_base",
	"p50k_base":   "p50k_base",
	"p50k_edit":   "p50k_edit",
	"cl100k_base": "cl100k_base",
	"o200k_base":  "o200k_base",
}

// Builtins returns the names Builtin accepts, sorted.
func Builtins() []string {
	names := make([]string, 0, len(builtinFiles))
	for n := range builtinFiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// builtinCache holds one lazily decoded backend per embedded file, shared by every
// Tokenizer of that name.
var builtinCache = func() map[string]func() (*builtinLoaded, error) {
	m := map[string]func() (*builtinLoaded, error){}
	for _, f := range builtinFiles {
		if _, ok := m[f]; !ok {
			m[f] = sync.OnceValues(func() (*builtinLoaded, error) { return loadBuiltin(f) })
		}
	}
	return m
}()

type builtinLoaded struct {
	b      *tiktokenBackend
	digest string
}

// Builtin returns a built-in tokenizer that needs no files and no network: "gpt2"
// (identical ids to Hugging Face's gpt2 tokenizer.json), or one of OpenAI's tiktoken
// encodings "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base" (see
// [Builtins]). The vocabulary is decoded on first use (tens of milliseconds, a few tens of
// MB for o200k_base) and shared by all later calls.
//
// Special tokens written in the text (<|endoftext|> …) are encoded as special tokens, as
// tiktoken's encode(text, allowed_special="all") and Hugging Face's tokenizers do;
// addSpecial adds nothing for these encodings. Decode replaces invalid UTF-8 as tiktoken's
// decode (errors="replace") and Hugging Face's ByteLevel decoder do.
func Builtin(name string) (*Tokenizer, error) {
	f, ok := builtinFiles[name]
	if !ok {
		return nil, fmt.Errorf("tokenizer: unknown built-in %q (have %s)", name, strings.Join(Builtins(), ", "))
	}
	l, err := builtinCache[f]()
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{name: name, source: "builtin:" + name, digest: l.digest, b: l.b}
	if name == "gpt2" {
		t.base = l.b.vocabSize() // Hugging Face's gpt2 vocab.json includes <|endoftext|>: 50257
	}
	return t, nil
}

type builtinData struct {
	base    string
	pattern string
	special map[string]int
	nVocab  int
	tokens  [][]byte
}

func loadBuiltin(file string) (*builtinLoaded, error) {
	raw, err := builtinFS.ReadFile("builtin/" + file + ".bpe.bz2")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: built-in %s: %w", file, err)
	}
	sum := sha256.Sum256(raw)
	d, err := readBuiltin(file)
	if err != nil {
		return nil, err
	}
	b, err := newTiktokenBackend(d.tokens, d.pattern, d.special, d.nVocab)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: built-in %s: %w", file, err)
	}
	return &builtinLoaded{b: b, digest: hex.EncodeToString(sum[:])}, nil
}

// readBuiltin decodes an embedded file and, recursively, the base it extends.
func readBuiltin(file string) (*builtinData, error) {
	f, err := builtinFS.Open("builtin/" + file + ".bpe.bz2")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: built-in %s: %w", file, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(bzip2.NewReader(f), 1<<16)
	bad := func(err error) (*builtinData, error) {
		return nil, fmt.Errorf("tokenizer: built-in %s is corrupt: %w", file, err)
	}
	magic := make([]byte, 6)
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != "PGTT1\n" {
		return bad(errors.New("bad magic"))
	}
	uv := func() int {
		v, e := binary.ReadUvarint(r)
		if e != nil && err == nil {
			err = e
		}
		if v > 1<<30 && err == nil {
			err = errors.New("value out of range")
		}
		return int(v)
	}
	str := func() []byte {
		n := uv()
		if err != nil {
			return nil
		}
		s := make([]byte, n)
		if _, e := io.ReadFull(r, s); e != nil {
			err = e
		}
		return s
	}
	d := &builtinData{special: map[string]int{}}
	d.base = string(str())
	d.pattern = string(str())
	for range uv() {
		if err != nil {
			break
		}
		s := string(str())
		d.special[s] = uv()
	}
	d.nVocab = uv()
	if err != nil {
		return bad(err)
	}
	if d.base != "" {
		base, err := readBuiltin(d.base)
		if err != nil {
			return nil, err
		}
		d.tokens = base.tokens
	}
	// All tokens share one buffer: one allocation instead of one per token.
	type span struct{ rank, off, end int }
	var arena []byte
	var spans []span
	nseg := uv()
	for range nseg {
		first, n := uv(), uv()
		if err != nil || first+n > 1<<24 {
			return bad(fmt.Errorf("segment at rank %d: %v", first, err))
		}
		arena = slices.Grow(arena, 8*n) // tokens average under 8 bytes
		for i := range n {
			l := uv()
			if err != nil || l > 1<<16 {
				return bad(fmt.Errorf("rank %d: %v", first+i, err))
			}
			off := len(arena)
			arena = append(arena, make([]byte, l)...)
			if _, e := io.ReadFull(r, arena[off:]); e != nil {
				return bad(e)
			}
			spans = append(spans, span{first + i, off, off + l})
		}
	}
	if err != nil {
		return bad(err)
	}
	for _, sp := range spans {
		if len(d.tokens) <= sp.rank {
			d.tokens = append(d.tokens, make([][]byte, sp.rank+1-len(d.tokens))...)
		}
		d.tokens[sp.rank] = arena[sp.off:sp.end:sp.end]
	}
	return d, nil
}
