package kvcache

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

// seq returns n ids starting at from: from, from+1, …
func seq(from, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = from + i
	}
	return ids
}

// A block's hash covers every block before it: prompts that share ids up to a block's
// end share its hash, and a difference anywhere before changes every later hash. A
// partial last block has no hash.
func TestHashesChain(t *testing.T) {
	a := seq(0, 50) // 3 full blocks of 16, 2 ids left over
	b := slices.Clone(a)
	b[20] = 999 // inside block 1
	ha, hb := AppendHashes(nil, a, 16), AppendHashes(nil, b, 16)
	if len(ha) != 3 {
		t.Fatalf("AppendHashes(50 ids, 16) = %d hashes, want 3", len(ha))
	}
	if ha[0] != hb[0] {
		t.Errorf("block 0 is the same in both, hashes %x and %x differ", ha[0], hb[0])
	}
	for i := 1; i < 3; i++ {
		if ha[i] == hb[i] {
			t.Errorf("block %d's hash is the same although block 1 differs", i)
		}
	}
	// The same block of ids under different parents hashes differently.
	c := append(seq(100, 16), a[16:32]...)
	if hc := AppendHashes(nil, c, 16); hc[1] == ha[1] {
		t.Error("block 1 has the same ids in both prompts but different parents, and the same hash")
	}
	if got := AppendHashes(nil, seq(0, 15), 16); len(got) != 0 {
		t.Errorf("15 ids in blocks of 16 gave %d hashes, want none", len(got))
	}
	if ha[0] != BlockHash(RootHash, a[:16]) || ha[1] != BlockHash(ha[0], a[16:32]) {
		t.Error("AppendHashes is not BlockHash chained from RootHash")
	}
}

func TestLookable(t *testing.T) {
	for _, c := range []struct{ n, b, want int }{
		{0, 16, 0},
		{1, 16, 0},
		{16, 16, 0}, // one full block, but it holds the last token
		{17, 16, 1},
		{32, 16, 1},
		{33, 16, 2},
		{2000, 16, 124},
		{2001, 16, 125},
	} {
		if got := Lookable(c.n, c.b); got != c.want {
			t.Errorf("Lookable(%d, %d) = %d, want %d", c.n, c.b, got, c.want)
		}
	}
}

