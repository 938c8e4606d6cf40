package perftest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/record"
)

// AssertISL checks that the input lengths fit target (e.g. distribution.Normal{Mu:
// 128, Sigma: 20}) turned into token lengths by distribution.Length's rounding rule,
// with a discrete-aware goodness-of-fit test at alpha = 0.01. With the mock it tests
// what the server received (its own tokenizer's count of the rendered prompt, less the
// chat template's overhead on single-turn chat); with a real endpoint, what the client
// sent. See [run.Outcome.Lengths].
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

// Regression configures AssertNoRegressionWith; see [check.Regression]. Quantile
// picks the run statistic compared (0 or 0.5 = p50, 0.9 = p90, 0.99 = p99), MinEffect
// is the gate's margin δ (0 = 5%), Alpha its family alpha (0 = 0.01); HigherIsBetter
// is not needed (each statistic knows its direction).
//
// Deprecated: use [Gate], the one gate configuration: Margin for MinEffect, Alpha,
// IgnoreWorkload, and Primary naming the statistics (e.g. "ttft_p90") for Quantile;
// removed in v0.3.0.
type Regression = check.Regression

// AssertNoRegression compares r with a baseline run (typically perftest.Load(t,
// "testdata/baseline")) by the run-level regression gate, one run per side, on TTFT,
// ITL and request latency p50 and the run's output token throughput, or on the given
// metrics: a metric with run statistics (TTFT, ITL, Latency, a metric added to the
// catalogue; [OutputThroughput] for the run's output token throughput) by the gate;
// any other (ISL, OSL, OutputTPS: the per-user throughput, as in rules) request by
// request, as [Result.AssertNoRegressionWith] says. A regression is a ratio
// current/baseline worse by at least 5% whose interval excludes no change.
//
// One run per side cannot measure run-to-run noise, and a real server's runs differ
// by several percent: the verdict says so, and without noise to go on it is
// inconclusive (which passes, logged) unless the baseline is a K-run baseline
// ([LoadBaseline]; its between-run CV is then used).
//
// Deprecated: one run per side rarely decides; use the K-run gate [AssertNoRegression]
// (which also takes a one-run baseline such as r's: it then runs the current side
// g.Runs times); removed in v0.3.0.
func (r *Result) AssertNoRegression(t testing.TB, baseline *Result, metrics ...check.Metric) bool {
	t.Helper()
	return r.oneRunGate(t, baseline, check.Regression{}, metrics)
}

// AssertNoRegressionWith is AssertNoRegression with explicit settings (quantile,
// margin, alpha), and workload settings that may differ (reg.IgnoreWorkload).
//
// Both forms first compare the two runs' workloads ([scenario.DiffWorkload]: the
// tokenizer, ISL/OSL, seed, corpus, endpoint kind, load mode, concurrency or rate;
// not where the requests went nor what answered): a baseline of another workload
// proves nothing about this run, so it fails with "the baseline is another workload"
// and the differences, and the metrics are not compared. A baseline without its
// scenario (a bare client recording) is compared on the metrics alone, and Logf says
// so. ISL and OSL, which are workload rather than performance, keep the
// request-level test ([check.NoRegression]: Mann-Whitney at alpha, a shift of at
// least MinEffect).
//
// Deprecated: use the K-run gate [AssertNoRegression], configured by [Gate]; removed
// in v0.3.0.
func (r *Result) AssertNoRegressionWith(t testing.TB, baseline *Result, reg Regression, metrics ...check.Metric) bool {
	t.Helper()
	return r.oneRunGate(t, baseline, reg, metrics)
}

// oneRunGate is the one-run regression gate of [Result.AssertNoRegression] and
// [Result.AssertNoRegressionWith].
func (r *Result) oneRunGate(t testing.TB, baseline *Result, reg check.Regression, metrics []check.Metric) bool {
	t.Helper()
	if len(metrics) == 0 {
		metrics = []check.Metric{TTFT, ITL, Latency, OutputThroughput}
	}
	q := reg.Quantile
	if q == 0 {
		q = 0.5
	}
	if q != 0.5 && q != 0.9 && q != 0.99 {
		t.Fatalf("perftest: Regression.Quantile %v: the run-level gate compares p50, p90 or p99 (0.5, 0.9, 0.99)", reg.Quantile)
	}
	g := Gate{Margin: reg.MinEffect, Alpha: reg.Alpha, IgnoreWorkload: reg.IgnoreWorkload, Primary: []string{}}
	var pooled []check.Metric
	for _, m := range metrics {
		if st, ok := runStatOf(m, q); ok {
			g.Primary = append(g.Primary, st)
		} else {
			pooled = append(pooled, m)
		}
	}
	cur := run.SeriesOf(r.Outcome)
	cur.Dir, cur.Dirs = r.Dir, []string{"."}
	bs := baseline.series()
	if baseline.Dir != "" {
		if _, err := os.Stat(filepath.Join(baseline.Dir, run.ScenarioFile)); err != nil {
			t.Logf("perftest: baseline %s has no %s: its workload is not compared", baseline.Dir, run.ScenarioFile)
			bs.Scenario, bs.Workload = cur.Scenario, cur.Workload
		}
	}
	res := gate.Compare(bs, cur, g, 0)
	ok := true
	if len(g.Primary) > 0 || res.Invalid() {
		ok = reportGate(t, res, r.rerun)
	}
	if res.Invalid() {
		return false
	}
	base, now := baseline.Requests(), r.Requests()
	for _, m := range pooled {
		v := check.NoRegression(m.Sample(base), m.Sample(now), reg)
		if !v.Pass && baseline.Dir != "" {
			v.Evidence = append(v.Evidence, check.Line{Label: "baseline run", Text: baseline.Dir})
		}
		ok = r.report(t, v, false) && ok
	}
	return ok
}

