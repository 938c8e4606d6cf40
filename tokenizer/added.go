package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// addedToken is one entry of tokenizer.json's added_tokens.
type addedToken struct {
	content                    string
	singleWord, lstrip, rstrip bool
	normalized, special        bool
}

// addedVocab mirrors Hugging Face's AddedVocabulary: ids of added tokens, and the two
// leftmost-longest matchers that cut them out of the text before (non-normalized tokens)
// and after (normalized tokens) normalization.
type addedVocab struct {
	byContent map[string]int
	byID      map[int]addedToken
	special   map[string]bool
	raw       addedMatcher // tokens with normalized=false, matched on the input
	norm      addedMatcher // tokens with normalized=true, matched on normalized text
}

func newAddedVocab(toks []jsonAddedToken, m model, norm normalizer) *addedVocab {
	v := &addedVocab{
		byContent: map[string]int{},
		byID:      map[int]addedToken{},
		special:   map[string]bool{},
	}
	var specials, others []addedToken
	all := make([]addedToken, len(toks))
	for i, t := range toks {
		n := !t.Special
		if t.Normalized != nil {
			n = *t.Normalized
		}
		all[i] = addedToken{t.Content, t.SingleWord, t.LStrip, t.RStrip, n, t.Special}
	}
	for _, t := range all {
		if t.special && t.content != "" && !v.special[t.content] {
			specials = append(specials, t)
			v.special[t.content] = true
		}
	}
	nextID := m.vocabSize()
	existing := map[addedToken]bool{}
	for _, t := range all {
		if t.content == "" || existing[t] {
			continue
		}
		id, ok := v.byContent[t.content]
		if !ok {
			id, ok = m.tokenToID(t.content)
		}
		if !ok {
			id = nextID
			nextID++
		}
		v.byContent[t.content] = id
		v.byID[id] = t
		if !v.special[t.content] {
			others = append(others, t)
		}
		existing[t] = true
	}
	for _, t := range append(specials, others...) {
		id, ok := v.byContent[t.content]
		if !ok {
			id, _ = m.tokenToID(t.content)
		}
		if t.normalized {
			c := t.content
			if norm != nil {
				c = norm.normalize(c)
			}
			v.norm.add(c, id, t)
		} else {
			v.raw.add(t.content, id, t)
		}
	}
	return v
}

func (v *addedVocab) isSpecial(content string) bool { return v.special[content] }

// extract cuts added tokens out of text and normalizes the rest, calling emit in order with
// either an added token's id or a normalized piece (id -1).
func (v *addedVocab) extract(text string, norm normalizer, emit func(p piece, id int)) {
	v.raw.split(text, func(a, b, id int) {
		if id >= 0 {
			emit(piece{s: text[a:b]}, id)
			return
		}
		s := text[a:b]
		if s == "" {
			return
		}
		first := a == 0
		if norm != nil {
			if first {
				s, first = normalizeFirst(norm, s)
			} else {
				s = norm.normalize(s)
			}
		}
		v.norm.split(s, func(c, d, id int) {
			if c == d {
				return
			}
			emit(piece{s: s[c:d], first: first && c == 0}, id)
		})
	})
}

// addedMatcher finds added tokens leftmost-longest (as aho-corasick's MatchKind::
// LeftmostLongest) and applies their single_word / lstrip / rstrip rules.
type addedMatcher struct {
	nodes []trieNode
	first [256]bool // bytes that can start a token
	toks  []addedToken
}

type trieNode struct {
	edges []trieEdge
	tok   int32 // index into toks + 1; 0: none
	id    int
}

type trieEdge struct {
	b    byte
	next int32
}

func (m *addedMatcher) add(content string, id int, t addedToken) {
	if content == "" {
		return
	}
	if len(m.nodes) == 0 {
		m.nodes = append(m.nodes, trieNode{})
	}
	m.first[content[0]] = true
	n := int32(0)
	for i := 0; i < len(content); i++ {
		c := content[i]
		next := m.child(n, c)
		if next < 0 {
			next = int32(len(m.nodes))
			m.nodes = append(m.nodes, trieNode{})
			m.nodes[n].edges = append(m.nodes[n].edges, trieEdge{c, next})
		}
		n = next
	}
	if m.nodes[n].tok == 0 { // the first pattern wins among equal ones
		m.toks = append(m.toks, t)
		m.nodes[n].tok = int32(len(m.toks))
		m.nodes[n].id = id
	}
}

// child returns node n's child on byte c, or -1.
func (m *addedMatcher) child(n int32, c byte) int32 {
	for _, e := range m.nodes[n].edges {
		if e.b == c {
			return e.next
		}
	}
	return -1
}

// longest returns the end and node of the longest token starting at s[i:], or -1.
func (m *addedMatcher) longest(s string, i int) (end int, node int32) {
	end, node = -1, -1
	n := int32(0)
	for j := i; j < len(s); j++ {
		next := m.child(n, s[j])
		if next < 0 {
			break
		}
		n = next
		if m.nodes[n].tok != 0 {
			end, node = j+1, n
		}
	}
	return end, node
}

// split calls yield for consecutive ranges of s: added tokens (with their id) and the
// text between them (id -1), as Hugging Face's AddedVocabulary::find_matches.
func (m *addedMatcher) split(s string, yield func(a, b, id int)) {
	if len(m.nodes) == 0 {
		yield(0, len(s), -1)
		return
	}
	startOffset := 0
	for i := 0; i < len(s); {
		if !m.first[s[i]] {
			i++
			continue
		}
		end, node := m.longest(s, i)
		if end < 0 {
			i++
			continue
		}
		start, stop := i, end
		i = end // matches never overlap, whatever the rules below decide
		t := m.toks[m.nodes[node].tok-1]
		if t.singleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if t.lstrip {
			start = max(spaceLeftmostAtEnd(s[:start]), startOffset)
		}
		if t.rstrip {
			stop += spaceRightmostAtStart(s[stop:])
		}
		if startOffset < start {
			yield(startOffset, start, -1)
		}
		yield(start, stop, m.nodes[node].id)
		startOffset = stop
	}
	if startOffset != len(s) {
		yield(startOffset, len(s), -1)
	}
}

// isWordRune is the regex crate's Unicode \w (Hugging Face's tables).
func isWordRune(r rune) bool {
	if r < 0x80 {
		return (r|0x20 >= 'a' && r|0x20 <= 'z') || (r >= '0' && r <= '9') || r == '_'
	}
	return unicode.Is(rustWord, r)
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordRune(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordRune(r)
}

// spaceLeftmostAtEnd returns where the run of white space ending s begins.
func spaceLeftmostAtEnd(s string) int {
	i := len(s)
	for i > 0 {
		r, w := utf8.DecodeLastRuneInString(s[:i])
		if !isWhiteSpace(r) {
			break
		}
		i -= w
	}
	return i
}

// spaceRightmostAtStart returns the length of the run of white space starting s.
func spaceRightmostAtStart(s string) int {
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isWhiteSpace(r) {
			break
		}
		i += w
	}
	return i
}
