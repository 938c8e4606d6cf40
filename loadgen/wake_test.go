package loadgen

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// TestWakeEarlyFollowsOvershoot feeds the estimate overshoots drawn uniformly from
// [lo, lo+20µs) (seeded), all within the cap: it settles near their wakeQuantile,
// follows them up when they grow and down when they shrink, and stays within
// [minWakeEarly, maxWakeEarly]. The failure path: an estimate that ignored its input
// would sit at initWakeEarly, 20µs, outside the first band checked (the median of
// [5µs, 25µs) is 15µs).
func TestWakeEarlyFollowsOvershoot(t *testing.T) {
	var w wakeEarly
	if got := w.get(); got != initWakeEarly {
		t.Fatalf("initial estimate %v; want %v", got, initWakeEarly)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const width = 20 * time.Microsecond // with lo up to 5µs, within maxWakeEarly
	feed := func(lo time.Duration, n int) time.Duration {
		var sum time.Duration
		for i := range n {
			w.observe(lo + time.Duration(rng.Int64N(int64(width))))
			if i >= n/2 {
				sum += w.get()
			}
		}
		return sum / time.Duration(n-n/2) // the estimate's mean over the second half
	}
	for _, lo := range []time.Duration{5 * time.Microsecond, 0, 5 * time.Microsecond} {
		want := lo + time.Duration(wakeQuantile*float64(width))
		if got := feed(lo, 4000); got < want-2*time.Microsecond || got > want+2*time.Microsecond {
			t.Errorf("overshoots uniform on [%v, %v): the estimate averages %v; want their %.2f quantile %v ± 2µs", lo, lo+width, got, wakeQuantile, want)
		}
	}
	for range 1000 {
		w.observe(time.Second) // a descheduled loop: capped
	}
	if got := w.get(); got != maxWakeEarly {
		t.Errorf("after huge overshoots the estimate is %v; want the cap %v", got, maxWakeEarly)
	}
	for range 1000 {
		w.observe(0)
	}
	if got := w.get(); got != minWakeEarly {
		t.Errorf("after exact wake-ups the estimate is %v; want the floor %v", got, minWakeEarly)
	}
}

// TestSleepUntilNeverEarly waits out 300 real due times 0–400 µs apart, on the precise
// path (sleep, then spin) and the coarse one, and checks none returns before its due
// time: the schedule's times are a lower bound on the sends. (How late is a wall-clock
// figure, printed by BenchmarkPacerWait, not asserted.) The failure path: a wait that
// returns at once is caught on the first due time in the future.
func TestSleepUntilNeverEarly(t *testing.T) {
	for _, spin := range []time.Duration{DefaultSpin, 0} {
		r := &openLoop{clock: &runClock{start: time.Now(), self: &selfMeter{}}, spin: spin}
		due := time.Millisecond
		for k := range 300 {
			due += time.Duration(k%5) * 100 * time.Microsecond
			if !r.sleepUntil(context.Background(), due) {
				t.Fatal("sleepUntil reported a cancelled context")
			}
			if now := r.clock.now(); now < due {
				t.Fatalf("spin %v: wait %d returned at %v, before its due time %v", spin, k, now, due)
			}
		}
	}
	r := &openLoop{clock: &runClock{start: time.Now(), self: &selfMeter{}}, spin: DefaultSpin}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r.sleepUntil(ctx, time.Hour) {
		t.Error("sleepUntil with a cancelled context reported a full wait")
	}
}

// poissonOvershoots waits out n due times of a Poisson schedule at rate (seeded) with
// sleep, called with the time left to each due time that has not passed, and returns
// each wait's overshoot (wake-up minus due time) in ms, in schedule order.
func poissonOvershoots(n int, rate float64, seed uint64, sleep func(time.Duration)) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	start := time.Now()
	due := time.Duration(0)
	over := make([]float64, 0, n)
	for range n {
		due += time.Duration(rng.ExpFloat64() / rate * 1e9)
		if d := due - time.Since(start); d > 0 {
			sleep(d)
		}
		over = append(over, float64(time.Since(start)-due)/1e6)
	}
	return over
}
