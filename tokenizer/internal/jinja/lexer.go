package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tData
	tBlockBegin
	tBlockEnd
	tVarBegin
	tVarEnd
	tName
	tString
	tInt
	tFloat
	tOp
)

type token struct {
	kind tokKind
	val  string // name, operator, decoded string literal, data text, number text
	pos  int    // byte offset in the normalized source
}

// Error is a template syntax or render error. Line and Col are 1-based positions in the
// template source (after newline normalization); they are 0 when unknown.
type Error struct {
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("jinja: line %d col %d: %s", e.Line, e.Col, e.Msg)
	}
	return "jinja: " + e.Msg
}

// normalizeSource does what jinja2's lexer does with keep_trailing_newline=False: turn
// "\r\n" and "\r" into "\n" and drop one final newline.
func normalizeSource(src string) string {
	if strings.IndexByte(src, '\r') >= 0 {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	return strings.TrimSuffix(src, "\n")
}

// pySplitlines is Python's str.splitlines() (no keepends).
func pySplitlines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			out = append(out, s[start:i])
			i += n
			start = i
			continue
		case '\r':
			out = append(out, s[start:i])
			i += n
			if i < len(s) && s[i] == '\n' {
				i++
			}
			start = i
			continue
		}
		i += n
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

type lexer struct {
	src  string
	pos  int
	toks []token
}

func (lx *lexer) errAt(pos int, format string, args ...any) *Error {
	line, col := lineCol(lx.src, pos)
	return &Error{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func lineCol(src string, pos int) (int, int) {
	if pos > len(src) {
		pos = len(src)
	}
	line := 1 + strings.Count(src[:pos], "\n")
	col := pos - strings.LastIndexByte(src[:pos], '\n')
	return line, col
}

func isSpace(r rune) bool { return pyIsSpace(r) }

func trimRightSpace(s string) string { return strings.TrimRightFunc(s, isSpace) }

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isSpace(r) {
			break
		}
		i += n
	}
	return i
}

// allSpace reports whether s is non-empty and entirely whitespace.
func allSpace(s string) bool {
	return s != "" && strings.TrimLeftFunc(s, isSpace) == ""
}

func lex(src string) ([]token, error) {
	lx := &lexer{src: src}
	for lx.pos < len(src) {
		start := lx.pos
		i := nextTagStart(src, start)
		if i < 0 {
			lx.toks = append(lx.toks, token{kind: tData, val: src[start:], pos: start})
			break
		}
		text := src[start:i]
		kind := src[i+1]
		mod := byte(0)
		if i+2 < len(src) && (src[i+2] == '-' || src[i+2] == '+') {
			mod = src[i+2]
		}
		switch {
		case mod == '-':
			text = trimRightSpace(text)
		case mod == '+' || kind == '{':
		default: // lstrip_blocks for {% and {#
			l := strings.LastIndexByte(text, '\n') + 1
			if (l > 0 || start == 0 || src[start-1] == '\n') && allSpace(text[l:]) {
				text = text[:l]
			}
		}
		if text != "" {
			lx.toks = append(lx.toks, token{kind: tData, val: text, pos: start})
		}
		p := i + 2
		if mod != 0 {
			p++
		}
		var err error
		switch kind {
		case '#':
			err = lx.comment(i, p)
		case '%':
			if raw, ok := isRawStart(src, p); ok {
				err = lx.raw(i, raw)
			} else {
				lx.toks = append(lx.toks, token{kind: tBlockBegin, pos: i})
				err = lx.tag(p, '%')
			}
		default:
			lx.toks = append(lx.toks, token{kind: tVarBegin, pos: i})
			err = lx.tag(p, '}')
		}
		if err != nil {
			return nil, err
		}
	}
	lx.toks = append(lx.toks, token{kind: tEOF, pos: len(src)})
	return lx.toks, nil
}

func nextTagStart(s string, from int) int {
	for {
		j := strings.IndexByte(s[from:], '{')
		if j < 0 || from+j+1 >= len(s) {
			return -1
		}
		j += from
		switch s[j+1] {
		case '{', '%', '#':
			return j
		}
		from = j + 1
	}
}

// afterEnd applies the end-tag whitespace rules: "-" strips all following whitespace,
// trim_blocks drops one newline after %} and #}, "+" keeps it.
func (lx *lexer) afterEnd(p int, mod byte, trim bool) int {
	switch {
	case mod == '-':
		return skipSpace(lx.src, p)
	case mod == '+':
		return p
	case trim && p < len(lx.src) && lx.src[p] == '\n':
		return p + 1
	}
	return p
}

