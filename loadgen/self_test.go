package loadgen

import (
	"testing"
	"time"
)

func TestLagHistQuantiles(t *testing.T) {
	var h lagHist
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Microsecond)
	}
	s := h.stats()
	within := func(got, want time.Duration) bool {
		return got >= want && float64(got) <= float64(want)*lagGrowth*1.001
	}
	if s.N != 1000 || s.Max != time.Millisecond || !within(s.P50, 500*time.Microsecond) || !within(s.P99, 990*time.Microsecond) {
		t.Errorf("stats of 1..1000 µs: %+v; want n=1000, p50 ≈ 500µs, p99 ≈ 990µs (+2%%), max 1ms", s)
	}
	var e lagHist
	if s := e.stats(); s != (LagStats{}) {
		t.Errorf("empty histogram: %+v", s)
	}
	var neg lagHist
	neg.add(-time.Second) // a clock step: counted as no delay
	if s := neg.stats(); s.N != 1 || s.Max != 0 || s.P99 != 0 {
		t.Errorf("a negative delay: %+v", s)
	}
}

// TestSelfSendLagScope: the send lag is measured on the measured first turns of an
// open-loop run without a ceiling, and nowhere else; CPU and elapsed time always.
func TestSelfSendLagScope(t *testing.T) {
	open, _ := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Rate: 500}, Stop: Stop{Requests: 200, WarmupRequests: 20}}, time.Millisecond)
	if s := open.Self; s.SendLag.N != 200 || s.SendLag.Max != 0 || s.Elapsed <= 0 || s.CPUs <= 0 {
		t.Errorf("open loop in virtual time: %+v; want 200 lags (warm-up excluded), all 0 (virtual time is never late)", s)
	}
	capped, _ := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Rate: 500, Concurrency: 4}, Stop: Stop{Requests: 50}}, time.Millisecond)
	closed, _ := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Concurrency: 4}, Stop: Stop{Requests: 50}}, time.Millisecond)
	if capped.Self.SendLag.N != 0 || closed.Self.SendLag.N != 0 {
		t.Errorf("send lag measured with a ceiling (%d) or in a closed loop (%d)", capped.Self.SendLag.N, closed.Self.SendLag.N)
	}
}
