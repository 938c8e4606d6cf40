package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// rewriteUnicodeClasses adapts a split pattern written for Oniguruma (Hugging Face
// tokenizers) or fancy-regex (tiktoken) to regexp2's .NET dialect where the two differ:
//   - case-insensitive contractions: Oniguruma folds 's' and 'ſ' (U+017F) together,
//     regexp2 lowers runes with unicode.ToLower and does not; spell the classes out.
func rewriteUnicodeClasses(p string) string {
	p = strings.ReplaceAll(p, `(?i:'s|'t|'re|'ve|'m|'ll|'d)`, contractionsClass)
	return p
}

const contractionsClass = `(?:'[sSſ]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`

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

// isPunct reports general category P (Pc, Pd, Ps, Pe, Pi, Pf, Po).
func isPunct(r rune) bool { return unicode.IsPunct(r) }

// isOther reports general category C: Cc, Cf, Cs, Co and unassigned (Cn).
func isOther(r rune) bool {
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}
