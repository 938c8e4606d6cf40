package check

import (
	"errors"
	"strings"
	"testing"
)

func TestQuantileNeed(t *testing.T) {
	for _, c := range []struct {
		p      float64
		atMost bool
		conf   float64
		want   int
	}{{0.99, true, 0.95, 299}, {0.99, true, 0, 299}, {0.9, true, 0.95, 29}, {0.5, true, 0.95, 5}, {0.1, false, 0.95, 29}, {1, true, 0.95, 0}, {0, false, 0.95, 0}} {
		if got := QuantileNeed(c.p, c.atMost, c.conf); got != c.want {
			t.Errorf("QuantileNeed(%v, %v, %v) = %d, want %d", c.p, c.atMost, c.conf, got, c.want)
		}
	}
}

// TestTailSamples: a p99 rule on 100 requests is refused as an invalid measurement, not
// a breach; on 299 it stands.
func TestTailSamples(t *testing.T) {
	r := MustRule("ttft_p99 <= 250ms")
	m, p, atMost, ok := r.Quantile()
	if !ok || m != TTFT || p != 0.99 || !atMost {
		t.Fatalf("Quantile() = %v %v %v %v", m, p, atMost, ok)
	}
	v := TailSamples(r.String(), p, atMost, 100, 0)
	if v.Pass || v.Status != Invalid || !errors.Is(v.Err(), ErrInvalidRun) || errors.Is(v.Err(), ErrBreached) ||
		!strings.Contains(v.String(), "100 measured, 299 needed") {
		t.Errorf("p99 on 100 requests:\n%s", v)
	}
	if v := TailSamples(r.String(), p, atMost, 299, 0); !v.Pass || v.Err() != nil {
		t.Errorf("p99 on 299 requests:\n%s", v)
	}
	if _, _, _, ok := MustRule("error_rate <= 0").Quantile(); ok {
		t.Error("an error-rate rule claims a quantile")
	}
}

// TestQuantileVerdictInterval: a quantile verdict gives its order-statistic interval,
// and says when a side is not bounded by the data.
func TestQuantileVerdictInterval(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i+1) / 1000
	}
	v := QuantileAtMost(Sample{Name: "TTFT", Unit: Seconds, Values: xs}, 0.5, 1)
	if !strings.Contains(v.String(), "interval:   95% [469ms, 532ms] (order statistics, n=1000)") {
		t.Errorf("p50 of 1..1000 ms:\n%s", v)
	}
	v = QuantileAtMost(Sample{Name: "TTFT", Unit: Seconds, Values: xs[:100]}, 0.99, 1)
	if !strings.Contains(v.String(), "unbounded] (order statistics, n=100); an upper bound needs n >= 368") {
		t.Errorf("p99 of 100 values:\n%s", v)
	}
}
