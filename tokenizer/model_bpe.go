package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// model is a tokenizer.json model: it turns one pre-tokenized piece into ids.
type model interface {
	// tokenize appends the ids of s to out.
	tokenize(s string, out []int) []int
	vocabSize() int
	idToToken(id int) (string, bool)
	tokenToID(tok string) (int, bool)
}

type jsonModel struct {
	Type                    string          `json:"type"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
	Dropout                 *float64        `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	UnkID                   *int            `json:"unk_id"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	MaxInputCharsPerWord    *int            `json:"max_input_chars_per_word"`
}

// buildModel builds the model from its JSON, raw, split into fields when the caller
// has them already (nil: split here).
func buildModel(raw json.RawMessage, fields map[string]json.RawMessage) (model, error) {
	var j jsonModel
	var err error
	if fields == nil {
		fields, err = jsonFields(raw)
	}
	if err != nil {
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, err
		}
		return nil, errors.New("model is not a JSON object")
	}
	if err := unmarshalWithout(fields, &j, "vocab", "merges"); err != nil {
		return nil, err
	}
	j.Vocab, j.Merges = fields["vocab"], fields["merges"]
	typ := j.Type
	if typ == "" {
		// Hugging Face deserializes an untagged model by its fields.
		switch {
		case !isNull(j.Merges):
			typ = "BPE"
		case j.MaxInputCharsPerWord != nil || j.ContinuingSubwordPrefix != nil:
			typ = "WordPiece"
		case len(j.Vocab) > 0 && j.Vocab[0] == '[':
			typ = "Unigram"
		default:
			typ = "WordLevel"
		}
	}
	switch typ {
	case "BPE":
		return buildBPE(&j)
	case "WordPiece":
		return buildWordPiece(&j)
	case "WordLevel":
		return buildWordLevel(&j)
	case "Unigram":
		return buildUnigram(&j)
	}
	return nil, errUnsupported{"model", typ}
}

// vocabTable maps tokens to ids and back.
type vocabTable struct {
	toID   map[string]int
	toTok  []string // by id; "" with has[id] false for gaps
	has    []bool
	sparse map[int]string // instead of toTok/has when ids are very sparse
}

func newVocabTable(m map[string]int) (vocabTable, error) {
	v := vocabTable{toID: m}
	maxID := -1
	for _, id := range m {
		if id < 0 {
			return v, fmt.Errorf("negative id %d in vocab", id)
		}
		maxID = max(maxID, id)
	}
	if maxID > 4*len(m)+1024 {
		v.sparse = make(map[int]string, len(m))
		for tok, id := range m {
			v.sparse[id] = tok
		}
		return v, nil
	}
	v.toTok = make([]string, maxID+1)
	v.has = make([]bool, maxID+1)
	for tok, id := range m {
		v.toTok[id] = tok
		v.has[id] = true
	}
	return v, nil
}

func (v *vocabTable) vocabSize() int { return len(v.toID) }

func (v *vocabTable) idToToken(id int) (string, bool) {
	if v.sparse != nil {
		t, ok := v.sparse[id]
		return t, ok
	}
	if id < 0 || id >= len(v.toTok) || !v.has[id] {
		return "", false
	}
	return v.toTok[id], true
}

func (v *vocabTable) tokenToID(tok string) (int, bool) {
	id, ok := v.toID[tok]
	return id, ok
}

// bpeModel is Hugging Face's BPE model with a heap-ordered merge per word (dropout
// unsupported: it makes encoding random).
type bpeModel struct {
	vocabTable
	merges       map[uint64]uint64 // a<<32|b → rank<<32|new id
	unk          int               // -1: none
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	prefix       string
	suffix       string
	fallbackIDs  [256]int // id of "<0xXX>", -1 if absent

	// raw mode: pieces are raw bytes rather than byte-level characters.
	raw      bool
	rawVocab map[string]int
	byteID   [256]int

	cache wordCache
}

func buildBPE(j *jsonModel) (*bpeModel, error) {
	if j.Dropout != nil && *j.Dropout != 0 {
		return nil, fmt.Errorf("BPE dropout %v is not supported (it makes encoding random)", *j.Dropout)
	}
	vm, err := parseVocab(j.Vocab)
	if err != nil {
		return nil, fmt.Errorf("BPE vocab: %w", err)
	}
	vt, err := newVocabTable(vm)
	if err != nil {
		return nil, err
	}
	m := &bpeModel{
		vocabTable:   vt,
		unk:          -1,
		fuseUnk:      j.FuseUnk,
		byteFallback: j.ByteFallback,
		ignoreMerges: j.IgnoreMerges,
		prefix:       strOr(j.ContinuingSubwordPrefix, ""),
		suffix:       strOr(j.EndOfWordSuffix, ""),
	}
	if j.UnkToken != nil {
		id, ok := vm[*j.UnkToken]
		if !ok {
			// HF fails at encode time only if the unknown token is needed; we resolve it
			// now and fail then by skipping (documented in tokenize).
			id = -2
		}
		m.unk = id
	}
	for b := 0; b < 256; b++ {
		id, ok := vm[fmt.Sprintf("<0x%02X>", b)]
		if !ok {
			id = -1
		}
		m.fallbackIDs[b] = id
	}
	pairs, err := parseMerges(j.Merges)
	if err != nil {
		return nil, err
	}
	m.merges = make(map[uint64]uint64, len(pairs))
	var buf []byte
	for rank, p := range pairs {
		a, ok := vm[p[0]]
		if !ok {
			return nil, fmt.Errorf("merge %d: token %q is not in the vocab", rank, p[0])
		}
		b, ok := vm[p[1]]
		if !ok {
			return nil, fmt.Errorf("merge %d: token %q is not in the vocab", rank, p[1])
		}
		second := p[1]
		if len(m.prefix) <= len(second) {
			second = second[len(m.prefix):]
		} else {
			return nil, fmt.Errorf("merge %d: %q is shorter than the subword prefix", rank, p[1])
		}
		buf = append(append(buf[:0], p[0]...), second...)
		n, ok := vm[string(buf)] // no allocation
		if !ok {
			return nil, fmt.Errorf("merge %d: token %q is not in the vocab", rank, buf)
		}
		m.merges[uint64(a)<<32|uint64(b)] = uint64(rank)<<32 | uint64(n)
	}
	return m, nil
}

// parseMerges reads both merge formats: ["a b", …] and [["a", "b"], …].
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if isNull(raw) {
		return nil, errors.New("BPE has no merges")
	}
	if out, legacy, err := parseMergesFast(raw); err == nil {
		if !legacy {
			return out, nil
		}
		lines := make([]string, len(out))
		for i, p := range out {
			lines[i] = p[0]
		}
		return splitMergeLines(lines)
	}
	var tuples [][2]string
	if err := json.Unmarshal(raw, &tuples); err == nil {
		return tuples, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return nil, fmt.Errorf("BPE merges: %w", err)
	}
	return splitMergeLines(lines)
}

// splitMergeLines parses legacy "a b" merges (skipping "#version" lines).
func splitMergeLines(lines []string) ([][2]string, error) {
	out := make([][2]string, 0, len(lines))
	for _, l := range lines {
		if strings.HasPrefix(l, "#version") {
			continue
		}
		a, b, ok := strings.Cut(l, " ")
		if !ok || strings.Contains(b, " ") {
			return nil, fmt.Errorf("BPE merges: line %d (%q) is not two tokens separated by a space", len(out)+1, l)
		}
		out = append(out, [2]string{a, b})
	}
	return out, nil
}

// enableRawBytes converts the model to work on raw bytes instead of byte-level characters
// (equivalent when every piece is byte-level encoded right before the model). It reports
// whether the conversion applies.
func (m *bpeModel) enableRawBytes() bool {
	for b := 0; b < 256; b++ {
		id, ok := m.toID[string(byteToRune[b])]
		if !ok {
			return false
		}
		m.byteID[b] = id
	}
	m.rawVocab = make(map[string]int, len(m.toID))
	buf := make([]byte, 0, 64)
outer:
	for tok, id := range m.toID {
		buf = buf[:0]
		for _, r := range tok {
			b, ok := runeToByte[r]
			if !ok {
				continue outer // unreachable from byte-level text
			}
			buf = append(buf, b)
		}
		m.rawVocab[string(buf)] = id
	}
	m.raw = true
	return true
}

func (m *bpeModel) tokenize(s string, out []int) []int {
	if s == "" {
		return out
	}
	if m.ignoreMerges {
		var id int
		var ok bool
		if m.raw {
			id, ok = m.rawVocab[s]
		} else {
			id, ok = m.toID[s]
		}
		if ok {
			return append(out, id)
		}
	}
	cacheable := len(s) < maxCachedWord
	if cacheable {
		if ids, ok := m.cache.get(s); ok {
			for _, id := range ids {
				out = append(out, int(id))
			}
			return out
		}
	}
	w := getWord()
	defer putWord(w)
	if len(s) > 64 {
		w.id = slices.Grow(w.id, len(s))
		w.prev = slices.Grow(w.prev, len(s))
		w.next = slices.Grow(w.next, len(s))
		w.heap = slices.Grow(w.heap, len(s))
	}
	if m.raw {
		for i := 0; i < len(s); i++ {
			w.add(m.byteID[s[i]])
		}
	} else {
		m.initSymbols(s, w)
	}
	m.mergeAll(w)
	start := len(out)
	for i := 0; i >= 0 && i < len(w.id); i = int(w.next[i]) {
		out = append(out, int(w.id[i]))
	}
	if cacheable {
		ids := make([]int32, len(out)-start)
		for i, id := range out[start:] {
			ids[i] = int32(id)
		}
		m.cache.put(s, ids)
	}
	return out
}

// initSymbols is Hugging Face's BPE::merge_word before merging: one symbol per character
// (with continuing_subword_prefix / end_of_word_suffix), byte fallback, unknown tokens.
func (m *bpeModel) initSymbols(s string, w *bpeWord) {
	unkID, unkPending := 0, false
	var buf []byte
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		c := s[i : i+n]
		sym := c
		if (i > 0 && m.prefix != "") || (i+n == len(s) && m.suffix != "") {
			buf = buf[:0]
			if i > 0 {
				buf = append(buf, m.prefix...)
			}
			buf = append(buf, c...)
			if i+n == len(s) {
				buf = append(buf, m.suffix...)
			}
			sym = string(buf)
		}
		i += n
		if id, ok := m.toID[sym]; ok {
			if unkPending {
				w.add(unkID)
				unkPending = false
			}
			w.add(id)
			continue
		}
		if m.byteFallback {
			all := true
			for k := 0; k < len(sym); k++ {
				if m.fallbackIDs[sym[k]] < 0 {
					all = false
					break
				}
			}
			if all {
				for k := 0; k < len(sym); k++ {
					w.add(m.fallbackIDs[sym[k]])
				}
				continue
			}
		}
		if m.unk == -1 {
			continue // no unk token: the character is dropped, as in Hugging Face
		}
		if m.unk < 0 {
			continue // unk token missing from the vocab (HF errors); drop
		}
		if unkPending && !m.fuseUnk {
			w.add(unkID)
		}
		if !(unkPending && m.fuseUnk) {
			unkID = m.unk
		}
		unkPending = true
	}
	if unkPending {
		w.add(unkID)
	}
}

// word is a doubly linked list of symbols being merged.
type bpeWord struct {
	id, prev, next []int32
	heap           bpeMergeHeap
}

var wordPool = sync.Pool{New: func() any { return new(bpeWord) }}

func getWord() *bpeWord {
	w := wordPool.Get().(*bpeWord)
	w.id, w.prev, w.next, w.heap = w.id[:0], w.prev[:0], w.next[:0], w.heap[:0]
	return w
}

func putWord(w *bpeWord) {
	if cap(w.id) > 1<<16 {
		return // do not keep huge buffers alive
	}
	wordPool.Put(w)
}

func (w *bpeWord) add(id int) {
	n := int32(len(w.id))
	w.id = append(w.id, int32(id))
	w.prev = append(w.prev, n-1)
	if n > 0 {
		w.next[n-1] = n
	}
	w.next = append(w.next, -1)
}

type bpeMergeItem struct {
	rank  uint32
	pos   int32
	newID int32
}

func (a bpeMergeItem) less(b bpeMergeItem) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos)
}

type bpeMergeHeap []bpeMergeItem

func (h *bpeMergeHeap) push(x bpeMergeItem) {
	*h = append(*h, x)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *bpeMergeHeap) pop() bpeMergeItem {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && s[r].less(s[l]) {
			c = r
		}
		if !s[c].less(s[i]) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

const maxCachedWord = 256

// mergeAll applies merges lowest rank first (leftmost among equal ranks), as Hugging
// Face's Word::merge_all. Removed symbols get id -1.
func (m *bpeModel) mergeAll(w *bpeWord) {
	n := len(w.id)
	if n < 2 {
		return
	}
	if n <= 24 {
		m.mergeScan(w)
		return
	}
	for i := 0; i+1 < n; i++ {
		if v, ok := m.merges[uint64(uint32(w.id[i]))<<32|uint64(uint32(w.id[i+1]))]; ok {
			w.heap.push(bpeMergeItem{uint32(v >> 32), int32(i), int32(uint32(v))})
		}
	}
	for len(w.heap) > 0 {
		top := w.heap.pop()
		pos := top.pos
		if w.id[pos] < 0 {
			continue
		}
		next := w.next[pos]
		if next < 0 {
			continue
		}
		v, ok := m.merges[uint64(uint32(w.id[pos]))<<32|uint64(uint32(w.id[next]))]
		if !ok || int32(uint32(v)) != top.newID {
			continue
		}
		w.merge(pos, top.newID)
		if p := w.prev[pos]; p >= 0 {
			if v, ok := m.merges[uint64(uint32(w.id[p]))<<32|uint64(uint32(w.id[pos]))]; ok {
				w.heap.push(bpeMergeItem{uint32(v >> 32), p, int32(uint32(v))})
			}
		}
		if nx := w.next[pos]; nx >= 0 {
			if v, ok := m.merges[uint64(uint32(w.id[pos]))<<32|uint64(uint32(w.id[nx]))]; ok {
				w.heap.push(bpeMergeItem{uint32(v >> 32), pos, int32(uint32(v))})
			}
		}
	}
}

// merge joins the symbol at pos with its successor into id.
func (w *bpeWord) merge(pos, id int32) {
	next := w.next[pos]
	w.id[pos] = id
	w.id[next] = -1
	nn := w.next[next]
	w.next[pos] = nn
	if nn >= 0 {
		w.prev[nn] = pos
	}
}

// mergeScan is mergeAll for short words: a linear scan for the best pair each round
// (same order as the heap: lowest rank, then leftmost).
func (m *bpeModel) mergeScan(w *bpeWord) {
	for {
		best := bpeMergeItem{rank: ^uint32(0), pos: -1}
		for i := int32(0); i >= 0; i = w.next[i] {
			nx := w.next[i]
			if nx < 0 {
				break
			}
			if v, ok := m.merges[uint64(uint32(w.id[i]))<<32|uint64(uint32(w.id[nx]))]; ok {
				if r := uint32(v >> 32); r < best.rank {
					best = bpeMergeItem{r, i, int32(uint32(v))}
				}
			}
		}
		if best.pos < 0 {
			return
		}
		w.merge(best.pos, best.newID)
	}
}

// wordCache is a bounded, sharded cache of piece → ids, safe for concurrent use. When a
// shard is full it is cleared (the cache never changes results, only speed).
type wordCache struct {
	shards [16]cacheShard
}

type cacheShard struct {
	mu sync.RWMutex
	m  map[string][]int32
}

const cacheShardCap = 4096

func cacheHash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

func (c *wordCache) get(s string) ([]int32, bool) {
	sh := &c.shards[cacheHash(s)&15]
	sh.mu.RLock()
	ids, ok := sh.m[s]
	sh.mu.RUnlock()
	return ids, ok
}

func (c *wordCache) put(s string, ids []int32) {
	sh := &c.shards[cacheHash(s)&15]
	sh.mu.Lock()
	if sh.m == nil || len(sh.m) >= cacheShardCap {
		sh.m = make(map[string][]int32, 256)
	}
	sh.m[strings.Clone(s)] = ids
	sh.mu.Unlock()
}
