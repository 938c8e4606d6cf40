package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// preTokenizer is a tokenizer.json pre-tokenizer: it cuts a piece into smaller pieces
// (emitted in order; empty pieces are never emitted).
type preTokenizer interface {
	split(p piece, emit func(piece))
}

// behavior is Hugging Face's SplitDelimiterBehavior.
type behavior int

const (
	behRemoved behavior = iota
	behIsolated
	behMergedWithPrevious
	behMergedWithNext
	behContiguous
)

func parseBehavior(s string) (behavior, error) {
	switch s {
	case "Removed":
		return behRemoved, nil
	case "Isolated", "":
		return behIsolated, nil
	case "MergedWithPrevious":
		return behMergedWithPrevious, nil
	case "MergedWithNext":
		return behMergedWithNext, nil
	case "Contiguous":
		return behContiguous, nil
	}
	return 0, fmt.Errorf("unknown split behavior %q", s)
}

func buildPreTokenizer(raw json.RawMessage) (preTokenizer, error) {
	var c jsonComp
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "Sequence":
		var seq preSequence
		for _, r := range c.Pretokenizers {
			p, err := buildPreTokenizer(r)
			if err != nil {
				return nil, err
			}
			seq = append(seq, p)
		}
		return seq, nil
	case "Split":
		beh, err := parseBehavior(c.Behavior)
		if err != nil {
			return nil, err
		}
		if c.Pattern == nil {
			return nil, errors.New("pre-tokenizer Split: no pattern")
		}
		var m matcher
		switch {
		case c.Pattern.String != nil:
			m = literalMatcher(*c.Pattern.String)
		case c.Pattern.Regex != nil:
			if m, err = newMatcher(*c.Pattern.Regex); err != nil {
				return nil, err
			}
		default:
			return nil, errors.New("pre-tokenizer Split: the pattern is neither String nor Regex")
		}
		return &preSplit{m: m, beh: beh, invert: c.Invert}, nil
	case "ByteLevel":
		return &preByteLevel{addPrefixSpace: boolOr(c.AddPrefixSpace, true), useRegex: boolOr(c.UseRegex, true)}, nil
	case "Metaspace":
		rep := strOr(c.Replacement, "▁")
		if utf8.RuneCountInString(rep) != 1 {
			return nil, fmt.Errorf("pre-tokenizer Metaspace: replacement %q is not one character", rep)
		}
		scheme := strOr(c.PrependScheme, "always")
		if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
			if c.PrependScheme != nil && scheme != "never" {
				return nil, errors.New("pre-tokenizer Metaspace: add_prefix_space does not match the declared prepend_scheme")
			}
			scheme = "never"
		}
		switch scheme {
		case "always", "first", "never":
		default:
			return nil, fmt.Errorf("unknown Metaspace prepend_scheme %q", scheme)
		}
		return &preMetaspace{rep: rep, scheme: scheme, doSplit: boolOr(c.Split, true)}, nil
	case "Whitespace":
		return preWhitespace{}, nil
	case "WhitespaceSplit":
		return preFunc{isWhiteSpace, behRemoved}, nil
	case "BertPreTokenizer":
		return preSequence{preFunc{isWhiteSpace, behRemoved}, preFunc{isBertPunct, behIsolated}}, nil
	case "Digits":
		if c.IndividualDigits {
			return preFunc{isNumeric, behIsolated}, nil
		}
		return preFunc{isNumeric, behContiguous}, nil
	case "Punctuation":
		beh, err := parseBehavior(c.Behavior)
		if err != nil {
			return nil, err
		}
		return preFunc{isBertPunct, beh}, nil
	case "CharDelimiterSplit":
		d := strOr(c.Delimiter, "")
		r, n := utf8.DecodeRuneInString(d)
		if n == 0 || n != len(d) {
			return nil, fmt.Errorf("CharDelimiterSplit delimiter %q is not one character", d)
		}
		return preFunc{func(c rune) bool { return c == r }, behRemoved}, nil
	}
	return nil, errUnsupported{"pre_tokenizer", c.Type}
}

type preSequence []preTokenizer

func (q preSequence) split(p piece, emit func(piece)) {
	// One closure per stage per call, not per intermediate piece.
	next := emit
	for i := len(q) - 1; i >= 0; i-- {
		stage, out := q[i], next
		next = func(r piece) { stage.split(r, out) }
	}
	next(p)
}

