package perftest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
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
// minimum effect, alpha), and workload settings that may differ (reg.IgnoreWorkload).
// For OutputTPS, higher is better whatever reg says.
//
// Both forms first compare the two runs' workloads ([scenario.DiffWorkload]: the
// tokenizer, ISL/OSL, endpoint, load mode, concurrency or rate, mock configuration):
// a baseline of another workload proves nothing about this run, so it fails with
// "baseline is another workload:" and the differences, and the metrics are not
// compared. A baseline without its scenario (a bare client recording) is compared
// on the metrics alone, and Logf says so.
func (r *Result) AssertNoRegressionWith(t testing.TB, baseline *Result, reg Regression, metrics ...check.Metric) bool {
	t.Helper()
	if v, ok := r.sameWorkload(baseline, reg.IgnoreWorkload); !ok {
		return r.report(t, v, false)
	} else if v.Summary != "" {
		t.Logf("perftest: %s", v.Summary)
	}
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

// sameWorkload compares r's workload with the baseline's. It returns a failing verdict
// when they differ, and otherwise a passing one whose summary is a note (or empty).
func (r *Result) sameWorkload(baseline *Result, ignore []string) (check.Verdict, bool) {
	if baseline.Dir != "" {
		if _, err := os.Stat(filepath.Join(baseline.Dir, scenario.ScenarioFile)); err != nil {
			return check.Verdict{Check: "workload", Pass: true, Summary: fmt.Sprintf("baseline %s has no %s: its workload is not compared", baseline.Dir, scenario.ScenarioFile)}, true
		}
	}
	ds := scenario.DiffWorkload(baseline.Scenario, r.Scenario, ignore...)
	if len(ds) == 0 {
		return check.Verdict{Check: "workload", Pass: true}, true
	}
	var fields []string
	v := check.Verdict{Check: "workload", Value: float64(len(ds)), Unit: check.None}
	for i, d := range ds {
		fields = append(fields, d.Field)
		label := ""
		if i == 0 {
			label = "differs"
		}
		v.Evidence = append(v.Evidence, check.Line{Label: label, Text: d.String()})
	}
	v.Summary = "baseline is another workload: " + strings.Join(fields, ", ") + " differ"
	if len(ds) == 1 {
		v.Summary = "baseline is another workload: " + fields[0] + " differs"
	}
	where := "the baseline"
	if baseline.Dir != "" {
		where = baseline.Dir
	}
	v.Evidence = append(v.Evidence,
		check.Line{Label: "baseline", Text: where + ": " + baseline.Scenario.Describe()},
		check.Line{Label: "hint", Text: "re-record the baseline with this workload, or name the settings that may differ in Regression.IgnoreWorkload"})
	return v, false
}

// SaveBaseline writes into dir what [Load] needs to read res back as a baseline for
// [Result.AssertNoRegression], and nothing more: the client recording, the scenario,
// the mock's recording when there is one, and the manifest (without which Load takes
// the run for an interrupted one). Other files in dir are left alone. It logs the
// files and their size, and calls t.Fatalf if they cannot be written.
func SaveBaseline(t testing.TB, res *Result, dir string) {
	t.Helper()
	files, size, err := scenario.SaveBaseline(res.Outcome, dir)
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return
	}
	t.Logf("perftest: saved baseline %q to %s: %s, %s", res.Scenario.Name, dir, strings.Join(files, ", "), byteSize(size))
}

// byteSize prints n bytes as "812 B", "3.1 KB" or "2.2 MB".
func byteSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
