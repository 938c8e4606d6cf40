package kvcache

import (
	"errors"
	"fmt"
)

// Trace keeps a sequence of prompts' blocks so that caches of any capacity can replay
// it: it feeds an [Ideal] (the unbounded cache and an LRU of one capacity) as prompts
// are added, counts how the prompts share blocks ([Reuse]), and afterwards replays the
// sequence through an LRU of any capacity ([Trace.HitsAt]) and searches for the
// smallest capacity that reaches a share of the unbounded rate
// ([Trace.SmallestCapacity]).
//
// Its memory is 4 bytes per full block of every prompt and 8 bytes per prompt (the
// sequence, as dense block numbers), plus one map entry and a count per distinct
// block, plus the [Ideal]'s: unlike an Ideal alone it grows with the prompts, which a
// replay needs. It is not safe for concurrent use.
type Trace struct {
	ideal  *Ideal
	number map[uint64]uint32 // block hash → dense block number
	counts []uint32          // by block number: the prompts holding the block
	blocks []uint32          // every prompt's full blocks' numbers, in order
	full   []uint32          // by prompt: its full blocks
	look   []uint32          // by prompt: its lookable blocks
	first  []uint32          // by prompt with a full block: its first block's number
	buf    []uint64
}

// Reuse is how a trace's prompts share blocks.
type Reuse struct {
	Requests int64
	// SharedFirst is the prompts whose first full block some other prompt of the trace
	// also starts with (a prompt with no full block shares nothing).
	SharedFirst int64
	// Blocks is the full blocks of every prompt; DistinctBlocks the distinct ones
	// (what an unbounded cache holds at the end); ReusedBlocks the distinct blocks that
	// two or more prompts hold.
	Blocks, DistinctBlocks, ReusedBlocks int64
}

// NewTrace returns an empty trace counted in blocks of blockSize tokens, whose [Ideal]
// has an LRU of capacity blocks (0 = unbounded). It returns an error wrapping
// [ErrBlockSize] or [ErrCapacity].
func NewTrace(blockSize, capacity int) (*Trace, error) {
	a, err := NewIdeal(blockSize, capacity)
	if err != nil {
		return nil, err
	}
	return &Trace{ideal: a, number: map[uint64]uint32{}}, nil
}

// ErrTraceSize reports a trace of more distinct blocks, or more blocks in all, than a
// Trace numbers (2³²−1).
var ErrTraceSize = errors.New("kvcache: trace too large")

// Add counts one prompt (token ids, in send order) and keeps its blocks. It returns an
// error wrapping [ErrTraceSize] when the trace outgrows its numbering; the prompt is
// then not counted.
func (t *Trace) Add(ids []int) error {
	bs := t.ideal.blockSize
	t.buf = AppendHashes(t.buf[:0], ids, bs)
	if len(t.number)+len(t.buf) >= 1<<32-1 || len(t.blocks)+len(t.buf) >= 1<<32-1 {
		return fmt.Errorf("%w: over %d blocks", ErrTraceSize, uint32(1<<32-1))
	}
	look := Lookable(len(ids), bs)
	t.ideal.addHashes(t.buf, len(ids), look)
	for i, h := range t.buf {
		n, ok := t.number[h]
		if !ok {
			n = uint32(len(t.counts))
			t.number[h] = n
			t.counts = append(t.counts, 0)
		}
		t.counts[n]++ // a prompt's chained hashes are distinct, so once per prompt
		t.blocks = append(t.blocks, n)
		if i == 0 {
			t.first = append(t.first, n)
		}
	}
	t.full = append(t.full, uint32(len(t.buf)))
	t.look = append(t.look, uint32(look))
	return nil
}

// Ideal returns what the trace's [Ideal] counted: the unbounded cache and the LRU of
// the capacity given to [NewTrace].
func (t *Trace) Ideal() IdealResult { return t.ideal.Result() }

