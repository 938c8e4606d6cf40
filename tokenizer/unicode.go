package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// rewriteUnicodeClasses adapts a split pattern written for Oniguruma (Hugging Face
// tokenizers) or fancy-regex (tiktoken) to regexp2's .NET dialect:
//   - \p{..} and \s classes are spelled out from Hugging Face's own Unicode tables
//     (unicode_tables.go), since Go's tables (which regexp2 uses) are a different
//     Unicode version;
//   - case-insensitive contractions: Oniguruma folds 's' and 'ſ' (U+017F) together,
//     regexp2 does not; the classes are spelled out;
//   - possessive quantifiers (X?+, X++, X*+), which .NET lacks, become atomic groups.
func rewriteUnicodeClasses(p string) string {
	p = strings.ReplaceAll(p, `(?i:'s|'t|'re|'ve|'m|'ll|'d)`, contractionsClass)
	p = strings.ReplaceAll(p, `'(?i:[sdmt]|ll|ve|re)`, `'(?:[sSſdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])`)
	return rewritePattern(p)
}

const contractionsClass = `(?:'[sSſ]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`

// classTables are the named classes rewritePattern spells out.
var classTables = map[string]**unicode.RangeTable{
	"L": &hfL, "N": &hfN, "P": &hfP, "S": &hfS, "M": &hfM, "Lu": &hfLu, "Ll": &hfLl,
	"Lt": &hfLt, "Lm": &hfLm, "Lo": &hfLo, "Nd": &hfNd,
}

// classBody returns the inside of a character class matching t (or its complement).
func classBody(t *unicode.RangeTable, negate bool) string {
	var b strings.Builder
	emit := func(lo, hi rune) {
		if lo > hi {
			return
		}
		fmt.Fprintf(&b, `\x{%x}`, lo)
		if hi > lo {
			fmt.Fprintf(&b, `-\x{%x}`, hi)
		}
	}
	next := rune(0)
	each := func(lo, hi rune) {
		if negate {
			emit(next, lo-1)
			next = hi + 1
		} else {
			emit(lo, hi)
		}
	}
	for _, r := range t.R16 {
		each(rune(r.Lo), rune(r.Hi))
	}
	for _, r := range t.R32 {
		each(rune(r.Lo), rune(r.Hi))
	}
	if negate {
		emit(next, unicode.MaxRune)
	}
	return b.String()
}

// rewritePattern replaces \p{X}, \P{X}, \s, \S and possessive quantifiers (see
// rewriteUnicodeClasses). It leaves the pattern alone if the tables are empty.
func rewritePattern(p string) string {
	if len(hfL.R16)+len(hfL.R32) == 0 {
		return p
	}
	var out strings.Builder
	inClass := false
	atomStart := -1 // start in out of the last atom, for possessive quantifiers
	groupStarts := []int{}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			d := p[i+1]
			start := out.Len()
			if (d == 'p' || d == 'P') && i+2 < len(p) && p[i+2] == '{' {
				end := strings.IndexByte(p[i:], '}')
				if end > 0 {
					if t, ok := classTables[p[i+3:i+end]]; ok {
						body := classBody(*t, d == 'P')
						if inClass {
							out.WriteString(body)
						} else {
							out.WriteString("[" + body + "]")
							atomStart = start
						}
						i += end + 1
						continue
					}
				}
			}
			if d == 's' || d == 'S' {
				body := classBody(hfSpace, d == 'S')
				if inClass {
					out.WriteString(body)
				} else {
					out.WriteString("[" + body + "]")
					atomStart = start
				}
				i += 2
				continue
			}
			out.WriteString(p[i : i+2])
			if !inClass {
				atomStart = start
			}
			i += 2
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
			out.WriteByte(c)
			i++
			continue
		case c == '[':
			atomStart = out.Len()
			inClass = true
			out.WriteByte(c)
			i++
			if i < len(p) && p[i] == '^' {
				out.WriteByte('^')
				i++
			}
			if i < len(p) && p[i] == ']' { // a literal ] first in a class
				out.WriteByte(']')
				i++
			}
			continue
		case c == '(':
			groupStarts = append(groupStarts, out.Len())
		case c == ')':
			if n := len(groupStarts); n > 0 {
				out.WriteByte(c)
				atomStart = groupStarts[n-1]
				groupStarts = groupStarts[:n-1]
				i++
				continue
			}
		case c == '?' || c == '*' || c == '+' || c == '}':
			if i+1 < len(p) && p[i+1] == '+' && atomStart >= 0 && !(c == '?' && i > 0 && p[i-1] == '(') {
				// possessive: wrap atom+quantifier in an atomic group
				cur := out.String()
				out.Reset()
				out.WriteString(cur[:atomStart] + "(?>" + cur[atomStart:] + string(c) + ")")
				i += 2
				continue
			}
			out.WriteByte(c)
			i++
			continue
		case c == '{':
			// a counted quantifier: copy through the closing brace
			if end := strings.IndexByte(p[i:], '}'); end > 0 {
				if i+end+1 < len(p) && p[i+end+1] == '+' && atomStart >= 0 {
					cur := out.String()
					out.Reset()
					out.WriteString(cur[:atomStart] + "(?>" + cur[atomStart:] + p[i:i+end+1] + ")")
					i += end + 2
					continue
				}
				out.WriteString(p[i : i+end+1])
				i += end + 1
				continue
			}
		}
		if !strings.ContainsRune("|)?*+", rune(c)) {
			atomStart = out.Len()
		}
		if c == '|' {
			atomStart = -1
		}
		out.WriteByte(c)
		i++
	}
	return out.String()
}

