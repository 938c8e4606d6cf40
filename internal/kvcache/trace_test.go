package kvcache

import (
	"testing"
)

// A Trace's replay at any capacity counts what an Ideal of that capacity counts, on
// every workload of the exactness test: the unbounded cache, the Trace's own LRU, and
// capacities around it.
func TestTraceReplaysIdeal(t *testing.T) {
	for _, w := range oracleWorkloads() {
		tr, err := NewTrace(w.BlockSize, w.Capacity)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range w.Prompts {
			if err := tr.Add(p); err != nil {
				t.Fatal(err)
			}
		}
		own := tr.Ideal()
		for _, c := range []int{0, 1, w.Capacity / 2, w.Capacity, 2 * w.Capacity, int(tr.Reuse().DistinctBlocks)} {
			a, _ := NewIdeal(w.BlockSize, c)
			for _, p := range w.Prompts {
				a.Add(p)
			}
			want := a.Result()
			if c == w.Capacity && want != own {
				t.Errorf("%s: Trace's Ideal = %+v, want %+v", w.Name, own, want)
			}
			if got := tr.HitsAt(c); got != want.LRU {
				t.Errorf("%s: HitsAt(%d) = %+v, want the Ideal's %+v", w.Name, c, got, want.LRU)
			}
		}
	}
}

// The search's capacity reaches the target and the one below it does not, on the
// workload that evicts most and on multi-turn contexts; a trace with no hit needs none.
func TestTraceSmallestCapacity(t *testing.T) {
	for _, w := range oracleWorkloads() {
		if w.Name != "eviction" && w.Name != "multi-turn" && w.Name != "zipf-1.2" {
			continue
		}
		tr, _ := NewTrace(w.BlockSize, 0)
		for _, p := range w.Prompts {
			_ = tr.Add(p)
		}
		inf := tr.HitsAt(0)
		for _, pct := range []int{50, 90, 100} {
			s := tr.SmallestCapacity(pct)
			if want := (inf.Blocks*int64(pct) + 99) / 100; s.Target != want {
				t.Errorf("%s %d%%: target %d, want %d of %d", w.Name, pct, s.Target, want, inf.Blocks)
			}
			if s.Hits != tr.HitsAt(s.Capacity) || s.Hits.Blocks < s.Target {
				t.Errorf("%s %d%%: capacity %d serves %+v (replayed %+v), want at least %d blocks", w.Name, pct, s.Capacity, s.Hits, tr.HitsAt(s.Capacity), s.Target)
			}
			if below := tr.HitsAt(s.Capacity - 1); s.Capacity > 1 && below.Blocks >= s.Target {
				t.Errorf("%s %d%%: capacity %d also serves %d ≥ %d blocks; %d is not the smallest", w.Name, pct, s.Capacity-1, below.Blocks, s.Target, s.Capacity)
			}
			if max := 1 + bitsLen(int(tr.Reuse().DistinctBlocks)); s.Probes > max {
				t.Errorf("%s %d%%: %d replays, want at most %d (a binary search)", w.Name, pct, s.Probes, max)
			}
		}
	}
	tr, _ := NewTrace(4, 0)
	_ = tr.Add(seq(0, 9))
	_ = tr.Add(seq(100, 9))
	if s := tr.SmallestCapacity(90); s.Target != 0 || s.Capacity != 0 || s.Hits.Blocks != 0 {
		t.Errorf("no shared block: %+v, want target 0 at capacity 0", s)
	}
}

func bitsLen(n int) int {
	k := 0
	for ; n > 0; n >>= 1 {
		k++
	}
	return k
}

// Reuse on a hand count, blocks of 2: A=[1 2], B=[1 2|3 4], C=[1 2|7 7], D=[8 8].
func TestTraceReuse(t *testing.T) {
	tr, _ := NewTrace(2, 0)
	for _, p := range [][]int{{1, 2, 3, 4, 5}, {1, 2, 3, 4, 9}, {1, 2, 7, 7, 7}, {8, 8, 8}, {5}} {
		_ = tr.Add(p)
	}
	// A B, A B, A C, D, none: 7 blocks, 4 distinct, A (3 prompts) and B (2) reused;
	// the three starting with A share their first block.
	want := Reuse{Requests: 5, SharedFirst: 3, Blocks: 7, DistinctBlocks: 4, ReusedBlocks: 2}
	if got := tr.Reuse(); got != want {
		t.Errorf("Reuse = %+v, want %+v", got, want)
	}
	// Unbounded: prompt 2 hits A B, prompt 3 hits A: 3 blocks, 6 of 19 tokens.
	if got := tr.HitsAt(0); got.Blocks != 3 || got.Tokens != 6 || got.Rate != 6.0/19 {
		t.Errorf("HitsAt(0) = %+v, want 3 blocks, 6 tokens, rate 6/19", got)
	}
}
