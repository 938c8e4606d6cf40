package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// decoder is a tokenizer.json decoder: Hugging Face's decode_chain (tokens in, tokens out;
// the final text is their concatenation).
type decoder interface {
	decodeChain(toks []string) []string
}

func buildDecoder(raw json.RawMessage) (decoder, error) {
	var c jsonComp
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "Sequence":
		var seq decSequence
		for _, r := range c.Decoders {
			d, err := buildDecoder(r)
			if err != nil {
				return nil, err
			}
			seq = append(seq, d)
		}
		return seq, nil
	case "ByteLevel":
		return decByteLevel{}, nil
	case "ByteFallback":
		return decByteFallback{}, nil
	case "Fuse":
		return decFuse{}, nil
	case "Strip":
		content, err := jsonString(c.Content, " ")
		if err != nil || utf8.RuneCountInString(content) != 1 {
			return nil, fmt.Errorf("decoder Strip: content %s is not one character", c.Content)
		}
		r, _ := utf8.DecodeRuneInString(content)
		d := decStrip{content: r}
		if c.Start != nil {
			d.start = *c.Start
		}
		if c.Stop != nil {
			d.stop = *c.Stop
		}
		return d, nil
	case "Replace":
		content, err := jsonString(c.Content, "")
		if err != nil {
			return nil, fmt.Errorf("decoder Replace: content: %w", err)
		}
		r, err := newReplacer(c.Pattern, content)
		if err != nil {
			return nil, err
		}
		return decReplace{r}, nil
	case "Metaspace":
		rep := strOr(c.Replacement, "▁")
		r, n := utf8.DecodeRuneInString(rep)
		if n == 0 || n != len(rep) {
			return nil, fmt.Errorf("decoder Metaspace: replacement %q is not one character", rep)
		}
		scheme := strOr(c.PrependScheme, "always")
		if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
			scheme = "never"
		}
		return decMetaspace{rep: r, prepend: scheme != "never"}, nil
	case "WordPiece":
		return decWordPiece{prefix: strOr(c.Prefix, "##"), cleanup: boolOr(c.Cleanup, true)}, nil
	case "BPEDecoder":
		return decBPE{suffix: strOr(c.Suffix, "</w>")}, nil
	}
	return nil, errUnsupported{"decoder", c.Type}
}

type decSequence []decoder

func (q decSequence) decodeChain(toks []string) []string {
	for _, d := range q {
		toks = d.decodeChain(toks)
	}
	return toks
}

// decByteLevel maps byte-level characters back to bytes (a token with any other character
// is taken as its UTF-8) and decodes the whole as lossy UTF-8.
type decByteLevel struct{}

func (decByteLevel) decodeChain(toks []string) []string {
	buf := make([]byte, 0, 64)
	for _, t := range toks {
		start := len(buf)
		ok := true
		for _, r := range t {
			b, in := runeToByteFast(r)
			if !in {
				ok = false
				break
			}
			buf = append(buf, b)
		}
		if !ok {
			buf = append(buf[:start], t...)
		}
	}
	return []string{string(appendLossy(nil, string(buf)))}
}

// runeToByteFast inverts byteToRune.
func runeToByteFast(r rune) (byte, bool) {
	if r < 256 && byteToRune[r] == r {
		return byte(r), true
	}
	if r >= 256 && r < 256+68 {
		b, ok := runeToByte[r]
		return b, ok
	}
	return 0, false
}

// decByteFallback turns runs of <0xXX> tokens into text; an invalid run becomes one
// U+FFFD per byte.
type decByteFallback struct{}

func fallbackByte(t string) (byte, bool) {
	if len(t) != 6 || !strings.HasPrefix(t, "<0x") || t[5] != '>' {
		return 0, false
	}
	var v byte
	for _, c := range []byte(t[3:5]) {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= c - '0'
		case c >= 'a' && c <= 'f':
			v |= c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v |= c - 'A' + 10
		default:
			return 0, false
		}
	}
	return v, true
}

func (decByteFallback) decodeChain(toks []string) []string {
	out := make([]string, 0, len(toks))
	var pending []byte
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if utf8.Valid(pending) {
			out = append(out, string(pending))
		} else {
			for range pending {
				out = append(out, "\uFFFD")
			}
		}
		pending = pending[:0]
	}
	for _, t := range toks {
		if b, ok := fallbackByte(t); ok {
			pending = append(pending, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

type decFuse struct{}

func (decFuse) decodeChain(toks []string) []string { return []string{strings.Join(toks, "")} }

// decStrip removes up to start leading and stop trailing content characters per token.
type decStrip struct {
	content     rune
	start, stop int
}

func (d decStrip) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		rs := []rune(t)
		a := 0
		for k := 0; k < d.start && k < len(rs); k++ {
			if rs[k] != d.content {
				break
			}
			a = k + 1
		}
		b := len(rs)
		for k := 0; k < d.stop && k < len(rs); k++ {
			idx := len(rs) - k - 1
			if rs[idx] != d.content {
				break
			}
			b = idx
		}
		if a > b {
			a = b
		}
		out[i] = string(rs[a:b])
	}
	return out
}

type decReplace struct{ r *replacer }

func (d decReplace) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = d.r.normalize(t)
	}
	return out
}

// decMetaspace turns the replacement character back into spaces, dropping it in the first
// token when a prefix was prepended.
type decMetaspace struct {
	rep     rune
	prepend bool
}

func (d decMetaspace) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		var b strings.Builder
		for _, r := range t {
			if r == d.rep {
				if i == 0 && d.prepend {
					continue
				}
				r = ' '
			}
			b.WriteRune(r)
		}
		out[i] = b.String()
	}
	return out
}

type decWordPiece struct {
	prefix  string
	cleanup bool
}

func (d decWordPiece) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		if i != 0 {
			if rest, ok := strings.CutPrefix(t, d.prefix); ok {
				t = rest
			} else {
				t = " " + t
			}
		}
		if d.cleanup {
			t = wordPieceCleanup(t)
		}
		out[i] = t
	}
	return out
}

var wordPieceCleanupReplacer = []string{" .", ".", " ?", "?", " !", "!", " ,", ",", " ' ", "'", " n't", "n't", " 'm", "'m", " do not", " don't", " 's", "'s", " 've", "'ve", " 're", "'re"}

func wordPieceCleanup(s string) string {
	for i := 0; i < len(wordPieceCleanupReplacer); i += 2 {
		s = strings.ReplaceAll(s, wordPieceCleanupReplacer[i], wordPieceCleanupReplacer[i+1])
	}
	return s
}

type decBPE struct{ suffix string }

func (d decBPE) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		rep := " "
		if i == len(toks)-1 {
			rep = ""
		}
		out[i] = strings.ReplaceAll(t, d.suffix, rep)
	}
	return out
}