// series is r as a gate's baseline: its run, with its directory's runs when the
// directory holds several (a K-run baseline read by [Load]), or with the between-run CV
// a one-run baseline's runs.json stores.
func (r *Result) series() *gate.Series {
	bs := run.SeriesOf(r.Outcome)
	if r.Dir != "" {
		bs.Dir, bs.Dirs = r.Dir, []string{"."}
		if k, err := run.LoadSeries(r.Dir); err == nil && k.Len() > 1 {
			bs = k // with its own runs' directories
		} else if err == nil {
			bs.PriorCV = k.PriorCV // a one-run baseline's stored CV
		}
	}
	return bs
}

// OutputThroughput names, among [Result.AssertNoRegression]'s metrics, the run's total
// output token throughput (output_token_throughput: output tokens of the successful
// requests / benchmark duration), which the gate compares as its statistic output_tps.
// It is a run-level metric, not a per-request one: bounds and quantile rules do not
// take it (the rule output_token_throughput>=X does). OutputTPS used to stand for it
// in AssertNoRegression's metrics while meaning the per-user throughput everywhere
// else; it now means the per-user throughput there too.
const OutputThroughput check.Metric = record.MetricOutputTokenThroughput

// runStatOf returns the name of the run statistic the gate compares for m at the
// quantile q (0.5, 0.9, 0.99): a per-request metric's quantile ("ttft_p50"), or a
// run-level metric's value (OutputThroughput: "output_tps"); false when runs record none
// for m.
func runStatOf(m check.Metric, q float64) (string, bool) {
	name, at := string(m), 0.0
	if d, ok := metric.LookupRule(string(m)); ok {
		name, at = d.Name, q
	}
	for _, st := range gate.RunStatList() {
		if st.Metric == name && st.Quantile == at {
			return st.Name, true
		}
	}
	return "", false
}

// A Baseline is what a regression gate ([AssertNoRegression]) compares with and what
// [SaveBaseline] saves: [*Runs], K runs of one workload ([LoadBaseline] of a
// directory, perfhistory.Baseline of a history, [RunRuns]), or a [*Result], one run
// ([Load], [Run]).
type Baseline interface {
	outcomes() []*run.Outcome
	series() *gate.Series
}

func (r *Result) outcomes() []*run.Outcome { return []*run.Outcome{r.Outcome} }

// SaveBaseline writes into dir what a regression gate needs to read res back as its
// baseline, and nothing more. For one run ([*Result]): the client recording, the
// scenario, the run statistics, the mock's recording when there is one, and the
// manifest (without which Load takes the run for an interrupted one), read back by
// [Load] or [LoadBaseline]. For K runs ([*Runs]): each run's files in dir/run-001, …,
// and runs.json, read back by [LoadBaseline]. Other files in dir are left alone. It
// logs the files and their size, and calls t.Fatalf if they cannot be written.
func SaveBaseline(t testing.TB, res Baseline, dir string) {
	t.Helper()
	outs := res.outcomes()
	var files []string
	var size int64
	var err error
	name := ""
	switch {
	case len(outs) == 1:
		files, size, err = run.SaveBaseline(outs[0], dir)
		name = outs[0].Scenario.Name
	case len(outs) > 1:
		_, size, err = run.SaveSeries(dir, outs...)
		name = fmt.Sprintf("%s (%d runs)", outs[0].Scenario.Name, len(outs))
		files = []string{fmt.Sprintf("run-001 … run-%03d", len(outs)), gate.RunsFile}
	default:
		err = fmt.Errorf("scenario: save baseline: no runs (a baseline read from disk is saved already)")
	}
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return
	}
	t.Logf("perftest: saved baseline %q to %s: %s, %s", name, dir, strings.Join(files, ", "), byteSize(size))
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
