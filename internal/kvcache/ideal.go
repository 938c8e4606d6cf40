package kvcache

import (
	"errors"
	"fmt"
)

// Ideal accumulates the hit rate an ideal server would reach on a sequence of
// prompts: fed each prompt's token ids in send order, it counts the blocks and tokens
// that an unbounded cache and an LRU cache of a given capacity serve, at once. Its
// memory is bounded by the capacity (the unbounded cache's by the distinct blocks),
// never by the number of prompts. It is not safe for concurrent use.
type Ideal struct {
	blockSize int
	inf, lru  *LRU // lru nil when the capacity is unbounded
	res       IdealResult
	buf       []uint64
}

// IdealResult is what an [Ideal] counted.
type IdealResult struct {
	BlockSize int // tokens per block
	Capacity  int // the LRU's capacity in blocks; 0 = unbounded (LRU = Infinite)
	Requests  int64
	// PromptTokens is every prompt's tokens, the denominator of the token hit rates
	// (vLLM's prefix-cache queries).
	PromptTokens int64
	// Blocks is the lookable full blocks queried (see [Lookable]).
	Blocks int64
	// Infinite is what an unbounded cache serves; LRU what the capacity-bounded one
	// does (equal to Infinite when Capacity is 0).
	Infinite, LRU Hits
}

// Hits is what one cache served: blocks, and tokens (blocks times the block size), of
// the queries in the [IdealResult] that holds it.
type Hits struct {
	Blocks, Tokens int64
	// Rate is the token hit rate: Tokens over the prompt tokens (0 with none), what a
	// server's Σcached_tokens/Σprompt_tokens is compared with.
	Rate float64
}

// NewIdeal returns an empty accumulator for blocks of blockSize tokens and an LRU of
// capacity blocks (0 = unbounded). It returns an error wrapping [ErrBlockSize] or
// [ErrCapacity].
func NewIdeal(blockSize, capacity int) (*Ideal, error) {
	if err := errors.Join(CheckBlockSize(blockSize), CheckCapacity(capacity)); err != nil {
		return nil, err
	}
	a := &Ideal{blockSize: blockSize, inf: NewLRU(0)}
	if capacity > 0 {
		a.lru = NewLRU(capacity)
	}
	a.res = IdealResult{BlockSize: blockSize, Capacity: capacity}
	return a, nil
}

// Add counts one prompt, then caches it.
func (a *Ideal) Add(ids []int) {
	a.buf = AppendHashes(a.buf[:0], ids, a.blockSize)
	a.addHashes(a.buf, len(ids), Lookable(len(ids), a.blockSize))
}

// AddHashes is [Ideal.Add] for a prompt of n tokens given by its full blocks' chained
// hashes ([AppendHashes] at the accumulator's block size), which a caller can compute
// outside a lock and keep in less memory than the ids.
func (a *Ideal) AddHashes(hashes []uint64, n int) {
	a.addHashes(hashes, n, Lookable(n, a.blockSize))
}

// addHashes counts one prompt of n tokens given its full blocks' hashes and its
// lookable blocks.
func (a *Ideal) addHashes(hashes []uint64, n, look int) {
	a.res.Requests++
	a.res.PromptTokens += int64(n)
	a.res.Blocks += int64(look)
	a.res.Infinite.Blocks += int64(a.inf.Access(hashes, look))
	if a.lru != nil {
		a.res.LRU.Blocks += int64(a.lru.Access(hashes, look))
	}
}

// Warm caches a prompt of n tokens (its blocks' hashes) as [Ideal.AddHashes] does,
// without counting it: a request before the measured window (a warm-up or priming
// one), whose blocks the server caches all the same.
func (a *Ideal) Warm(hashes []uint64, n int) {
	look := Lookable(n, a.blockSize)
	a.inf.Access(hashes, look)
	if a.lru != nil {
		a.lru.Access(hashes, look)
	}
}

// BlockSize returns the tokens per block.
func (a *Ideal) BlockSize() int { return a.blockSize }

// Result returns the counts so far.
func (a *Ideal) Result() IdealResult {
	r := a.res
	if a.lru == nil {
		r.LRU.Blocks = r.Infinite.Blocks
	}
	for _, h := range []*Hits{&r.Infinite, &r.LRU} {
		h.Tokens = h.Blocks * int64(r.BlockSize)
		if r.PromptTokens > 0 {
			h.Rate = float64(h.Tokens) / float64(r.PromptTokens)
		}
	}
	return r
}

// DistinctBlocks returns the distinct full blocks seen (the unbounded cache's size).
func (a *Ideal) DistinctBlocks() int { return a.inf.Len() }

// String is a one-line summary: "ideal prefix-cache hit rate 0.6400 unbounded, 0.5000
// in 4096 blocks (LRU); blocks of 16 tokens, 3 requests, 300 prompt tokens".
func (r IdealResult) String() string {
	s := fmt.Sprintf("ideal prefix-cache hit rate %.4f unbounded", r.Infinite.Rate)
	if r.Capacity > 0 {
		s += fmt.Sprintf(", %.4f in %d blocks (LRU)", r.LRU.Rate, r.Capacity)
	}
	return s + fmt.Sprintf("; blocks of %d tokens, %d requests, %d prompt tokens", r.BlockSize, r.Requests, r.PromptTokens)
}