func (lx *lexer) comment(start, p int) error {
	if p >= len(lx.src) { // jinja2 quirk: a "{#" ending the template is dropped silently
		lx.pos = len(lx.src)
		return nil
	}
	j := strings.Index(lx.src[p:], "#}")
	if j < 0 {
		return lx.errAt(start, "missing end of comment tag")
	}
	end := p + j
	mod := byte(0)
	if end > p && (lx.src[end-1] == '-' || lx.src[end-1] == '+') {
		mod = lx.src[end-1]
	}
	lx.pos = lx.afterEnd(end+2, mod, true)
	return nil
}

// isRawStart reports whether a block tag starting at p (after "{%" and modifier) is
// "raw %}", returning the position after the tag.
func isRawStart(s string, p int) (int, bool) {
	q := skipSpace(s, p)
	if !strings.HasPrefix(s[q:], "raw") {
		return 0, false
	}
	q = skipSpace(s, q+3)
	if strings.HasPrefix(s[q:], "-%}") {
		return skipSpace(s, q+3), true
	}
	if strings.HasPrefix(s[q:], "%}") {
		q += 2
		if q < len(s) && s[q] == '\n' {
			q++
		}
		return q, true
	}
	return 0, false
}

func (lx *lexer) raw(start, p int) error {
	s := lx.src
	for q := p; ; {
		j := strings.Index(s[q:], "{%")
		if j < 0 {
			return lx.errAt(start, "missing endraw")
		}
		j += q
		k := j + 2
		mod := byte(0)
		if k < len(s) && (s[k] == '-' || s[k] == '+') {
			mod = s[k]
			k++
		}
		k = skipSpace(s, k)
		if !strings.HasPrefix(s[k:], "endraw") {
			q = j + 2
			continue
		}
		k = skipSpace(s, k+6)
		emod := byte(0)
		if k < len(s) && (s[k] == '-' || s[k] == '+') {
			emod = s[k]
			k++
		}
		if !strings.HasPrefix(s[k:], "%}") {
			return lx.errAt(j, "malformed endraw tag")
		}
		text := s[p:j]
		if mod == '-' {
			text = trimRightSpace(text)
		} else if mod != '+' {
			l := strings.LastIndexByte(text, '\n') + 1
			if l > 0 && allSpace(text[l:]) {
				text = text[:l]
			}
		}
		if text != "" {
			lx.toks = append(lx.toks, token{kind: tData, val: text, pos: p})
		}
		lx.pos = lx.afterEnd(k+2, emod, true)
		return nil
	}
}

var ops3 = []string{"//", "**", "==", "!=", "<=", ">="}

// tag lexes expression tokens until the end delimiter (close is '%' or '}').
func (lx *lexer) tag(p int, close byte) error {
	s := lx.src
	depth := 0 // bracket nesting; end tags inside brackets are still ends in jinja, keep simple
	_ = depth
	for {
		p = skipSpace(s, p)
		if p >= len(s) {
			return lx.errAt(p, "unexpected end of template, expected end of tag")
		}
		// end of tag: "-%}", "+%}", "%}" (or with '}')
		if c := s[p]; c == '-' || c == '+' && close == '%' { // "+}}" is not an end in jinja2
			if p+2 < len(s) && s[p+1] == close && s[p+2] == '}' {
				kind := tBlockEnd
				if close == '}' {
					kind = tVarEnd
				}
				lx.toks = append(lx.toks, token{kind: kind, pos: p})
				lx.pos = lx.afterEnd(p+3, c, close == '%')
				return nil
			}
		}
		if s[p] == close && p+1 < len(s) && s[p+1] == '}' {
			kind := tBlockEnd
			if close == '}' {
				kind = tVarEnd
			}
			lx.toks = append(lx.toks, token{kind: kind, pos: p})
			lx.pos = lx.afterEnd(p+2, 0, close == '%')
			return nil
		}
		c := s[p]
		switch {
		case c == '_' || c < 0x80 && unicode.IsLetter(rune(c)):
			q := p + 1
			for q < len(s) && (s[q] == '_' || s[q] < 0x80 && (unicode.IsLetter(rune(s[q])) || unicode.IsDigit(rune(s[q])))) {
				q++
			}
			lx.toks = append(lx.toks, token{kind: tName, val: s[p:q], pos: p})
			p = q
		case c >= '0' && c <= '9':
			kind, q := lexNumber(s, p)
			lx.toks = append(lx.toks, token{kind: kind, val: strings.ReplaceAll(s[p:q], "_", ""), pos: p})
			p = q
		case c == '\'' || c == '"':
			v, q, err := lx.stringLit(p)
			if err != nil {
				return err
			}
			lx.toks = append(lx.toks, token{kind: tString, val: v, pos: p})
			p = q
		default:
			op := ""
			for _, o := range ops3 {
				if strings.HasPrefix(s[p:], o) {
					op = o
					break
				}
			}
			if op == "" {
				if strings.IndexByte("+-*/%~<>=.,:|()[]{}", c) < 0 {
					r, _ := utf8.DecodeRuneInString(s[p:])
					return lx.errAt(p, "unexpected char %q", r)
				}
				op = s[p : p+1]
			}
			lx.toks = append(lx.toks, token{kind: tOp, val: op, pos: p})
			p += len(op)
		}
	}
}