// The second sending of a prompt hits its blocks that end before its last token;
// a prompt sharing only a leading block hits that block; a miss stops the lookup.
func TestCacheAccess(t *testing.T) {
	c, err := New(16, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := seq(0, 40) // blocks 0, 1; 8 ids left over
	if got := c.Access(p); got != 0 {
		t.Errorf("first Access = %d cached tokens, want 0", got)
	}
	if got := c.Access(p); got != 32 {
		t.Errorf("second Access = %d, want 32", got)
	}
	q := seq(0, 32) // exactly blocks 0 and 1: the last block holds the last token
	if got := c.Access(q); got != 16 {
		t.Errorf("Access of a wholly cached 2-block prompt = %d, want 16", got)
	}
	r := append(seq(0, 16), seq(500, 30)...) // shares block 0 only
	if got := c.Access(r); got != 16 {
		t.Errorf("Access sharing block 0 = %d, want 16", got)
	}
	if c.Len() != 3 {
		t.Errorf("Len = %d, want 3 distinct blocks", c.Len())
	}
	c.Reset()
	if got := c.Access(p); got != 0 || c.Len() != 2 {
		t.Errorf("after Reset: Access = %d, Len = %d; want 0, 2", got, c.Len())
	}
}

// Eviction takes the least recently used block, and a prompt's blocks are used last
// to first, so a chain is evicted from its tail.
func TestLRUEvictsTailFirst(t *testing.T) {
	l := NewLRU(3)
	a := []uint64{1, 2, 3} // a chain of 3 blocks
	l.Access(a, 3)
	l.Access([]uint64{9}, 1) // evicts a's tail (3), not its head
	if !l.Contains(1) || !l.Contains(2) || l.Contains(3) || !l.Contains(9) {
		t.Errorf("after 1,2,3 then 9 in an LRU of 3: holds 1 %v, 2 %v, 3 %v, 9 %v; want 1, 2, 9", l.Contains(1), l.Contains(2), l.Contains(3), l.Contains(9))
	}
	if got := l.Access(a, 3); got != 2 {
		t.Errorf("a again = %d hits, want 2 (its head; the tail was evicted)", got)
	}
	// a was re-used (head most recent); 9 is now the least recent.
	l.Access([]uint64{7}, 1)
	if l.Contains(9) || !l.Contains(1) {
		t.Error("9 was least recently used and should have been evicted")
	}
	// A prompt longer than the capacity leaves its first C blocks.
	l.Access([]uint64{11, 12, 13, 14, 15}, 5)
	for _, h := range []uint64{11, 12, 13} {
		if !l.Contains(h) {
			t.Errorf("block %d of a 5-block prompt in an LRU of 3 was not kept", h)
		}
	}
	if l.Len() != 3 {
		t.Errorf("Len = %d, want the capacity 3", l.Len())
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		bs, cap int
		want    error
	}{
		{0, 0, ErrBlockSize},
		{-1, 0, ErrBlockSize},
		{1025, 0, ErrBlockSize},
		{16, -1, ErrCapacity},
	} {
		if _, err := New(c.bs, c.cap); !errors.Is(err, c.want) {
			t.Errorf("New(%d, %d) error = %v, want %v", c.bs, c.cap, err, c.want)
		}
		if _, err := NewIdeal(c.bs, c.cap); !errors.Is(err, c.want) {
			t.Errorf("NewIdeal(%d, %d) error = %v, want %v", c.bs, c.cap, err, c.want)
		}
	}
	for _, bs := range []int{1, 16, 1024} {
		if _, err := New(bs, 0); err != nil {
			t.Errorf("New(%d, 0): %v", bs, err)
		}
	}
}

// Concurrent Access is safe (run with -race) and every block is counted once.
func TestCacheConcurrent(t *testing.T) {
	c, _ := New(16, 64)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				c.Access(seq((g*200+i)%50*16, 80))
			}
		})
	}
	wg.Wait()
	if c.Len() > 64 {
		t.Errorf("Len = %d over the capacity 64", c.Len())
	}
}

// With capacity 0 the LRU figures equal the unbounded ones.
func TestIdealUnbounded(t *testing.T) {
	a, _ := NewIdeal(16, 0)
	for range 3 {
		a.Add(seq(0, 100)) // 6 full blocks, 6 lookable
	}
	r := a.Result()
	want := Hits{Blocks: 12, Tokens: 192, Rate: 192.0 / 300}
	if r.Infinite != want || r.LRU != want || r.Blocks != 18 || r.PromptTokens != 300 || r.Requests != 3 {
		t.Errorf("Result = %+v, want Infinite = LRU = %+v, 18 blocks, 300 tokens, 3 requests", r, want)
	}
	if s := r.String(); s != "ideal prefix-cache hit rate 0.6400 unbounded; blocks of 16 tokens, 3 requests, 300 prompt tokens" {
		t.Errorf("String = %q", s)
	}
}

// TestIdealWarm: a warmed prompt is cached but not counted, so a later prompt sharing
// its prefix hits, and AddHashes counts as Add does.
func TestIdealWarm(t *testing.T) {
	ids := make([]int, 64)
	for i := range ids {
		ids[i] = i
	}
	a, _ := NewIdeal(16, 0)
	b, _ := NewIdeal(16, 2)
	for _, x := range []*Ideal{a, b} {
		x.Warm(AppendHashes(nil, ids[:40], 16), 40)
		x.AddHashes(AppendHashes(nil, ids, 16), len(ids))
		r := x.Result()
		if r.Requests != 1 || r.PromptTokens != 64 || r.Infinite.Blocks != 2 || r.LRU.Blocks != 2 {
			t.Errorf("capacity %d: after Warm(40 ids) and Add(64 ids): %+v; want 1 request, 64 tokens, 2 hit blocks in each cache", r.Capacity, r)
		}
	}
	c, _ := NewIdeal(16, 0)
	c.Add(ids)
	c.Add(ids)
	if r, ra := c.Result(), a.Result(); r.Infinite.Blocks != 3 || ra.Blocks != 3 {
		t.Errorf("Add twice: %d hit blocks, want 3 (the last block holds the last token); AddHashes' lookable blocks %d, want 3", r.Infinite.Blocks, ra.Blocks)
	}
}