// mkTable builds a RangeTable from inclusive [lo, hi] pairs.
func mkTable(pairs []rune) *unicode.RangeTable {
	t := &unicode.RangeTable{}
	for i := 0; i+1 < len(pairs); i += 2 {
		lo, hi := pairs[i], pairs[i+1]
		if hi <= 0xFFFF {
			t.R16 = append(t.R16, unicode.Range16{Lo: uint16(lo), Hi: uint16(hi), Stride: 1})
			continue
		}
		if lo <= 0xFFFF {
			t.R16 = append(t.R16, unicode.Range16{Lo: uint16(lo), Hi: 0xFFFF, Stride: 1})
			lo = 0x10000
		}
		t.R32 = append(t.R32, unicode.Range32{Lo: uint32(lo), Hi: uint32(hi), Stride: 1})
	}
	for _, r := range t.R16 {
		if r.Hi <= unicode.MaxLatin1 {
			t.LatinOffset++
		}
	}
	return t
}

// Character class bits of Hugging Face's (Oniguruma's) tables, for the hand-written
// matchers.
const (
	cL uint16 = 1 << iota
	cN
	cP
	cS
	cM
	cLu
	cLl
	cLt
	cLm
	cLo
	cSpace
	cNd
)

var (
	classOnce  sync.Once
	classFlat  []uint16 // by rune, below classFlatN
	classFlatN = rune(0x40000)
)

func initClasses() {
	flat := make([]uint16, classFlatN)
	set := func(t *unicode.RangeTable, bit uint16) {
		for _, r := range t.R16 {
			for c := rune(r.Lo); c <= rune(r.Hi) && c < classFlatN; c++ {
				flat[c] |= bit
			}
		}
		for _, r := range t.R32 {
			for c := rune(r.Lo); c <= rune(r.Hi) && c < classFlatN; c++ {
				flat[c] |= bit
			}
		}
	}
	set(hfL, cL)
	set(hfN, cN)
	set(hfP, cP)
	set(hfS, cS)
	set(hfM, cM)
	set(hfLu, cLu)
	set(hfLl, cLl)
	set(hfLt, cLt)
	set(hfLm, cLm)
	set(hfLo, cLo)
	set(hfSpace, cSpace)
	set(hfNd, cNd)
	classFlat = flat
}

// runeClass returns the class bits of r.
func runeClass(r rune) uint16 {
	if r >= 0 && r < classFlatN {
		return classFlat[r]
	}
	var c uint16
	tabs := [...]struct {
		t   *unicode.RangeTable
		bit uint16
	}{{hfL, cL}, {hfN, cN}, {hfP, cP}, {hfS, cS}, {hfM, cM}, {hfLu, cLu}, {hfLl, cLl}, {hfLt, cLt}, {hfLm, cLm}, {hfLo, cLo}, {hfSpace, cSpace}, {hfNd, cNd}}
	for _, x := range tabs {
		if unicode.Is(x.t, r) {
			c |= x.bit
		}
	}
	return c
}

// toValidUTF8 returns s with every maximal ill-formed subsequence replaced by U+FFFD, as
// Rust's String::from_utf8_lossy and the WHATWG decoder (Node's Buffer.toString) do. This
// is the text Hugging Face sees when a binding receives bytes that are not UTF-8, and what
// its decoders produce from byte sequences. (Go's strings.ToValidUTF8 differs: it
// collapses runs of invalid bytes into one U+FFFD.)
func toValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(appendLossy(make([]byte, 0, len(s)+8), s))
}

// appendLossy appends the lossy UTF-8 conversion of s to dst (see toValidUTF8).
func appendLossy(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || w != 1 {
			dst = append(dst, s[i:i+w]...)
			i += w
			continue
		}
		// Invalid: skip the longest prefix of a well-formed sequence (Unicode's
		// "maximal subpart"), at least one byte.
		i += maximalSubpart(s[i:])
		dst = append(dst, "\uFFFD"...)
	}
	return dst
}

// maximalSubpart returns the length (>= 1) of the maximal subpart of an ill-formed
// sequence at the start of s (Unicode 15, §3.9, table 3-7).
func maximalSubpart(s string) int {
	c := s[0]
	var n int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		n = 2
	case c == 0xE0:
		n, lo = 3, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		n = 3
	case c == 0xED:
		n, hi = 3, 0x9F
	case c == 0xF0:
		n, lo = 4, 0x90
	case c >= 0xF1 && c <= 0xF3:
		n = 4
	case c == 0xF4:
		n, hi = 4, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i < n && i < len(s); i++ {
		b := s[i]
		if i == 1 {
			if b < lo || b > hi {
				return 1
			}
		} else if b < 0x80 || b > 0xBF {
			return i
		}
	}
	return i
}
