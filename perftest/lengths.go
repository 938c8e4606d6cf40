package perftest

import (
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest/check"
)

// AssertISL checks that the input lengths fit target (e.g. distribution.Normal{Mu:
// 128, Sigma: 20}) turned into token lengths by distribution.Length's rounding rule,
// with a discrete-aware goodness-of-fit test at alpha = 0.01. With the mock it tests
// what the server received (its own tokenizer's count of the rendered prompt, less the
// chat template's overhead on single-turn chat); with a real endpoint, what the client
// sent. See [scenario.Outcome.Lengths].
func (r *Result) AssertISL(t testing.TB, target distribution.Distribution) bool {
	t.Helper()
	return r.AssertLengthFit(t, ISL, distribution.Length{Dist: target}, 0)
}

// RequireISL is AssertISL, then t.FailNow if the lengths do not fit.
func (r *Result) RequireISL(t testing.TB, target distribution.Distribution) {
	t.Helper()
	r.lengthFit(t, ISL, distribution.Length{Dist: target}, 0, true)
}

// AssertOSL checks that the output lengths fit target, as AssertISL does for inputs:
// with the mock, what it generated; with a real endpoint, what the client counted.
func (r *Result) AssertOSL(t testing.TB, target distribution.Distribution) bool {
	t.Helper()
	return r.AssertLengthFit(t, OSL, distribution.Length{Dist: target}, 0)
}

// RequireOSL is AssertOSL, then t.FailNow if the lengths do not fit.
func (r *Result) RequireOSL(t testing.TB, target distribution.Distribution) {
	t.Helper()
	r.lengthFit(t, OSL, distribution.Length{Dist: target}, 0, true)
}

// AssertLengthFit is the general form of AssertISL and AssertOSL: m is ISL or OSL,
// target a full distribution.Length (with its Min and Max clamps), alpha the test's
// level (0 = check.DefaultAlpha).
func (r *Result) AssertLengthFit(t testing.TB, m check.Metric, target distribution.Length, alpha float64) bool {
	t.Helper()
	return r.lengthFit(t, m, target, alpha, false)
}

func (r *Result) lengthFit(t testing.TB, m check.Metric, target distribution.Length, alpha float64, fatal bool) bool {
	t.Helper()
	src, xs := r.Lengths(m)
	v := check.LengthFit(m.Label()+" ("+src+")", xs, target, alpha)
	return r.report(t, v, fatal)
}

// AssertSameWorkload checks that r and other describe the same workload: their ISL
// and OSL distributions are not told apart by a two-sample KS test at alpha = 0.01
// (lengths from each run's server recording when it has one). Use it to show that two
// tools, or two versions, sent the same load.
func (r *Result) AssertSameWorkload(t testing.TB, other *Result) bool {
	t.Helper()
	ok := true
	for _, m := range []check.Metric{ISL, OSL} {
		_, a := r.Lengths(m)
		_, b := other.Lengths(m)
		v := check.SameDistribution(m.Label(), check.Tokens, ints(a), ints(b), r.Scenario.Name, other.Scenario.Name, 0)
		ok = r.report(t, v, false) && ok
	}
	return ok
}

func ints(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// Regression configures AssertNoRegressionWith; see [check.Regression].
type Regression = check.Regression

// AssertNoRegression compares r with a baseline run (typically perftest.Load(t,
// "testdata/baseline")) on TTFT, ITL and request latency, or on the given metrics: each
// fails only if its median rose by at least 5% and a Mann-Whitney U test says the change
// is real at alpha = 0.01. Noise passes; a 10% slowdown over a few hundred requests
// fails.
func (r *Result) AssertNoRegression(t testing.TB, baseline *Result, metrics ...check.Metric) bool {
	t.Helper()
	return r.AssertNoRegressionWith(t, baseline, Regression{}, metrics...)
}

// AssertNoRegressionWith is AssertNoRegression with explicit thresholds (quantile,
// minimum effect, alpha). For OutputTPS, higher is better whatever reg says.
func (r *Result) AssertNoRegressionWith(t testing.TB, baseline *Result, reg Regression, metrics ...check.Metric) bool {
	t.Helper()
	if len(metrics) == 0 {
		metrics = []check.Metric{TTFT, ITL, Latency}
	}
	cur, base := r.Requests(), baseline.Requests()
	ok := true
	for _, m := range metrics {
		rg := reg
		rg.HigherIsBetter = reg.HigherIsBetter || m == OutputTPS
		b, c := m.Sample(base), m.Sample(cur)
		v := check.NoRegression(b, c, rg)
		if !v.Pass && baseline.Dir != "" {
			v.Evidence = append(v.Evidence, check.Line{Label: "baseline run", Text: baseline.Dir})
		}
		ok = r.report(t, v, false) && ok
	}
	return ok
}
