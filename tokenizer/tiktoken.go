package tokenizer

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// tiktokenBackend is a byte-pair encoder over tiktoken-style mergeable ranks: each token is
// a byte string whose rank is its id, and a piece is encoded by repeatedly merging the
// adjacent pair whose concatenation has the lowest rank (leftmost on ties), exactly as
// OpenAI's tiktoken does. It serves the built-in encodings and *.tiktoken / tiktoken.model
// files.
//
// Special tokens are always recognised in the text (tiktoken's allowed_special="all"),
// which is also how a Hugging Face tokenizer.json treats its special added tokens; the
// longest special token starting at the leftmost position wins.
type tiktokenBackend struct {
	ranks   map[string]int // token bytes → rank (= id)
	tokens  [][]byte       // id → bytes; nil where the id is not a mergeable token
	special map[string]int // special token text → id
	specIDs map[int]string // id → special (or added) token text
	plain   map[int]bool   // added tokens that are not special: kept by Decode(…, true)
	sorted  []int          // special ids ascending (added tokens in plain excluded)
	split   patternSplitter
	nVocab  int
	// specFirst marks the bytes that start a special token, to skip quickly past text
	// that cannot contain one.
	specFirst [256]bool
	specByLen []string  // special tokens, longest first
	bos       []int     // ids Encode(…, true) puts in front; none for the OpenAI encodings
	cache     wordCache // pieces of more than one token → their ids
	// kimiRuns makes encode cut the text as Kimi's TikTokenTokenizer.encode does before
	// calling tiktoken: into 400,000-character chunks, then wherever a run of
	// whitespace or of non-whitespace exceeds 25,000 characters.
	kimiRuns bool
}

// newTiktokenBackend builds a backend from tokens in rank order (tokens[i] has rank i; a
// nil entry is an unused rank), the split pattern and the special tokens. nVocab is the
// vocabulary size, or 0 for max id + 1.
func newTiktokenBackend(tokens [][]byte, pattern string, special map[string]int, nVocab int) (*tiktokenBackend, error) {
	sp, err := tiktokenSplitter(pattern)
	if err != nil {
		return nil, err
	}
	b := &tiktokenBackend{
		ranks:   make(map[string]int, len(tokens)),
		tokens:  tokens,
		special: special,
		specIDs: make(map[int]string, len(special)),
		split:   sp,
	}
	maxID := len(tokens) - 1
	for id, t := range tokens {
		if t == nil {
			continue
		}
		// The key shares t's bytes, which are never modified after loading.
		k := unsafe.String(unsafe.SliceData(t), len(t))
		if _, dup := b.ranks[k]; dup {
			return nil, fmt.Errorf("tokenizer: tiktoken rank %d: token %q appears twice", id, t)
		}
		b.ranks[k] = id
	}
	for s, id := range special {
		if s == "" {
			return nil, fmt.Errorf("tokenizer: empty special token (id %d)", id)
		}
		b.specIDs[id] = s
		b.sorted = append(b.sorted, id)
		b.specFirst[s[0]] = true
		b.specByLen = append(b.specByLen, s)
		maxID = max(maxID, id)
	}
	sortInts(b.sorted)
	slices.SortFunc(b.specByLen, func(x, y string) int {
		return cmp.Or(cmp.Compare(len(y), len(x)), strings.Compare(x, y))
	})
	b.nVocab = max(nVocab, maxID+1)
	return b, nil
}

func (b *tiktokenBackend) vocabSize() int             { return b.nVocab }
func (b *tiktokenBackend) baseVocabSize() int         { return len(b.ranks) }
func (b *tiktokenBackend) specialIDs() []int          { return slices.Clone(b.sorted) }
func (b *tiktokenBackend) numSpecialTokensToAdd() int { return len(b.bos) }

// idToToken returns the token in the GPT-2 byte-level alphabet (as a Hugging Face
// conversion of a tiktoken vocabulary spells it), or the special token's text.
func (b *tiktokenBackend) idToToken(id int) (string, bool) {
	if s, ok := b.specIDs[id]; ok {
		return s, true
	}
	if id < 0 || id >= len(b.tokens) || b.tokens[id] == nil {
		return "", false
	}
	var sb strings.Builder
	for _, c := range b.tokens[id] {
		sb.WriteRune(byteLevelRune[c])
	}
	return sb.String(), true
}

func (b *tiktokenBackend) tokenToID(tok string) (int, bool) {
	if id, ok := b.special[tok]; ok {
		return id, true
	}
	raw := make([]byte, 0, len(tok))
	for _, r := range tok {
		c, ok := byteLevelByte(r)
		if !ok {
			return 0, false
		}
		raw = append(raw, c)
	}
	id, ok := b.ranks[string(raw)]
	return id, ok
}

