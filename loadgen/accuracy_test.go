package loadgen

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
)

// timingErrors runs streams concurrent paced streams against a ground-truth server and
// returns the client's per-chunk timestamp errors (client time − server write time) and
// ITL errors (client gap − server gap), in milliseconds. The server knows each write
// only within [Before, After] (see emit); a client time inside that window is exact.
// Chunks marked Batched (their time is only an upper bound) are left out of the errors
// and returned as a share instead.
//
// outside returns how far a client time lies outside the window, given its distance
// from Before and from After, in ms (0 inside).
func outside(fromBefore, fromAfter time.Duration) float64 {
	switch {
	case fromBefore < 0:
		return float64(fromBefore) / 1e6
	case fromAfter > 0:
		return float64(fromAfter) / 1e6
	}
	return 0
}

func timingErrors(t testing.TB, streams, tokens int, itl time.Duration, appTS bool) (chunkErr, itlErr []float64, batched float64) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens, c.TTFT, c.ITL = tokens, 20*time.Millisecond, itl })
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
			Requests: streams,
		},
		Recording: Recording{
			AppTimestamps: appTS,
		},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, emits, _ := g.snapshot()
	total := 0
	for _, r := range out.Records {
		if !r.OK() {
			t.Fatalf("record %d: %s %s", r.Index, r.ErrorKind, r.Error)
		}
		e := emits[r.RequestID]
		var got []time.Time
		var bound []bool
		for _, ch := range r.Chunks {
			if ch.Tokens > 0 {
				got = append(got, out.Start.Add(ch.T))
				bound = append(bound, ch.Batched)
				if ch.Batched {
					batched++
				}
			}
		}
		if len(got) != len(e) {
			t.Fatalf("record %d: %d content chunks, server emitted %d", r.Index, len(got), len(e))
		}
		checkCausal(t, r.Index, got, bound, e)
		for i := range got {
			total++
			if bound[i] {
				continue // its time is only an upper bound (a later event came in the same read)
			}
			chunkErr = append(chunkErr, outside(got[i].Sub(e[i].Before), got[i].Sub(e[i].After)))
			if i > 0 && !bound[i-1] {
				gap := got[i].Sub(got[i-1])
				chunkGapLo, chunkGapHi := e[i].Before.Sub(e[i-1].After), e[i].After.Sub(e[i-1].Before)
				itlErr = append(itlErr, outside(gap-chunkGapLo, gap-chunkGapHi))
			}
		}
	}
	return chunkErr, itlErr, batched / float64(max(total, 1))
}

// checkCausal checks what holds however late the client reads: no chunk's time is
// before the server began writing it (a time taken from an earlier read, or a wrong
// anchor, would be), and a chunk marked batched shares its time with the next one
// (they came in one read, so the first's time is that read's).
func checkCausal(t testing.TB, index int, got []time.Time, batched []bool, e []emit) {
	t.Helper()
	for i := range got {
		if got[i].Before(e[i].Before) {
			t.Errorf("record %d, chunk %d: client time %v before the server began writing it", index, i, e[i].Before.Sub(got[i]))
			return
		}
		if batched[i] && i+1 < len(got) && !got[i+1].Equal(got[i]) {
			t.Errorf("record %d, chunk %d: marked batched but the next chunk has another time (%v later)", index, i, got[i+1].Sub(got[i]))
			return
		}
	}
}

func absAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Abs(x)
	}
	slices.Sort(out)
	return out
}

// TestTimingAccuracy checks the client's chunk times against the server's own log of
// when it wrote each chunk, at 50 streams × 100 tokens/s. Checked in both clocks, and
// true however busy the machine: no chunk is timed before the server began writing it,
// and a batched chunk shares its read's time (checkCausal). With kernel receive
// timestamps (the default on Linux) the time is the kernel's, taken when the bytes
// reach the socket, not when this process gets the CPU, so the median error against
// the server's log is held to the specified 0.2 ms. How close times taken when reads
// return come, and how many chunks share a read, depend on the machine's scheduling:
// BenchmarkTimingAccuracy measures them (docs/loadgen.md), this test does not.
func TestTimingAccuracy(t *testing.T) {
	streams := 50
	if testutil.Short() {
		streams = 10
	}
	for _, tc := range []struct {
		name  string
		appTS bool
	}{{"kernel", false}, {"app", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ce, ie, batched := timingErrors(t, streams, 20, 10*time.Millisecond, tc.appTS)
			c, i := absAll(ce), absAll(ie)
			q := distribution.PercentileSorted
			cm, c90, c99 := q(c, 0.5), q(c, 0.9), q(c, 0.99)
			im, i90, i99 := q(i, 0.5), q(i, 0.9), q(i, 0.99)
			t.Logf("chunk timestamp |error|: median %.3f ms, p90 %.3f, p99 %.3f ms; ITL |error|: median %.3f ms, p90 %.3f, p99 %.3f ms (n=%d, %.1f%% batched)",
				cm, c90, c99, im, i90, i99, len(c), 100*batched)
			if !tc.appTS && (cm > 0.2 || im > 0.2) {
				t.Errorf("kernel timestamps: chunk median |error| %.3f ms, ITL median %.3f ms; want both <= 0.2 ms", cm, im)
			}
		})
	}
}

// BenchmarkTimingAccuracy prints the error curve as load rises: streams × 100 tokens/s,
// with kernel receive timestamps and with times taken when reads return.
func BenchmarkTimingAccuracy(b *testing.B) {
	for _, clock := range []string{"kernel", "app"} {
		for _, streams := range []int{10, 50, 100, 200} {
			appTS := clock == "app"
			b.Run(fmt.Sprintf("clock=%s/streams=%d", clock, streams), func(b *testing.B) {
				var ce, ie []float64
				var batched float64
				for b.Loop() {
					ce, ie, batched = timingErrors(b, streams, 50, 10*time.Millisecond, appTS)
				}
				c, i := absAll(ce), absAll(ie)
				b.ReportMetric(float64(streams)*100, "tokens/s")
				b.ReportMetric(100*batched, "batched-%")
				b.ReportMetric(distribution.PercentileSorted(c, 0.5), "chunk-err-p50-ms")
				b.ReportMetric(distribution.PercentileSorted(c, 0.99), "chunk-err-p99-ms")
				b.ReportMetric(distribution.PercentileSorted(i, 0.5), "itl-err-p50-ms")
				b.ReportMetric(distribution.PercentileSorted(i, 0.99), "itl-err-p99-ms")
			})
		}
	}
}
