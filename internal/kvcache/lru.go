package kvcache

// LRU is a set of block hashes of bounded size with least-recently-used eviction
// (capacity 0 = unbounded: a plain set). It is not safe for concurrent use.
type LRU struct {
	capacity int
	set      map[uint64]struct{} // unbounded
	index    map[uint64]int32    // bounded: hash → node
	nodes    []node              // bounded: nodes[0] is the list's sentinel
}

// node is an entry of the recency list: a doubly linked ring through nodes, most
// recent after the sentinel.
type node struct {
	hash       uint64
	prev, next int32
}

// NewLRU returns an empty LRU of capacity blocks (0 = unbounded). It panics if
// capacity < 0 or does not fit an int32.
func NewLRU(capacity int) *LRU {
	if capacity < 0 || capacity >= 1<<31-1 {
		panic("kvcache: capacity out of range")
	}
	l := &LRU{capacity: capacity}
	l.Reset()
	return l
}

// Capacity returns the capacity in blocks (0 = unbounded).
func (l *LRU) Capacity() int { return l.capacity }

// Len returns the number of blocks held.
func (l *LRU) Len() int {
	if l.capacity == 0 {
		return len(l.set)
	}
	return len(l.index)
}

// Reset empties the LRU, keeping its capacity.
func (l *LRU) Reset() {
	if l.capacity == 0 {
		l.set = map[uint64]struct{}{}
		return
	}
	l.index = map[uint64]int32{}
	l.nodes = append(l.nodes[:0], node{})
}

// Contains reports whether h is held, without touching its recency.
func (l *LRU) Contains(h uint64) bool {
	if l.capacity == 0 {
		_, ok := l.set[h]
		return ok
	}
	_, ok := l.index[h]
	return ok
}

// Access is one prompt's lookup and insertion: it counts the leading hashes among
// the first lookable that are held (stopping at the first that is not), then makes
// every hash most recently used, the last first and the first last, evicting the
// least recently used when full. It returns the count.
func (l *LRU) Access(hashes []uint64, lookable int) (hits int) {
	lookable = min(lookable, len(hashes))
	for hits < lookable && l.Contains(hashes[hits]) {
		hits++
	}
	if l.capacity == 0 {
		for _, h := range hashes[hits:] {
			l.set[h] = struct{}{}
		}
		return hits
	}
	// Only the last capacity hashes touched stay, and they are hashes[:capacity].
	for i := min(len(hashes), l.capacity) - 1; i >= 0; i-- {
		l.touch(hashes[i])
	}
	return hits
}

// touch makes h the most recently used, inserting it (and evicting if full).
func (l *LRU) touch(h uint64) {
	i, ok := l.index[h]
	switch {
	case ok:
		l.unlink(i)
	case len(l.index) < l.capacity:
		i = int32(len(l.nodes))
		l.nodes = append(l.nodes, node{})
		l.index[h] = i
	default:
		i = l.nodes[0].prev // the least recently used
		l.unlink(i)
		delete(l.index, l.nodes[i].hash)
		l.index[h] = i
	}
	l.nodes[i].hash = h
	first := l.nodes[0].next
	l.nodes[i].prev, l.nodes[i].next = 0, first
	l.nodes[first].prev = i
	l.nodes[0].next = i
}

func (l *LRU) unlink(i int32) {
	p, n := l.nodes[i].prev, l.nodes[i].next
	l.nodes[p].next = n
	l.nodes[n].prev = p
}
