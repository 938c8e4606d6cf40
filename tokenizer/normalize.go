package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// normalizer is a tokenizer.json normalizer: a function of the text (offsets are not
// tracked: only ids matter here).
type normalizer interface {
	normalize(s string) string
}

func buildNormalizer(raw json.RawMessage) (normalizer, error) {
	var c jsonComp
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "Sequence":
		var seq normSequence
		for _, r := range c.Normalizers {
			n, err := buildNormalizer(r)
			if err != nil {
				return nil, err
			}
			seq = append(seq, n)
		}
		return seq, nil
	case "NFC":
		return normForm{norm.NFC}, nil
	case "NFD":
		return normForm{norm.NFD}, nil
	case "NFKC":
		return normForm{norm.NFKC}, nil
	case "NFKD":
		return normForm{norm.NFKD}, nil
	case "Lowercase":
		return normLowercase{}, nil
	case "Strip":
		return normStrip{left: boolOr(c.StripLeft, true), right: boolOr(c.StripRight, true)}, nil
	case "StripAccents":
		return normStripAccents{}, nil
	case "Prepend":
		if c.Prepend == nil {
			return nil, errors.New("normalizer Prepend: no prepend")
		}
		return normPrepend(*c.Prepend), nil
	case "Replace":
		content, err := jsonString(c.Content, "")
		if err != nil {
			return nil, fmt.Errorf("normalizer Replace: content: %w", err)
		}
		r, err := newReplacer(c.Pattern, content)
		if err != nil {
			return nil, err
		}
		return r, nil
	case "BertNormalizer":
		lower := boolOr(c.Lowercase, true)
		return normBert{
			clean:   boolOr(c.CleanText, true),
			chinese: boolOr(c.HandleChineseChars, true),
			strip:   boolOr(c.StripAccents, lower),
			lower:   lower,
		}, nil
	}
	return nil, errUnsupported{"normalizer", c.Type}
}

type normSequence []normalizer

func (q normSequence) normalize(s string) string {
	for _, n := range q {
		s = n.normalize(s)
	}
	return s
}

type normForm struct{ f norm.Form }

func (n normForm) normalize(s string) string { return normString(n.f, s) }

// cgj is U+034F COMBINING GRAPHEME JOINER, which golang.org/x/text/unicode/norm inserts
// after every 30 consecutive non-starters (the Stream-Safe Text Format of UAX #15), and
// then reorders and composes each 30-mark segment on its own. Rust's unicode-normalization
// (Hugging Face) does neither: it reorders whole runs.
const cgj = "\u034f"

// normString normalizes s as Hugging Face does: f.String, unless that had to insert
// joiners (a run of more than 30 combining marks, as in "Zalgo" text); then the text is
// normalized by the book: full decomposition, canonical ordering of whole runs, and for
// the composed forms canonical composition.
//
// Marks newer than Hugging Face's Unicode tables (hfStarters: Go gives them a combining
// class, HF does not) also take the by-the-book path, with class 0 for them.
func normString(f norm.Form, s string) string {
	out := f.String(s)
	decomp, keep := norm.NFD, hfKeepCanonical
	if f == norm.NFKC || f == norm.NFKD {
		decomp, keep = norm.NFKD, hfKeepCompat
	}
	composed := f == norm.NFC || f == norm.NFKC
	if (!strings.Contains(out, cgj) || strings.Contains(s, cgj)) && !hasHFStarter(s) && !hasRuneOf(s, keep) &&
		!(composed && hasRuneOf(out, hfKeepCanonical)) {
		return out
	}
	// 1. Full decomposition, rune by rune (one rune never needs a joiner), except for
	// the runes Hugging Face's tables do not decompose.
	var rs []rune
	for _, r := range s {
		if r >= 0xA0 && unicode.Is(keep, r) {
			rs = append(rs, r)
			continue
		}
		rs = append(rs, []rune(decomp.String(string(r)))...)
	}
	ccc := func(r rune) uint8 {
		if r >= 0x7fd && unicode.Is(hfStarters, r) {
			return 0
		}
		return norm.NFD.PropertiesString(string(r)).CCC()
	}
	// 2. Canonical ordering: stable sort of each run of non-starters by class.
	for i := 0; i < len(rs); {
		if ccc(rs[i]) == 0 {
			i++
			continue
		}
		j := i
		for j < len(rs) && ccc(rs[j]) != 0 {
			j++
		}
		run := rs[i:j]
		sort.SliceStable(run, func(a, b int) bool { return ccc(run[a]) < ccc(run[b]) })
		i = j
	}
	if f == norm.NFD || f == norm.NFKD {
		return string(rs)
	}
	// 3. Canonical composition.
	compose := func(a, b rune) (rune, bool) {
		c := []rune(norm.NFC.String(string(a) + string(b)))
		if len(c) == 1 && !unicode.Is(hfKeepCanonical, c[0]) { // HF does not know it
			return c[0], true
		}
		return 0, false
	}
	out2 := make([]rune, 0, len(rs))
	starter := -1
	last := uint8(0) // class of the last rune kept after the starter
	for _, r := range rs {
		c := ccc(r)
		if starter >= 0 && (last < c || (last == 0 && len(out2)-1 == starter)) {
			if x, ok := compose(out2[starter], r); ok {
				out2[starter] = x
				continue
			}
		}
		if c == 0 {
			starter = len(out2)
			last = 0
		} else {
			last = c
		}
		out2 = append(out2, r)
	}
	return string(out2)
}

