package jsonscan

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// SyntaxError is malformed JSON at byte Offset of the input (of raw, for [Unescape]).
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return "jsonscan: " + e.Msg + " at offset " + strconv.Itoa(e.Offset)
}

// errAt returns a *SyntaxError; it is kept out of line so that the functions that
// return it stay small enough to inline.
//
//go:noinline
func errAt(off int, msg string) error { return &SyntaxError{Offset: off, Msg: msg} }

// space marks JSON's white space bytes.
var space = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// SkipWS returns the index of the first byte at or after i that is not JSON white space
// (space, tab, newline, carriage return), or len(b). It inlines, as it runs before
// every token, and the common case (compact JSON: no white space) is one compare.
func SkipWS(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	for i < len(b) && space[b[i]] {
		i++
	}
	return i
}

// strStop marks the bytes that end a run of plain string bytes: the quote and the
// backslash.
var strStop = [256]bool{'"': true, '\\': true}

// ScanString returns the index after the closing quote of the string whose opening
// quote is b[i], and whether it contains escapes; ok is false for an unterminated
// string. It is lenient: it does not check what follows a backslash, control
// characters or UTF-8 ([String] does). It inlines, as it runs for every key.
func ScanString(b []byte, i int) (end int, esc, ok bool) {
	j := i + 1
	for {
		for j < len(b) && !strStop[b[j]] {
			j++
		}
		if j >= len(b) {
			return 0, false, false
		}
		if b[j] == '"' {
			return j + 1, esc, true
		}
		esc = true
		j += 2
	}
}

// Plain reports whether raw, a string's bytes between its quotes, reads as itself: no
// backslash, no control character and valid UTF-8.
func Plain(raw []byte) bool {
	ascii := true
	for _, c := range raw {
		switch {
		case c == '\\' || c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return ascii || utf8.Valid(raw)
}

// PlainString returns the index after the string whose opening quote is b[i] when it
// is plain (see [Plain]): its value is then b[i+1:end-1] as it is. ok is false when
// b[i] is not a quote, for an unterminated string and for one that is not plain, which
// [String] decodes.
func PlainString(b []byte, i int) (end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, ascii || utf8.Valid(b[i+1:j])
		case c == '\\' || c < 0x20:
			return 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return 0, false
}

// String appends the value of the string whose opening quote is b[i] to dst, as
// encoding/json reads it (see [Decode]), and returns the index after its closing
// quote. A control character, an invalid escape and an unterminated string are
// errors.
func String(dst, b []byte, i int) ([]byte, int, error) {
	if i >= len(b) || b[i] != '"' {
		return dst, 0, errAt(i, "want a string")
	}
	end, _, ok := ScanString(b, i)
	if !ok {
		return dst, 0, errAt(i, "unterminated string")
	}
	dst, err := decode(dst, b[i+1:end-1], i+1)
	return dst, end, err
}

// Decode is [Unescape] that refuses control characters, as encoding/json does: raw, a
// string's bytes between its quotes, read as encoding/json reads them. Errors carry
// their offset in raw.
func Decode(dst, raw []byte) ([]byte, error) { return decode(dst, raw, 0) }

func decode(dst, raw []byte, base int) ([]byte, error) {
	for k, c := range raw {
		if c < 0x20 {
			return dst, errAt(base+k, "control character in string")
		}
	}
	return unescape(dst, raw, base)
}

// Unescape appends raw, a string's bytes between its quotes, to dst as the string it
// reads as: escapes decoded (a UTF-16 surrogate pair as one rune, a lone surrogate as
// U+FFFD) and each byte that is not UTF-8 as U+FFFD, as encoding/json does. An invalid
// escape is a *SyntaxError at its offset in raw. Control characters are copied as they
// are (encoding/json refuses them: see [String]).
func Unescape(dst, raw []byte) ([]byte, error) { return unescape(dst, raw, 0) }

// unescape is Unescape, with raw at offset base of the input for errors.
func unescape(dst, raw []byte, base int) ([]byte, error) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, raw[i:i+n]...)
				i += n - 1
			}
			continue
		}
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i >= len(raw) {
			return dst, errAt(base+i-1, "backslash at the end of a string")
		}
		switch raw[i] {
		case '"', '\\', '/':
			dst = append(dst, raw[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				return dst, errAt(base+i-1, `invalid \u escape`)
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(-1), false
				if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2, ok2 = hex4(raw, i+3)
				}
				if d := utf16.DecodeRune(r, r2); ok2 && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, errAt(base+i-1, "invalid escape")
		}
	}
	return dst, nil
}

// hex4 reads the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
