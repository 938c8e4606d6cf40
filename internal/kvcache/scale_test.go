package kvcache

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

// prefixIDs writes prefix p's ids into dst: a pure function of p, so a pool of
// 10,000 prefixes of 2,000 tokens is never held in memory.
func prefixIDs(dst []int, p int) {
	r := rand.New(rand.NewPCG(uint64(p), 11))
	for i := range dst {
		dst[i] = r.IntN(vocab)
	}
}

// At the size users run, 100,000 requests over a pool of 10,000 prefixes of 2,000
// tokens, each with a fresh suffix: the unbounded cache hits every prefix block of
// every request whose prefix was sent before (125 blocks), and nothing else, which
// is counted here independently; the LRU never holds more than its capacity.
func TestIdealAtScale(t *testing.T) {
	requests, pool, prefixLen, capacity := 100_000, 10_000, 2_000, 400_000
	if testutil.Short() {
		requests, pool, capacity = 10_000, 1_000, 40_000
	}
	a, err := NewIdeal(DefaultBlockSize, capacity)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	seen := make([]bool, pool)
	var repeats int64
	ids := make([]int, prefixLen+64)
	for range requests {
		p := r.IntN(pool)
		if seen[p] {
			repeats++
		}
		seen[p] = true
		prefixIDs(ids[:prefixLen], p)
		n := prefixLen + 1 + r.IntN(64)
		for i := prefixLen; i < n; i++ {
			ids[i] = r.IntN(vocab)
		}
		a.Add(ids[:n])
	}
	res := a.Result()
	perPrefix := int64(prefixLen / DefaultBlockSize)
	if want := repeats * perPrefix; res.Infinite.Blocks != want {
		t.Errorf("unbounded cache hit %d blocks, want %d (%d repeated prefixes × %d blocks)", res.Infinite.Blocks, want, repeats, perPrefix)
	}
	if res.LRU.Blocks > res.Infinite.Blocks || res.LRU.Blocks == 0 {
		t.Errorf("LRU of %d blocks hit %d blocks; want some, and at most the unbounded %d", capacity, res.LRU.Blocks, res.Infinite.Blocks)
	}
	if a.lru.Len() > capacity {
		t.Errorf("the LRU holds %d blocks, over its capacity %d", a.lru.Len(), capacity)
	}
	t.Log(res)
}

// BenchmarkIdeal feeds prompts of 2,000 tokens through an Ideal with an LRU of
// 100,000 blocks, filled first: each prompt is one of 256 prefixes with one id
// changed at a random place, so its blocks hit up to there and miss after. It reports
// the time per full block and the heap bytes per block held (the LRU's and the
// unbounded set's, after a GC, over the blocks they hold).
func BenchmarkIdeal(b *testing.B) {
	const prefixLen, capacity = 2000, 100_000
	prompts := make([][]int, 256)
	for i := range prompts {
		prompts[i] = make([]int, prefixLen+8)
		prefixIDs(prompts[i], i)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	a, _ := NewIdeal(DefaultBlockSize, capacity)
	p := make([]int, prefixLen+8)
	for i := 0; a.lru.Len() < capacity; i++ {
		prefixIDs(p, len(prompts)+i)
		a.Add(p)
	}
	perBlock := float64(heap()-before) / float64(a.lru.Len()+a.inf.Len())
	r := rand.New(rand.NewPCG(3, 4))
	blocks := 0
	for b.Loop() {
		p := prompts[r.IntN(len(prompts))]
		p[r.IntN(len(p))] = r.IntN(vocab)
		a.Add(p)
		blocks += len(p) / DefaultBlockSize
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(blocks), "ns/block")
	b.ReportMetric(perBlock, "bytes/block")
}
