package check

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// latencies draws n log-normal-ish latencies around median seconds, seeded.
func latencies(n int, median float64, seed uint64) Sample {
	r := rand.New(rand.NewPCG(seed, 9))
	s := Sample{Name: "TTFT", Unit: Seconds}
	for range n {
		s.Values = append(s.Values, median*(1+0.1*r.NormFloat64()))
	}
	return s
}

func TestNoRegression(t *testing.T) {
	base := latencies(300, 0.100, 1)
	// Same distribution, another seed: noise must pass.
	if v := NoRegression(base, latencies(300, 0.100, 2), Regression{}); !v.Pass {
		t.Errorf("noise failed the regression gate:\n%s", v)
	}
	// A 2% shift is detectable at n=3000 but smaller than the 5% minimum effect.
	if v := NoRegression(latencies(3000, 0.100, 3), latencies(3000, 0.102, 4), Regression{}); !v.Pass {
		t.Errorf("a 2%% shift failed with MinEffect 5%%:\n%s", v)
	}
	// A 10% slowdown fails.
	v := NoRegression(base, latencies(300, 0.110, 5), Regression{})
	if v.Pass {
		t.Fatalf("a 10%% slowdown passed:\n%s", v)
	}
	golden(t, "regression_fail", v.String())
	// A 10% shift on 5 requests is not significant: it passes, and says so.
	v = NoRegression(latencies(5, 0.100, 6), latencies(5, 0.110, 7), Regression{})
	if !v.Pass || !strings.Contains(v.Summary, "no significant regression") {
		t.Errorf("n=5: got %s", v.Summary)
	}
	// Throughput: higher is better; a 10% drop fails.
	tp := func(s Sample) Sample { s.Name, s.Unit = "output tokens/s per user", TokPerSec; return s }
	if v := NoRegression(tp(latencies(300, 100, 8)), tp(latencies(300, 90, 9)), Regression{HigherIsBetter: true}); v.Pass {
		t.Errorf("a 10%% throughput drop passed:\n%s", v)
	}
	if v := NoRegression(tp(latencies(300, 100, 8)), tp(latencies(300, 110, 9)), Regression{HigherIsBetter: true}); !v.Pass || !strings.Contains(v.Summary, "improved by") {
		t.Errorf("a 10%% throughput gain: want a pass that says improved:\n%s", v)
	}
	// A 10% speed-up passes and says by how much.
	v = NoRegression(base, latencies(300, 0.090, 10), Regression{})
	if !v.Pass || !strings.HasPrefix(v.Summary, "TTFT improved by 10.1%: p50 89.6ms vs baseline 99.7ms") {
		t.Errorf("a 10%% speed-up: got %s", v.Summary)
	}
	// Noise is not an improvement.
	if v := NoRegression(base, latencies(300, 0.100, 2), Regression{}); strings.Contains(v.Summary, "improved") {
		t.Errorf("noise reads as an improvement: %s", v.Summary)
	}
}

func TestSameDistribution(t *testing.T) {
	a := latencies(500, 128, 1).Values
	if v := SameDistribution("ISL", Tokens, a, latencies(500, 128, 2).Values, "aiperf", "vllm", 0); !v.Pass {
		t.Errorf("same distribution rejected:\n%s", v)
	}
	v := SameDistribution("ISL", Tokens, a, latencies(500, 140, 3).Values, "aiperf", "vllm", 0)
	if v.Pass {
		t.Fatalf("shifted distribution accepted:\n%s", v)
	}
	golden(t, "same_distribution_fail", v.String())
}
