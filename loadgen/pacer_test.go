package loadgen

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

type paceCase struct {
	name    string
	elapsed time.Duration
	sent    uint64
	wait    time.Duration
	stop    bool
}

func checkPace(t *testing.T, p Pacer, cases []paceCase) {
	t.Helper()
	for _, c := range cases {
		wait, stop := p.Pace(c.elapsed, c.sent)
		if d := wait - c.wait; d < -time.Microsecond || d > time.Microsecond || stop != c.stop {
			t.Errorf("%s: %v.Pace(%v, %d) = %v, %v; want %v, %v", c.name, p, c.elapsed, c.sent, wait, stop, c.wait, c.stop)
		}
	}
}

func TestConstantPacer(t *testing.T) {
	checkPace(t, ConstantPacer{Freq: 100}, []paceCase{
		{"first request goes at once", 0, 0, 0, false},
		{"second is due at 10ms", 0, 1, 10 * time.Millisecond, false},
		{"half way to the second", 5 * time.Millisecond, 1, 5 * time.Millisecond, false},
		{"behind schedule: no wait", time.Second, 3, 0, false},
		{"ahead of schedule", time.Second, 150, 500 * time.Millisecond, false},
	})
	checkPace(t, ConstantPacer{}, []paceCase{{"unlimited never waits", 0, 1 << 40, 0, false}})
	if got := (ConstantPacer{Freq: 20}).String(); got != "Constant{20 req/s}" {
		t.Errorf("String() = %q; want Constant{20 req/s}", got)
	}
	if got := (ConstantPacer{}).Rate(0); !math.IsInf(got, 1) {
		t.Errorf("unlimited Rate() = %v; want +Inf", got)
	}
}

func TestRampPacer(t *testing.T) {
	// 0 → 100 req/s over 10 s: N(t) = 5 t², 500 requests during the ramp.
	p := RampPacer{From: 0, To: 100, Over: 10 * time.Second}
	checkPace(t, p, []paceCase{
		{"first at once", 0, 0, 0, false},
		{"N(t)=5t²: request 5 at 1s", 0, 5, time.Second, false},
		{"request 20 at 2s", time.Second, 20, time.Second, false},
		{"request 500 ends the ramp at 10s", 0, 500, 10 * time.Second, false},
		{"then 100 req/s: request 600 at 11s", 0, 600, 11 * time.Second, false},
	})
	down := RampPacer{From: 100, To: 0, Over: 10 * time.Second} // N(t) = 100t − 5t²
	checkPace(t, down, []paceCase{
		{"request 95 at 1s", 0, 95, time.Second, false},
		{"after the ramp to 0 the pacer stops", 0, 500, 0, true},
	})
	if got := p.Rate(5 * time.Second); got != 50 {
		t.Errorf("Rate(5s) = %v; want 50", got)
	}
	if !strings.Contains(p.String(), "0→100") {
		t.Errorf("String() = %q", p.String())
	}
}

func TestTracePacer(t *testing.T) {
	p := TracePacer{Offsets: []time.Duration{0, time.Second, 3 * time.Second}, Speedup: 2}
	checkPace(t, p, []paceCase{
		{"first at once", 0, 0, 0, false},
		{"1s at speed-up 2 is 0.5s", 0, 1, 500 * time.Millisecond, false},
		{"3s at speed-up 2 is 1.5s", time.Second, 2, 500 * time.Millisecond, false},
		{"past the last offset: stop", 0, 3, 0, true},
	})
	if got := p.Rate(1600 * time.Millisecond); got != 1 {
		t.Errorf("Rate(1.6s) = %v; want 1 (one request in (0.6s, 1.6s])", got)
	}
}

func TestPoissonPacerPure(t *testing.T) {
	p := &PoissonPacer{Freq: 1000, Src: rand.NewPCG(1, 2)}
	w1, _ := p.Pace(0, 10)
	w2, _ := p.Pace(0, 10)
	if w1 != w2 || w1 <= 0 {
		t.Errorf("Pace(0, 10) twice = %v, %v; want the same positive wait", w1, w2)
	}
	// Same seed, same schedule.
	q := &PoissonPacer{Freq: 1000, Src: rand.NewPCG(1, 2)}
	if w, _ := q.Pace(0, 10); w != w1 {
		t.Errorf("same seed: Pace(0, 10) = %v; want %v", w, w1)
	}
	if w, _ := p.Pace(time.Hour, 10); w != 0 {
		t.Errorf("late: Pace(1h, 10) = %v; want 0", w)
	}
}

// TestRenewalMeans checks the mean and coefficient of variation of the gaps: Poisson
// has CV 1, Gamma with shape k has CV 1/sqrt(k). n = 20000; bounds are ±5 standard errors.
func TestRenewalMeans(t *testing.T) {
	for _, tc := range []struct {
		p      Pacer
		rate   float64
		wantCV float64
	}{
		{&PoissonPacer{Freq: 50, Src: rand.NewPCG(3, 4)}, 50, 1},
		{&GammaPacer{Freq: 50, Burstiness: 0.25, Src: rand.NewPCG(5, 6)}, 50, 2},
		{&GammaPacer{Freq: 50, Burstiness: 4, Src: rand.NewPCG(7, 8)}, 50, 0.5},
	} {
		const n = 20000
		var sum, sum2 float64
		prev := 0.0
		for k := uint64(1); k <= n; k++ {
			w, _ := tc.p.Pace(0, k)
			g := w.Seconds() - prev
			prev = w.Seconds()
			sum += g
			sum2 += g * g
		}
		mean := sum / n
		cv := math.Sqrt(sum2/n-mean*mean) / mean
		if want := 1 / tc.rate; math.Abs(mean-want) > 5*want*tc.wantCV/math.Sqrt(n) {
			t.Errorf("%v: mean gap = %v; want %v", tc.p, mean, want)
		}
		if math.Abs(cv-tc.wantCV) > 0.1*tc.wantCV {
			t.Errorf("%v: gap CV = %.3f; want %.3f", tc.p, cv, tc.wantCV)
		}
	}
}

func TestNewTracePacerFromRecording(t *testing.T) {
	recs := []record.Client{{Sent: 300 * time.Millisecond}, {Sent: 100 * time.Millisecond}, {Sent: 150 * time.Millisecond}}
	p := NewTracePacer(recs, 1)
	want := []time.Duration{0, 50 * time.Millisecond, 200 * time.Millisecond}
	for i, w := range want {
		if got, _ := p.Pace(0, uint64(i)); got != w {
			t.Errorf("replayed request %d due at %v; want %v", i, got, w)
		}
	}
	if _, stop := p.Pace(0, 3); !stop {
		t.Error("the replay did not stop after the recording")
	}
}
