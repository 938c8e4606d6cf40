package perftest

import (
	"cmp"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/reportgen"
)

// Gate configures a run-level regression gate; see [gate.Gate]. Its zero value
// is the default: δ = 5%, family alpha 0.01 over TTFT p50, ITL p50, request latency
// p50 and output token throughput, 5 runs per side doubling to 20 while inconclusive,
// and an inconclusive answer passes (logged) unless FailInconclusive.
type Gate = gate.Gate

// Runs are K runs of one seeded workload: their statistics (the embedded
// [gate.Series]: Runs, Dirs, Scenario as JSON, Values, CV) and outcomes (metrics and
// verdicts; the records stay on disk, read back by run.SeriesOutcome). Runs are
// the usual [Baseline]: saved by [SaveBaseline], read by [LoadBaseline].
type Runs struct {
	*gate.Series
	// Outcomes are the runs' outcomes, in run order (nil for a Runs read from disk).
	Outcomes []*run.Outcome
	rerun    string
}

func (r *Runs) outcomes() []*run.Outcome { return r.Outcomes }

func (r *Runs) series() *gate.Series { return r.Series }

// RunRuns runs sc k times (0 = gate.DefaultRuns), each the same seeded workload,
// into a fresh artifact directory (run-001, …, and runs.json), and returns the runs.
// Each run is checked as [Run] checks one: the preflight of a real endpoint first, and
// [run.Outcome.Verdicts] of check.KindHealth (a run with nothing completed, or with failed requests
// beyond the objectives' limit, fails the test). A run that cannot be set up is
// t.Fatalf. Against a server with a prefix cache, set sc.Validity.CacheBust: each run
// then starts every prompt with its own salt, so no run is served from another's.
func RunRuns(t testing.TB, sc Scenario, k int, opts ...run.RunOption) *Runs {
	t.Helper()
	dir := preflightDir(t, sc)
	s, outs, err := run.RunSeries(t.Context(), sc, cmp.Or(k, gate.DefaultRuns), dir, seriesOptions(t, opts))
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return nil
	}
	t.Logf("perftest: scenario %q: %d runs; artifacts: %s (%s)", cmp.Or(sc.Name, scenario.DefaultName), s.Len(), dir, artifactsNote(artifactsKept()))
	return &Runs{Series: s, Outcomes: outs, rerun: rerunHint(t, sc.Seed)}
}

// preflightDir checks a real endpoint and claims the artifact directory of sc's runs.
func preflightDir(t testing.TB, sc Scenario) string {
	t.Helper()
	if err := run.Preflight(t.Context(), sc); err != nil {
		t.Fatalf("perftest: scenario %q: %v", cmp.Or(sc.Name, scenario.DefaultName), strings.TrimPrefix(err.Error(), run.ErrPreflight.Error()+": "))
	}
	dir, err := artifactDir(t.ArtifactDir(), sc.Name)
	if err != nil {
		t.Fatalf("perftest: scenario %q: artifacts: %v", sc.Name, err)
	}
	return dir
}

// seriesOptions runs each run with opts and reports its Health on t.
func seriesOptions(t testing.TB, opts []run.RunOption) run.SeriesOptions {
	so := run.SeriesOptions{Run: func(ctx context.Context, sc scenario.Scenario, dir string) (*run.Outcome, error) {
		out, err := run.Run(ctx, sc, dir, opts...)
		if err != nil {
			return out, err
		}
		for _, v := range out.Verdicts(check.KindHealth) {
			if !v.Pass {
				t.Errorf("perftest: %s", v.With(out.Context("")))
			}
		}
		return out, nil
	}}
	return so
}

// LoadBaseline reads a baseline directory for [AssertNoRegression]: a series of runs
// (runs.json, or run-NNN directories as `perfgate profile --num-runs K --artifact-dir
// DIR` writes them) or one run. It calls t.Fatalf if the directory holds no runs.
func LoadBaseline(t testing.TB, dir string) *Runs {
	t.Helper()
	s, err := run.LoadSeries(dir)
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return nil
	}
	return &Runs{Series: s, rerun: rerunHint(t, seriesSeed(s))}
}

// AssertNoRegression is the regression gate of a test: it runs sc for g.Runs runs
// (0 = 5), each the same seeded workload, and compares them with baseline, adding runs
// while a primary statistic is inconclusive (g.Runs → 2× → 4× … up to g.MaxRuns, 0 =
// 20; g.MaxRuns = g.Runs adds none; [run.GateRuns]), each look at its share of the
// family alpha. Each statistic's ratio current/baseline is judged with its interval
// ([gate.Compare]); the gate logs its one-line answer and each statistic's verdict,
// reports a failing gating statistic with t.Errorf (an inconclusive one only with
// g.FailInconclusive), writes gate_report.html beside the current runs, and returns the
// current runs (for [SaveBaseline]) and whether the gate passed.
//
// The baseline is K runs ([LoadBaseline] of a directory, perfhistory.Baseline of a
// history, or [RunRuns]) or one run ([Load], [Run]). A baseline of another workload
// ([scenario.DiffWorkload]: not its URLs or its server) is refused before any run. Each
// run is checked as [Run] checks one: the preflight of a real endpoint first, and its
// health ([run.Outcome.Verdicts] of check.KindHealth) after.
//
//	base := perftest.LoadBaseline(t, "testdata/baseline") // saved by SaveBaseline(t, perftest.RunRuns(t, sc, 5), …)
//	perftest.AssertNoRegression(t, sc, base, perftest.Gate{})
func AssertNoRegression(t testing.TB, sc Scenario, baseline Baseline, g Gate, opts ...run.RunOption) (*Runs, bool) {
	t.Helper()
	dir := preflightDir(t, sc)
	res, err := run.GateRuns(t.Context(), sc, baseline.series(), dir, g, seriesOptions(t, opts))
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return nil, false
	}
	cur := &Runs{Series: res.Current, rerun: rerunHint(t, sc.Seed)}
	return cur, reportGate(t, res, cur.rerun)
}

