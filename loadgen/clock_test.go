package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// TestFromWallUsesOneOffset checks that a kernel timestamp converts with the offset
// taken at the run's start, whenever the conversion happens: the same wall instant
// always maps to the same run time.
func TestFromWallUsesOneOffset(t *testing.T) {
	c := runClock{start: time.Now()}
	wall := c.start.Round(0).Add(5 * time.Millisecond) // wall reading only
	first := c.fromWall(wall)
	time.Sleep(2 * time.Millisecond) // a later read of the same instant: the old code moved it
	if second := c.fromWall(wall); first != 5*time.Millisecond || second != first {
		t.Errorf("fromWall(start+5ms) = %v, then %v; want 5ms both times", first, second)
	}
}

func TestStampTimeKeepsStreamOrder(t *testing.T) {
	for _, c := range []struct {
		name                    string
		prev, kernel, now, want time.Duration
	}{
		{"in order", 10, 12, 20, 12},
		{"wall stepped back: not before the previous read", 10, 7, 20, 10},
		{"wall stepped forward: not after now", 10, 25, 20, 20},
		{"equal to the previous read (one segment, two events)", 10, 10, 20, 10},
	} {
		if got := stampTime(c.prev, c.kernel, c.now); got != c.want {
			t.Errorf("%s: stampTime(prev=%d, kernel=%d, now=%d) = %d, want %d", c.name, c.prev, c.kernel, c.now, got, c.want)
		}
	}
}

// TestKernelTimestampsUnderLoadNeverGoBack drives 200 concurrent streams of 60 chunks
// 1 ms apart (12,000 chunks in flight at about 200,000 chunks/s on loopback), with
// kernel receive timestamps where the kernel has them, and checks that no chunk is
// timed before the previous one on its stream: every inter-chunk latency is >= 0, and
// every chunk lies within [first byte, done].
func TestKernelTimestampsUnderLoadNeverGoBack(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens, c.TTFT, c.ITL = 60, 2*time.Millisecond, time.Millisecond })
	const streams = 200
	out, err := Run(context.Background(), Config{
		Target: Target{
			URLs:  []string{g.URL},
			Model: "ok",
		},
		Workload: Workload{
			ISL: fixed(16),
		},
		Load: Load{
			Concurrency: streams,
		},
		Stop: Stop{
			Requests: 2 * streams,
		},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	kernel, chunks := 0, 0
	var q metric.Request
	for i := range out.Records {
		r := &out.Records[i]
		if !r.OK() {
			t.Fatalf("record %d: %s %s", r.Index, r.ErrorKind, r.Error)
		}
		if r.Clock == record.ClockKernel {
			kernel++
		}
		prev := r.FirstByte
		for k, ch := range r.Chunks {
			chunks++
			if ch.T < prev {
				t.Errorf("record %d chunk %d at %v, before the previous read at %v (clock %q)", r.Index, k, ch.T, prev, r.Clock)
			}
			prev = ch.T
		}
		if r.Done < prev {
			t.Errorf("record %d done at %v, before its last chunk at %v", r.Index, r.Done, prev)
		}
		q.Reset(r, metric.Options{})
		for _, g := range q.ICL {
			if g < 0 {
				t.Errorf("record %d: negative inter-chunk latency %v", r.Index, g)
			}
		}
	}
	t.Logf("%d records (%d with kernel timestamps), %d chunks", len(out.Records), kernel, chunks)
}
