package validity

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/perftest/check"
)

// steadyPoints builds n requests over span seconds whose TTFT is base·(1 + drift·t/span)
// with noise (seeded) and ITL a tenth of it.
func steadyPoints(n int, span, base, drift, noise float64, seed uint64) []Point {
	rng := rand.New(rand.NewPCG(seed, 1))
	pts := make([]Point, n)
	for i := range pts {
		tt := span * float64(i) / float64(n)
		v := base * (1 + drift*tt/span) * (1 + noise*rng.NormFloat64())
		pts[i] = Point{Sent: time.Duration(tt * float64(time.Second)), TTFT: v, ITL: v / 10}
	}
	return pts
}

// TestSteadyConstructed: a 20% rise over the window is not steady; a flat series with
// the same noise is; a 2% rise is steady (below the 5% drift); too few requests leave
// it unchecked.
func TestSteadyConstructed(t *testing.T) {
	v := Steady(steadyPoints(400, 20, 0.1, 0.2, 0.05, 1), DefaultMaxDrift)
	if v.Pass || v.Status != check.Invalid || !strings.Contains(v.Summary, "not steady: TTFT median drifted +") || !strings.Contains(v.String(), "windows of") {
		t.Errorf("a 20%% rise:\n%s", v)
	}
	if v.Value < 0.15 || v.Value > 0.25 {
		t.Errorf("drift %v, want about 0.2", v.Value)
	}
	for seed := uint64(1); seed <= 20; seed++ {
		if v := Steady(steadyPoints(400, 20, 0.1, 0, 0.05, seed), DefaultMaxDrift); !v.Pass {
			t.Errorf("seed %d: a flat series:\n%s", seed, v)
		}
	}
	if v := Steady(steadyPoints(400, 20, 0.1, 0.02, 0.01, 1), DefaultMaxDrift); !v.Pass {
		t.Errorf("a 2%% rise (significant, below 5%%):\n%s", v)
	}
	if v := Steady(steadyPoints(30, 20, 0.1, 0.5, 0, 1), DefaultMaxDrift); !v.Pass || !strings.Contains(v.Summary, "not checked") {
		t.Errorf("30 requests:\n%s", v)
	}
}