// matcher yields the byte ranges of the matches of a pattern, in order.
type matcher interface {
	matches(s string, yield func(a, b int))
}

// newMatcher compiles a regex pattern to a matcher (fast hand-written one if known).
func newMatcher(pattern string) (matcher, error) {
	sp, err := newPatternSplitter(pattern)
	if err != nil {
		return nil, err
	}
	m, ok := sp.(matcher)
	if !ok {
		return nil, fmt.Errorf("tokenizer: splitter for %q has no byte offsets", pattern)
	}
	return m, nil
}

type literalMatcher string

func (l literalMatcher) matches(s string, yield func(a, b int)) {
	if l == "" {
		return
	}
	for i := 0; i <= len(s)-len(l); {
		j := strings.Index(s[i:], string(l))
		if j < 0 {
			return
		}
		yield(i+j, i+j+len(l))
		i += j + len(l)
	}
}

// seg is a part of a piece: a match of the delimiter pattern or the text between.
type seg struct {
	a, b  int
	match bool
}

// segments returns the match/non-match cover of s (as Hugging Face's Pattern::find_matches).
func segments(s string, m matcher, invert bool) []seg {
	var out []seg
	prev := 0
	m.matches(s, func(a, b int) {
		if prev != a {
			out = append(out, seg{prev, a, invert})
		}
		out = append(out, seg{a, b, !invert})
		prev = b
	})
	if prev != len(s) {
		out = append(out, seg{prev, len(s), invert})
	}
	return out
}

// applyBehavior turns segments into the pieces Hugging Face's NormalizedString::split
// keeps, and emits the non-empty ones.
func applyBehavior(p piece, segs []seg, beh behavior, emit func(piece)) {
	out := func(a, b int) {
		if a < b {
			emit(piece{s: p.s[a:b], first: p.first && a == 0})
		}
	}
	switch beh {
	case behIsolated:
		for _, g := range segs {
			out(g.a, g.b)
		}
	case behRemoved:
		for _, g := range segs {
			if !g.match {
				out(g.a, g.b)
			}
		}
	case behContiguous, behMergedWithPrevious:
		var acc []seg
		prev := false
		for _, g := range segs {
			merge := g.match == prev
			if beh == behMergedWithPrevious {
				merge = g.match && !prev
			}
			if merge && len(acc) > 0 {
				acc[len(acc)-1].b = g.b
			} else {
				acc = append(acc, seg{g.a, g.b, false})
			}
			prev = g.match
		}
		for _, g := range acc {
			out(g.a, g.b)
		}
	case behMergedWithNext:
		var acc []seg
		prev := false
		for i := len(segs) - 1; i >= 0; i-- {
			g := segs[i]
			if g.match && !prev && len(acc) > 0 {
				acc[len(acc)-1].a = g.a
			} else {
				acc = append(acc, seg{g.a, g.b, false})
			}
			prev = g.match
		}
		for i := len(acc) - 1; i >= 0; i-- {
			out(acc[i].a, acc[i].b)
		}
	}
}

// preSplit is the Split pre-tokenizer.
type preSplit struct {
	m      matcher
	beh    behavior
	invert bool
}

func (s *preSplit) split(p piece, emit func(piece)) {
	if s.beh == behIsolated {
		// Hot path: every match and every gap is a piece.
		prev := 0
		s.m.matches(p.s, func(a, b int) {
			if prev < a {
				emit(piece{s: p.s[prev:a], first: p.first && prev == 0})
			}
			if a < b {
				emit(piece{s: p.s[a:b], first: p.first && a == 0})
			}
			prev = b
		})
		if prev < len(p.s) {
			emit(piece{s: p.s[prev:], first: p.first && prev == 0})
		}
		return
	}
	applyBehavior(p, segments(p.s, s.m, s.invert), s.beh, emit)
}

// funcMatcher matches every single character for which f is true (Hugging Face's
// Pattern for Fn(char) -> bool: each character is its own match).
type funcMatcher func(rune) bool

func (f funcMatcher) matches(s string, yield func(a, b int)) {
	for i, r := range s {
		if f(r) {
			yield(i, i+utf8.RuneLen(r))
		}
	}
}