// AssertNoRegression gates r against baseline under g with the runs each has (no runs
// are added), as [AssertNoRegression] does.
//
// Deprecated: use [AssertNoRegression], which runs the current side itself and returns
// its runs (Gate.MaxRuns = Gate.Runs adds no runs); removed in v0.3.0.
func (r *Runs) AssertNoRegression(t testing.TB, baseline *Runs, g Gate) bool {
	t.Helper()
	return reportGate(t, gate.Compare(baseline.Series, r.Series, g, 0), r.rerun)
}

// AssertNoRegressionRuns is [AssertNoRegression] with a K-run baseline.
//
// Deprecated: use [AssertNoRegression], which takes any [Baseline]; removed in v0.3.0.
func AssertNoRegressionRuns(t testing.TB, sc Scenario, baseline *Runs, g Gate, opts ...run.RunOption) (*Runs, bool) {
	t.Helper()
	return AssertNoRegression(t, sc, baseline, g, opts...)
}

// AssertABNoRegression runs an interleaved A/B gate: a (the baseline build, or mock
// configuration) and b (the candidate) alternate, A B A B …, g.Runs each, adding runs
// while inconclusive as [AssertNoRegression] does ([run.Interleave]); b fails
// the gate if it regressed against a. Alternating makes drift of the machine or the
// server touch both sides alike: the strongest design when both builds can run. The
// two must be one workload; their URLs and servers may differ. On one GPU, where the
// two builds cannot run at once, give each side its [Server]: each run then starts its
// side's server and stops it after (unnamed servers are named "A" and "B").
func AssertABNoRegression(t testing.TB, a, b Scenario, g Gate, opts ...run.RunOption) bool {
	t.Helper()
	for _, sc := range []Scenario{a, b} {
		if err := run.Preflight(t.Context(), sc); err != nil {
			t.Fatalf("perftest: scenario %q: %v", cmp.Or(sc.Name, scenario.DefaultName), strings.TrimPrefix(err.Error(), run.ErrPreflight.Error()+": "))
		}
	}
	dir, err := artifactDir(t.ArtifactDir(), cmp.Or(b.Name, scenario.DefaultName)+"-ab")
	if err != nil {
		t.Fatalf("perftest: artifacts: %v", err)
	}
	res, err := run.Interleave(t.Context(), a, b, dir, g, seriesOptions(t, opts))
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return false
	}
	t.Logf("perftest: A/B runs in %s (a/run-NNN, b/run-NNN; %s)", dir, artifactsNote(artifactsKept()))
	return reportGate(t, res, rerunHint(t, b.Seed))
}

// seriesSeed is the seed of the scenario s ran (0 when s's scenario does not decode).
func seriesSeed(s *gate.Series) uint64 {
	sc, _ := run.SeriesScenario(s)
	return sc.Seed
}

// reportGate logs the gate's headline and verdicts, t.Errorf for each failing one. A
// verdict that passed decided is logged as its one line, its evidence left to the HTML
// report; a gate that passed decided logs the headline, what differs between the
// sides and one line per gating statistic.
func reportGate(t testing.TB, res gate.GateResult, rerun string) bool {
	t.Helper()
	ctx := check.Context{Rerun: rerun}
	if res.Current != nil {
		sc, _ := run.SeriesScenario(res.Current)
		ctx.Scenario, ctx.Load, ctx.Seed = sc.Name, sc.LoadString(), sc.Seed
		ctx.Artifacts = res.Current.Dir
	}
	ok := res.Pass()
	compact := ok && !res.Inconclusive()
	head := res.Headline()
	if res.Current != nil && res.Current.Dir != "" && len(res.Comparisons) > 0 {
		p := filepath.Join(res.Current.Dir, reportgen.GateReportFile)
		if err := res.WriteReport(p); err != nil {
			t.Errorf("perftest: %v", err)
		} else {
			head += "\n    report: " + p
		}
		// The gate's markdown summary, for a CI job to post (docs/outputs.md).
		if s := filepath.Join(res.Current.Dir, reportgen.SummaryFile); reportgen.WriteSummaryFile(s, res.Summary()) == nil {
			head += "\n    summary: " + s
		}
	}
	if len(res.Workload) == 0 {
		for _, l := range res.Where() {
			if compact && (l.Label == "baseline" || l.Label == "current") {
				continue
			}
			head += "\n    " + l.Label + ": " + l.Text
		}
	}
	if ok {
		t.Logf("perftest: %s", head)
	} else {
		t.Errorf("perftest: %s", head)
	}
	gating := 0
	for _, g := range res.Gating {
		if g {
			gating++
		}
	}
	for i, v := range res.AllVerdicts() {
		if len(res.Workload) == 0 && i >= gating {
			if !compact {
				t.Logf("perftest: reported, not gating: %s", v.Summary) // nothing is wanted of it
			}
			continue
		}
		switch {
		case v.Pass && v.Status == check.Decided:
			t.Logf("perftest: %s", v.Summary)
		case v.Pass:
			t.Logf("perftest: %s", v)
		default:
			t.Errorf("perftest: %s", v.With(ctx))
		}
	}
	return ok
}