// hasHFStarter reports whether s has a rune of hfStarters (all are above U+07FC).
func hasHFStarter(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xDF { // lead byte of U+07C0 and above
			for _, r := range s[i:] {
				if r >= 0x7fd && unicode.Is(hfStarters, r) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// hasRuneOf reports whether s has a rune of t (all of whose runes are >= U+00A0).
func hasRuneOf(s string, t *unicode.RangeTable) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xC2 {
			for _, r := range s[i:] {
				if r >= 0xA0 && unicode.Is(t, r) {
					return true
				}
			}
			return false
		}
	}
	return false
}

type normLowercase struct{}

func (normLowercase) normalize(s string) string { return lowercase(s) }

// lowercase is Rust's per-char to_lowercase: unicode.ToLower except for the runes in
// lowerExceptions (U+0130 becomes "i\u0307", Unicode version differences).
func lowercase(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if x, ok := lowerExceptions[r]; ok {
			b.WriteString(x)
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

type normStrip struct{ left, right bool }

func (n normStrip) normalize(s string) string {
	if n.left {
		s = strings.TrimLeftFunc(s, isWhiteSpace)
	}
	if n.right {
		s = strings.TrimRightFunc(s, isWhiteSpace)
	}
	return s
}

type normStripAccents struct{}

func (normStripAccents) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(combiningMark, r) {
			return -1
		}
		return r
	}, s)
}

type normPrepend string

func (p normPrepend) normalize(s string) string {
	if s == "" {
		return s
	}
	return string(p) + s
}

// replacer is the Replace normalizer and decoder: every match of a literal or regex pattern
// is replaced by content.
type replacer struct {
	lit     string
	re      patternSplitter // nil for a literal
	content string
}

func newReplacer(p *struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}, content string) (*replacer, error) {
	switch {
	case p == nil:
		return nil, errors.New("normalizer Replace: no pattern")
	case p.String != nil:
		return &replacer{lit: *p.String, content: content}, nil
	case p.Regex != nil:
		re, err := newPatternSplitter(*p.Regex)
		if err != nil {
			return nil, err
		}
		return &replacer{re: re, content: content}, nil
	}
	return nil, errors.New("normalizer Replace: the pattern is neither String nor Regex")
}

func (r *replacer) normalize(s string) string {
	if r.re == nil {
		if r.lit == "" {
			return s
		}
		return strings.ReplaceAll(s, r.lit, r.content)
	}
	var b strings.Builder
	pos := 0
	// Matches are substrings of s yielded in order; find each one's offset.
	r.re.split(s, func(m string) {
		i := strings.Index(s[pos:], m)
		if i < 0 || m == "" {
			return
		}
		b.WriteString(s[pos : pos+i])
		b.WriteString(r.content)
		pos += i + len(m)
	})
	b.WriteString(s[pos:])
	return b.String()
}

// normBert is BertNormalizer.
type normBert struct{ clean, chinese, strip, lower bool }

func isChineseChar(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

func (n normBert) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if n.clean {
			if unicode.Is(bertRemoved, r) {
				continue
			}
			if unicode.Is(bertToSpace, r) {
				r = ' '
			}
		}
		if n.chinese && isChineseChar(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	s = b.String()
	if n.strip {
		s = normString(norm.NFD, s)
		s = strings.Map(func(r rune) rune {
			if unicode.Is(bertMn, r) {
				return -1
			}
			return r
		}, s)
	}
	if n.lower {
		s = lowercase(s)
	}
	return s
}

// normalizeFirst normalizes the piece at the start of the input and reports whether its
// first character still comes from original offset 0 (Metaspace's prepend_scheme
// "first" looks at that): normalizers that delete leading characters (Strip,
// StripAccents, BertNormalizer's cleaning and accent stripping, Replace with "") move it.
func normalizeFirst(n normalizer, s string) (string, bool) {
	if seq, ok := n.(normSequence); ok {
		atZero := true
		for _, x := range seq {
			var z bool
			s, z = normalizeFirst(x, s)
			atZero = atZero && z
		}
		return s, atZero
	}
	out := n.normalize(s)
	if out == "" || s == "" {
		return out, true
	}
	r, _ := utf8.DecodeRuneInString(s)
	switch x := n.(type) {
	case normStrip:
		return out, !(x.left && isWhiteSpace(r))
	case normStripAccents:
		return out, !unicode.Is(combiningMark, r)
	case normBert:
		if x.clean && unicode.Is(bertRemoved, r) {
			return out, false
		}
		if x.strip {
			d, _ := utf8.DecodeRuneInString(normString(norm.NFD, string(r)))
			if unicode.Is(bertMn, d) {
				return out, false
			}
		}
	case *replacer:
		if x.content == "" {
			if x.re == nil {
				return out, !(x.lit != "" && strings.HasPrefix(s, x.lit))
			}
			atZero := true
			x.re.split(s, func(m string) {
				if m != "" && len(m) <= len(s) && unsafeSameStart(m, s) {
					atZero = false
				}
			})
			return out, atZero
		}
	}
	return out, true
}

// unsafeSameStart reports whether m is a substring of s starting at s's first byte.
func unsafeSameStart(m, s string) bool {
	return len(m) > 0 && len(s) > 0 && unsafe.StringData(m) == unsafe.StringData(s)
}