// stringLit decodes a Python-style string literal starting at the quote at p.
func (lx *lexer) stringLit(p int) (string, int, error) {
	s := lx.src
	q := s[p]
	var b strings.Builder
	i := p + 1
	for i < len(s) {
		c := s[i]
		if c == q {
			return b.String(), i + 1, nil
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		e := s[i+1]
		i += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		case '\'':
			b.WriteByte('\'')
		case '"':
			b.WriteByte('"')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for k := 0; k < 2 && i < len(s) && s[i] >= '0' && s[i] <= '7'; k++ {
				v = v*8 + int(s[i]-'0')
				i++
			}
			b.WriteRune(rune(v))
		case 'N':
			return "", 0, lx.errAt(i-2, "named unicode escapes (\\N{...}) are not supported")
		case '\n':
			// line continuation
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+n > len(s) {
				return "", 0, lx.errAt(i-2, "truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(s[i:i+n], 16, 32)
			if err != nil {
				return "", 0, lx.errAt(i-2, "bad \\%c escape", e)
			}
			b.WriteRune(rune(v))
			i += n
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return "", 0, lx.errAt(p, "unterminated string literal")
}

// digitRun matches (\d+_)*\d+ (or the same over another digit set) at i and returns its
// end, or i if there is none.
func digitRun(s string, i int, isDigit func(byte) bool) int {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
		if j+1 < len(s) && s[j] == '_' && isDigit(s[j+1]) {
			j++
		}
	}
	return j
}

func isDec(c byte) bool { return c >= '0' && c <= '9' }

// lexNumber lexes a number literal at p with jinja2's rules: float
// (\d+_)*\d+((\.(\d+_)*\d+)?e[+-]?(\d+_)*\d+|\.(\d+_)*\d+) (not right after a '.'),
// else integer 0b…|0o…|0x…|[1-9](_?\d)*|0(_?0)*.
func lexNumber(s string, p int) (tokKind, int) {
	afterDot := p > 0 && s[p-1] == '.'
	if !afterDot {
		m := digitRun(s, p, isDec)
		q := m
		frac := false
		if q+1 < len(s) && s[q] == '.' && isDec(s[q+1]) {
			q = digitRun(s, q+1, isDec)
			frac = true
		}
		if q < len(s) && (s[q] == 'e' || s[q] == 'E') {
			r := q + 1
			if r < len(s) && (s[r] == '+' || s[r] == '-') {
				r++
			}
			if r < len(s) && isDec(s[r]) {
				return tFloat, digitRun(s, r, isDec)
			}
		}
		if frac {
			return tFloat, q
		}
	}
	if s[p] == '0' && p+2 < len(s) {
		var set func(byte) bool
		switch s[p+1] | 0x20 {
		case 'b':
			set = func(c byte) bool { return c == '0' || c == '1' }
		case 'o':
			set = func(c byte) bool { return c >= '0' && c <= '7' }
		case 'x':
			set = func(c byte) bool { return isDec(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }
		}
		if set != nil {
			q := p + 2
			if q < len(s) && s[q] == '_' {
				q++
			}
			if q < len(s) && set(s[q]) {
				return tInt, digitRun(s, q, set)
			}
		}
	}
	if s[p] == '0' {
		q := p + 1
		for q < len(s) && (s[q] == '0' || s[q] == '_' && q+1 < len(s) && s[q+1] == '0') {
			q++
		}
		return tInt, q
	}
	return tInt, digitRun(s, p, isDec)
}
