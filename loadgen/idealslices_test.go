package loadgen

import (
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/kvcache"
)

// TestIdealSlices: the ideal rate's breakdowns by send time and by pool prefix add up
// to its totals, each prompt in its own slice and prefix with its own hits (a prompt
// of two 16-token blocks sent again hits its first block: 16 tokens); warm-ups are in
// neither; a request sent an hour in coarsens the slices to at most 4,096, keeping
// every count.
func TestIdealSlices(t *testing.T) {
	ideal, err := kvcache.NewIdeal(16, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := &idealFeed{ideal: ideal, pending: map[uint64]idealEntry{}, width: IdealSliceWidth}
	ids := make([]int, 32)
	for i := range ids {
		ids[i] = 1000 + i
	}
	hashes := kvcache.AppendHashes(nil, ids, 16)
	entry := func(at time.Duration, prefix int, warm bool) idealEntry {
		return idealEntry{hashes: hashes, n: len(ids), at: at, prefix: prefix, warm: warm}
	}
	f.add(0, entry(0, 1, true), true)                     // a warm-up: cached, not counted
	f.add(2, entry(150*time.Millisecond, 2, false), true) // waits for seq 1
	f.add(1, entry(50*time.Millisecond, 1, false), true)
	res, ok := f.result()
	c := PrefixCacheCount{PromptTokens: 32, HitTokens: 16}
	if !ok || res.PromptTokens != 64 || res.HitTokens != 32 || res.SliceWidth != IdealSliceWidth ||
		len(res.Slices) != 2 || res.Slices[0] != c || res.Slices[1] != c ||
		len(res.ByPrefix) != 2 || res.ByPrefix[0] != c || res.ByPrefix[1] != c || res.UnboundedHitTokens != 32 {
		t.Fatalf("result %+v", res)
	}
	f.add(3, entry(time.Hour, 0, false), true)
	res, _ = f.result()
	sum := PrefixCacheCount{}
	for _, s := range res.Slices {
		sum.PromptTokens += s.PromptTokens
		sum.HitTokens += s.HitTokens
	}
	if len(res.Slices) > maxIdealSlices || time.Hour/res.SliceWidth >= maxIdealSlices || res.SliceWidth != 16*IdealSliceWidth ||
		sum.PromptTokens != res.PromptTokens || sum.HitTokens != res.HitTokens || res.Slices[0].PromptTokens != 64 || len(res.ByPrefix) != 2 {
		t.Errorf("after an hour: width %v, %d slices summing to %+v, totals %d/%d, by prefix %v", res.SliceWidth, len(res.Slices), sum, res.PromptTokens, res.HitTokens, res.ByPrefix)
	}
}