// preFunc splits on characters for which f is true.
type preFunc struct {
	f   func(rune) bool
	beh behavior
}

func (q preFunc) split(p piece, emit func(piece)) {
	applyBehavior(p, segments(p.s, funcMatcher(q.f), false), q.beh, emit)
}

// preWhitespace keeps runs of \w and runs of [^\w\s], dropping white space.
type preWhitespace struct{}

func (preWhitespace) split(p piece, emit func(piece)) {
	s := p.s
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if isWhiteSpace(r) {
			i += w
			continue
		}
		word := isWordRune(r)
		j := i + w
		for j < len(s) {
			r2, w2 := utf8.DecodeRuneInString(s[j:])
			if isWhiteSpace(r2) || isWordRune(r2) != word {
				break
			}
			j += w2
		}
		emit(piece{s: s[i:j], first: p.first && i == 0})
		i = j
	}
}

// preMetaspace replaces spaces by the replacement character, prepends it, and splits
// before each occurrence.
type preMetaspace struct {
	rep     string
	scheme  string
	doSplit bool
}

func (m *preMetaspace) split(p piece, emit func(piece)) {
	s := strings.ReplaceAll(p.s, " ", m.rep)
	switch m.scheme {
	case "always":
		if !strings.HasPrefix(s, m.rep) {
			s = m.rep + s
		}
	case "first":
		if !strings.HasPrefix(s, m.rep) && p.first {
			s = m.rep + s
		}
	}
	q := piece{s: s, first: p.first}
	if !m.doSplit {
		emit(q)
		return
	}
	applyBehavior(q, segments(s, literalMatcher(m.rep), false), behMergedWithNext, emit)
}

// preByteLevel is the ByteLevel pre-tokenizer: optional prefix space, GPT-2 regex split,
// then each byte mapped to a printable character. With raw set, the mapping is skipped
// because the model was converted to work on bytes (see bpeModel.enableRawBytes).
type preByteLevel struct {
	addPrefixSpace, useRegex bool
	raw                      bool
}

// gpt2Matcher is built on first use (it needs the Unicode class table).
var gpt2Matcher = sync.OnceValue(func() matcher { return mustMatcher(patGPT2) })

func mustMatcher(p string) matcher {
	m, err := newMatcher(p)
	if err != nil {
		panic(err)
	}
	return m
}

func (bl *preByteLevel) split(p piece, emit func(piece)) {
	if bl.addPrefixSpace && !strings.HasPrefix(p.s, " ") {
		p.s = " " + p.s
	}
	out := emit
	if !bl.raw {
		out = func(q piece) {
			q.s = byteLevelEncode(q.s)
			emit(q)
		}
	}
	if !bl.useRegex {
		out(p)
		return
	}
	prev := 0
	gpt2Matcher().matches(p.s, func(a, b int) {
		if prev < a {
			out(piece{s: p.s[prev:a], first: p.first && prev == 0})
		}
		if a < b {
			out(piece{s: p.s[a:b], first: p.first && a == 0})
		}
		prev = b
	})
	if prev < len(p.s) {
		out(piece{s: p.s[prev:], first: p.first && prev == 0})
	}
}

// byteToRune is GPT-2's reversible byte → printable character table.
var byteToRune, runeToByte = func() ([256]rune, map[rune]byte) {
	var t [256]rune
	inv := map[rune]byte{}
	n := rune(0)
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			t[b] = rune(b)
		} else {
			t[b] = 256 + n
			n++
		}
		inv[t[b]] = byte(b)
	}
	return t, inv
}()

func byteLevelEncode(s string) string {
	var b strings.Builder
	b.Grow(len(s) * 2)
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteToRune[s[i]])
	}
	return b.String()
}

func isWhiteSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return unicode.Is(rustWhiteSpace, r)
}

// isNumeric is Rust's char::is_numeric: Nd, Nl, No.
func isNumeric(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9'
	}
	return unicode.Is(rustNumeric, r)
}

// isBertPunct is ASCII punctuation or Unicode general category P (unicode_categories' tables).
func isBertPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return (r >= '!' && r <= '/') || (r >= ':' && r <= '@') || (r >= '[' && r <= '`') || (r >= '{' && r <= '~')
	}
	return unicode.Is(bertPunct, r)
}