// Reuse returns how the prompts so far share blocks.
func (t *Trace) Reuse() Reuse {
	r := Reuse{Requests: int64(len(t.full)), Blocks: int64(len(t.blocks)), DistinctBlocks: int64(len(t.counts))}
	for _, c := range t.counts {
		if c >= 2 {
			r.ReusedBlocks++
		}
	}
	for _, n := range t.first {
		if t.counts[n] >= 2 { // a first block's hash is only ever a first block
			r.SharedFirst++
		}
	}
	return r
}

// HitsAt replays the trace through an empty LRU of capacity blocks (0 = unbounded),
// one pass, and returns what it served: the same counts an [Ideal] of that capacity
// fed the same prompts gives as its LRU. It panics if capacity < 0.
func (t *Trace) HitsAt(capacity int) Hits {
	var hits int64
	if capacity == 0 || capacity >= len(t.counts) {
		// Nothing is ever evicted: a block hits once an earlier prompt held it.
		seen := make([]bool, len(t.counts))
		at := 0
		for p, f := range t.full {
			blocks := t.blocks[at : at+int(f)]
			k := 0
			for k < int(t.look[p]) && seen[blocks[k]] {
				k++
			}
			hits += int64(k)
			for _, n := range blocks[k:] {
				seen[n] = true
			}
			at += int(f)
		}
	} else {
		l := NewLRU(capacity)
		buf := make([]uint64, 0, 64)
		at := 0
		for p, f := range t.full {
			buf = buf[:0]
			for _, n := range t.blocks[at : at+int(f)] {
				buf = append(buf, uint64(n))
			}
			hits += int64(l.Access(buf, int(t.look[p])))
			at += int(f)
		}
	}
	return t.hits(hits)
}

// hits makes Hits of a count of hit blocks.
func (t *Trace) hits(blocks int64) Hits {
	r := t.ideal.res
	h := Hits{Blocks: blocks, Tokens: blocks * int64(r.BlockSize)}
	if r.PromptTokens > 0 {
		h.Rate = float64(h.Tokens) / float64(r.PromptTokens)
	}
	return h
}

// Search is the result of [Trace.SmallestCapacity].
type Search struct {
	// Percent is the share of the unbounded cache's hit blocks asked for; Target the
	// hit blocks that is (⌈Percent·unbounded/100⌉).
	Percent int
	Target  int64
	// Capacity is the smallest capacity found that serves Target blocks (0 when the
	// unbounded cache serves none), and Hits what it serves.
	Capacity int
	Hits     Hits
	// Probes is the replays the search made, each one pass over the trace.
	Probes int
}

// SmallestCapacity searches for the smallest LRU capacity, in blocks, that serves at
// least percent (1 to 100) of the hit blocks the unbounded cache serves: a binary
// search over 1 to the distinct blocks (a capacity that never evicts), each probe one
// [Trace.HitsAt]. The capacity returned always reaches the target. It is the smallest
// one when hits grow with the capacity, as they do for an LRU (a stack algorithm: a
// larger LRU holds all that a smaller one holds) up to the model's one exception, a
// prompt of more full blocks than the capacity, which leaves only its first blocks.
// It panics if percent is outside 1 to 100.
func (t *Trace) SmallestCapacity(percent int) Search {
	if percent < 1 || percent > 100 {
		panic("kvcache: percent outside 1 to 100")
	}
	unbounded := t.HitsAt(0)
	s := Search{Percent: percent, Target: (unbounded.Blocks*int64(percent) + 99) / 100, Probes: 1}
	if s.Target == 0 {
		s.Hits = t.hits(0)
		return s
	}
	lo, hi := 1, len(t.counts) // hi reaches it: it never evicts
	s.Capacity, s.Hits = hi, unbounded
	for lo < hi {
		mid := lo + (hi-lo)/2
		h := t.HitsAt(mid)
		s.Probes++
		if h.Blocks >= s.Target {
			hi, s.Capacity, s.Hits = mid, mid, h
		} else {
			lo = mid + 1
		}
	}
	return s
}