// decode concatenates the tokens' bytes and converts them to text, replacing invalid
// UTF-8 as Python's bytes.decode(errors="replace") and Rust's from_utf8_lossy do.
// Unknown ids are skipped.
func (b *tiktokenBackend) decode(ids []int, skipSpecial bool) string {
	buf := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		if id >= 0 && id < len(b.tokens) && b.tokens[id] != nil {
			buf = append(buf, b.tokens[id]...)
			continue
		}
		if s, ok := b.specIDs[id]; ok && (!skipSpecial || b.plain[id]) {
			buf = append(buf, s...)
		}
	}
	return toValidUTF8(string(buf))
}

func (b *tiktokenBackend) encode(text string, addSpecial bool) []int {
	if !utf8.ValidString(text) {
		// Tokenizers only ever see valid text: the Python and JS bindings convert first.
		text = toValidUTF8(text)
	}
	ids := make([]int, 0, len(text)/3+1)
	if addSpecial {
		ids = append(ids, b.bos...)
	}
	if b.kimiRuns {
		kimiChunks(text, func(s string) { ids = b.encodeText(ids, s) })
		return ids
	}
	return b.encodeText(ids, text)
}

// Kimi's limits (tokenization_kimi.py): characters per tiktoken call, and the longest run
// of whitespace or non-whitespace characters encoded in one piece.
const (
	kimiMaxChars = 400_000
	kimiMaxRun   = 25_000
)

// kimiChunks calls yield with the pieces Kimi's TikTokenTokenizer.encode cuts text into.
// Lengths are in characters (code points), as Python counts them; whitespace is
// Python's str.isspace.
func kimiChunks(text string, yield func(string)) {
	for len(text) > 0 {
		chunk := text
		n := 0
		for i := range text {
			if n == kimiMaxChars {
				chunk = text[:i]
				break
			}
			n++
		}
		text = text[len(chunk):]
		start, run := 0, 0
		space := false
		for i, r := range chunk {
			sp := isPySpace(r)
			if i == 0 {
				space = sp
			}
			if sp != space {
				run, space = 1, sp
				continue
			}
			if run++; run > kimiMaxRun {
				yield(chunk[start:i])
				start, run = i, 1
			}
		}
		yield(chunk[start:])
	}
}

// encodeText appends the ids of text: special tokens where they occur, the split
// pattern's pieces in between.
func (b *tiktokenBackend) encodeText(ids []int, text string) []int {
	for len(text) > 0 {
		at, sp := b.nextSpecial(text)
		b.split.split(text[:at], func(piece string) { ids = b.encodePiece(ids, piece) })
		if sp == "" {
			break
		}
		ids = append(ids, b.special[sp])
		text = text[at+len(sp):]
	}
	return ids
}

// nextSpecial returns the position of the leftmost special token in s and the longest
// special token there, or len(s) and "" if there is none.
func (b *tiktokenBackend) nextSpecial(s string) (int, string) {
	if len(b.specByLen) == 0 {
		return len(s), ""
	}
	for i := 0; i < len(s); i++ {
		if !b.specFirst[s[i]] {
			continue
		}
		for _, sp := range b.specByLen {
			if strings.HasPrefix(s[i:], sp) {
				return i, sp
			}
		}
	}
	return len(s), ""
}

// encodePiece appends the ids of one pre-tokenized piece.
func (b *tiktokenBackend) encodePiece(ids []int, piece string) []int {
	if id, ok := b.ranks[piece]; ok {
		return append(ids, id)
	}
	if len(piece) <= maxCachedPiece {
		if c, ok := b.cache.get(piece); ok {
			for _, id := range c {
				ids = append(ids, int(id))
			}
			return ids
		}
		n := len(ids)
		ids = b.mergeShort(ids, piece)
		c := make([]int32, len(ids)-n)
		for i, id := range ids[n:] {
			c[i] = int32(id)
		}
		b.cache.put(piece, c)
		return ids
	}
	if len(piece) > 64 {
		return b.mergeLong(ids, piece)
	}
	return b.mergeShort(ids, piece)
}

// maxCachedPiece is the longest piece kept in the cache, in bytes.
const maxCachedPiece = 32

