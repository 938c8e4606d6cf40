package loadgen

import (
	"testing"
	"time"
)

// TestScheduleWatch feeds the watch recorded lags on an injected clock: it stops a
// run only once the lag has been over the threshold at every observation for the
// threshold, and says by how much and at which rates.
func TestScheduleWatch(t *testing.T) {
	const s = time.Second
	type obs struct {
		now, lag time.Duration
		sent     uint64
	}
	for _, tc := range []struct {
		name string
		obs  []obs
		stop int // index of the observation that stops the run; -1 = none
	}{
		{"on schedule", []obs{{1 * s, 0, 100}, {2 * s, -s / 10, 200}, {10 * s, s / 1000, 1000}}, -1},
		// Behind by more than 3 s from 5 s, and still at 8 s: stopped then.
		{"sustained", []obs{{4 * s, 2 * s, 100}, {5 * s, 4 * s, 120}, {7 * s, 5 * s, 160}, {8 * s, 6 * s, 180}}, 3},
		// Over the threshold long ago, but caught up in between: the window restarts.
		{"caught up", []obs{{1 * s, 4 * s, 10}, {3 * s, 1 * s, 100}, {4 * s, 4 * s, 110}, {6 * s, 5 * s, 150}, {7 * s, 5 * s, 160}}, 4},
		// Exactly at the threshold is not over it.
		{"at the threshold", []obs{{1 * s, 3 * s, 10}, {5 * s, 3 * s, 10}, {9 * s, 3 * s, 10}}, -1},
		// One stall (a stopped VM) over the threshold, then back: not stopped.
		{"one stall", []obs{{1 * s, 0, 10}, {6 * s, 5 * s, 10}, {6*s + s/10, 0, 500}}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &scheduleWatch{max: 3 * s}
			got := -1
			for i, o := range tc.obs {
				if w.observe(o.now, o.lag, o.sent) {
					got = i
					break
				}
			}
			if got != tc.stop {
				t.Errorf("stopped at observation %d, want %d", got, tc.stop)
			}
		})
	}
	w := &scheduleWatch{max: 3 * s}
	w.observe(5*s, 3100*time.Millisecond, 1000)
	if !w.observe(10*s, 4200*time.Millisecond, 1000+5*1120) {
		t.Fatal("not stopped")
	}
	want := "schedule 4.2s behind for 5s at 2,000 req/s offered, 1,120 achieved: the client cannot keep up"
	if got := w.reason(10*s, 4200*time.Millisecond, 1000+5*1120, 2000); got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
}

// TestMaxScheduleLagDefault: zero is the default, negative switches the watch off.
func TestMaxScheduleLagDefault(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: DefaultMaxScheduleLag, -1: 0, 500 * time.Millisecond: 500 * time.Millisecond} {
		c := Config{Stop: Stop{MaxScheduleLag: in}}
		if got := c.maxScheduleLag(); got != want {
			t.Errorf("maxScheduleLag(%v) = %v, want %v", in, got, want)
		}
	}
}

// TestSpanRates: the offered and achieved rates of the measured sends: equal for a
// client late by a constant, lower achieved for one falling behind.
func TestSpanRates(t *testing.T) {
	ms := time.Millisecond
	var m spanMeter
	m.begin()
	for k := range 11 { // due every 10 ms (100 req/s), each sent 5 ms late
		m.add(time.Duration(k)*10*ms, time.Duration(k)*10*ms+5*ms)
	}
	if o, a := m.rates(); o != 100 || a != 100 {
		t.Errorf("constant lateness: offered %v, achieved %v; want 100, 100", o, a)
	}
	var b spanMeter
	b.begin()
	for k := range 11 { // due every 10 ms, sent every 20 ms
		b.add(time.Duration(k)*10*ms, time.Duration(k)*20*ms)
	}
	if o, a := b.rates(); o != 100 || a != 50 {
		t.Errorf("falling behind: offered %v, achieved %v; want 100, 50", o, a)
	}
	var one spanMeter
	one.begin()
	one.add(0, ms)
	if o, a := one.rates(); o != 0 || a != 0 {
		t.Errorf("one request: %v, %v; want 0, 0", o, a)
	}
}
