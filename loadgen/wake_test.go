package loadgen

import (
	"context"
	"testing"
	"time"
)

// TestWakeEarlyFollowsOvershoot feeds the estimate fixed overshoots: it settles near a
// steady overshoot, rises quickly when sleeps overshoot more, falls slowly when they
// overshoot less, and stays within [minWakeEarly, maxWakeEarly]. The failure path: an
// estimate that ignored its input would sit at initWakeEarly, which is checked against.
func TestWakeEarlyFollowsOvershoot(t *testing.T) {
	var w wakeEarly
	if got := w.get(); got != initWakeEarly {
		t.Fatalf("initial estimate %v; want %v", got, initWakeEarly)
	}
	for range 200 {
		w.observe(20 * time.Microsecond)
	}
	if got := w.get(); got < 20*time.Microsecond || got > 22*time.Microsecond || got == initWakeEarly {
		t.Errorf("after 200 overshoots of 20µs the estimate is %v; want 20–22µs", got)
	}
	w.observe(60 * time.Microsecond) // one larger overshoot: up by an eighth of the gap
	if got := w.get(); got < 24*time.Microsecond || got > 27*time.Microsecond {
		t.Errorf("after one 60µs overshoot the estimate is %v; want ≈ 25µs", got)
	}
	for range 1000 {
		w.observe(time.Second) // a descheduled pacer: capped
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
		r := &runner{clock: &runClock{start: time.Now(), self: &selfMeter{}}, spin: spin}
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
	r := &runner{clock: &runClock{start: time.Now(), self: &selfMeter{}}, spin: DefaultSpin}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r.sleepUntil(ctx, time.Hour) {
		t.Error("sleepUntil with a cancelled context reported a full wait")
	}
}