// mergeShort is tiktoken's byte_pair_merge for pieces of at most 64 bytes.
func (b *tiktokenBackend) mergeShort(ids []int, piece string) []int {
	// tiktoken's byte_pair_merge: parts[i] starts a part; rank[i] is the rank of the pair
	// parts i and i+1 would make (noRank if none). Merge the lowest, leftmost first.
	var startBuf [66]int
	var rankBuf [66]int
	n := len(piece)
	start := startBuf[:n+1]
	rank := rankBuf[:n+1]
	for i := range start {
		start[i] = i
	}
	pair := func(i int) int {
		if i+2 < len(start) {
			if r, ok := b.ranks[piece[start[i]:start[i+2]]]; ok {
				return r
			}
		}
		return noRank
	}
	for i := range rank {
		rank[i] = pair(i)
	}
	for {
		best, bi := noRank, -1
		for i, r := range rank[:len(rank)-1] {
			if r < best {
				best, bi = r, i
			}
		}
		if bi < 0 {
			break
		}
		start = slices.Delete(start, bi+1, bi+2)
		rank = slices.Delete(rank, bi+1, bi+2)
		rank[bi] = pair(bi)
		if bi > 0 {
			rank[bi-1] = pair(bi - 1)
		}
	}
	for i := 0; i+1 < len(start); i++ {
		ids = append(ids, b.ranks[piece[start[i]:start[i+1]]])
	}
	return ids
}

func sortInts(s []int) { slices.Sort(s) }

const noRank = int(^uint(0) >> 1)

// mergeLong is encodePiece for long pieces: the same merge order (lowest rank, then
// leftmost), kept in a heap over a linked list so that it is O(n log n), not O(n²).
func (b *tiktokenBackend) mergeLong(ids []int, piece string) []int {
	n := len(piece)
	next := make([]int, n) // next[i]: start of the part after the part starting at i (n at end)
	prev := make([]int, n) // prev[i]: start of the part before (-1 at start)
	ver := make([]int, n)  // bumped when part i changes, to drop stale heap entries
	for i := range n {
		next[i], prev[i] = i+1, i-1
	}
	h := ttMergeHeap{}
	push := func(i int) {
		j := next[i]
		if j >= n {
			return
		}
		if r, ok := b.ranks[piece[i:next[j]]]; ok {
			h.push(ttMergeItem{rank: r, pos: i, ver: ver[i], verNext: ver[j]})
		}
	}
	for i := range n - 1 {
		push(i)
	}
	dead := make([]bool, n)
	for len(h) > 0 {
		it := h.pop()
		i := it.pos
		if dead[i] || ver[i] != it.ver {
			continue
		}
		j := next[i]
		if j >= n || dead[j] || ver[j] != it.verNext {
			continue
		}
		// merge part j into part i
		dead[j] = true
		next[i] = next[j]
		if next[j] < n {
			prev[next[j]] = i
		}
		ver[i]++
		push(i)
		if p := prev[i]; p >= 0 {
			push(p) // the pair (p, i) is new; the old one is stale since ver[i] changed
		}
	}
	for i := 0; i < n; i = next[i] {
		ids = append(ids, b.ranks[piece[i:next[i]]])
	}
	return ids
}

type ttMergeItem struct{ rank, pos, ver, verNext int }

// ttMergeHeap is a binary min-heap ordered by (rank, pos).
type ttMergeHeap []ttMergeItem

func (h ttMergeItem) less(o ttMergeItem) bool {
	return h.rank < o.rank || h.rank == o.rank && h.pos < o.pos
}

func (h *ttMergeHeap) push(x ttMergeItem) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *ttMergeHeap) pop() ttMergeItem {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l].less(s[m]) {
			m = l
		}
		if r := l + 1; r < len(s) && s[r].less(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// byteLevelRune is GPT-2's byte → printable rune table (Hugging Face's ByteLevel).
var byteLevelRune = func() (t [256]rune) {
	n := 0
	for c := range 256 {
		if c >= '!' && c <= '~' || c >= 0xA1 && c <= 0xAC || c >= 0xAE && c <= 0xFF {
			t[c] = rune(c)
		} else {
			t[c] = rune(256 + n)
			n++
		}
	}
	return t
}()

// byteLevelInv inverts byteLevelRune; -1 marks runes outside the alphabet.
var byteLevelInv = func() (t [256 + 68]int16) {
	for i := range t {
		t[i] = -1
	}
	for c, r := range byteLevelRune {
		t[r] = int16(c)
	}
	return t
}()

func byteLevelByte(r rune) (byte, bool) {
	if r < 0 || int(r) >= len(byteLevelInv) || byteLevelInv[r] < 0 {
		return 0, false
	}
	return byte(byteLevelInv[r]), true
}
