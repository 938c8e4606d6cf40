package perftest

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// Scenario describes one benchmark run; see [scenario.Scenario] for its fields.
type Scenario = scenario.Scenario

// Objectives are a scenario's declared pass/fail rules; see [scenario.Objectives].
type Objectives = scenario.Objectives

// SLO is a per-request service-level objective; see [check.SLO].
type SLO = check.SLO

// Bound is a quantile bound on a per-request metric; see [check.Bound].
type Bound = check.Bound

// Result is a finished run: the scenario as run, the client recording, the server's
// input-token counts (mock), the metrics and the artifact directory, all from the
// embedded [run.Outcome]. Its Assert and Require methods check objectives on it.
// A Result is safe for concurrent reads; its methods do not modify it.
type Result struct {
	*run.Outcome
	rerun string // how to re-run the test that produced it
	// errorRate is the error-rate verdict Run reported (nil: none, e.g. a Result from
	// Load), so AssertObjectives does not report it twice.
	errorRate *check.Verdict
	// abortReported: Run reported the run's stop by an abort rule (scenario.Abort), so
	// AssertObjectives does not report it twice.
	abortReported bool
}

// Run runs sc and returns its result. opts are [run.Run]'s: [run.OnRecord]
// hands each record.Client to a callback as its request finishes,
// [run.WithTokenizer] reuses a loaded tokenizer. It calls t.Fatalf if the scenario
// is invalid or the run cannot be set up (the tokenizer, the mock server), never
// because of what the run measured: check that with the Result's methods. A real
// endpoint is checked first by [run.Preflight], as `perfgate profile` checks it:
// a server that cannot be reached, that refuses the API key, or that does not serve
// sc.Model fails the test at once ("model X is not served; served: …") instead of
// sending every request to it. One gate is applied by Run
// itself, as `perfgate profile` applies it ([run.Outcome.Verdicts], check.KindHealth): a run in which
// no request succeeded, or with failed requests beyond the scenario's
// Objectives.MaxErrorRate (zero: none may fail; set it to 1, or negative, to allow
// failures, e.g. in fault-injection tests), fails the test with t.Errorf. The failed
// requests are still part of the result.
//
// Run also reports the run's validity ([run.Outcome.Verdicts], check.KindValidity; docs/validity.md):
// a check that finds the measurement invalid (client-bound, not steady, warm cache,
// too few requests for a tail rule) fails the test with t.Errorf under its "fail"
// mode, whose message says INVALID (an invalid measurement, not a performance
// result), and is logged as a warning under "warn". A quantile rule the scenario's
// request count cannot support is refused before the run (t.Fatalf).
//
// Load stops when t's context is cancelled, before cleanups run; the mock server, if
// one was started, is stopped before Run returns. Artifacts (client recording, server
// recording and summary with the mock, metrics, the scenario, the objectives' verdicts,
// AIPerf-compatible exports and an HTML report) go to t.ArtifactDir(), whose path is
// logged, and logged again at cleanup if the test failed. That directory is removed when
// the test ends unless the test runs with `go test -artifacts -outputdir=DIR` (DIR must
// exist); the logged line says which. Headline
// numbers are emitted as test attributes (perftest.ttft_p99_ms, perftest.itl_p99_ms,
// perftest.request_latency_p99_ms, perftest.output_token_throughput, perftest.error_rate).
func Run(t testing.TB, sc Scenario, opts ...run.RunOption) *Result {
	t.Helper()
	for _, n := range sc.Objectives.Deprecated() {
		t.Logf("perftest: note: scenario %q: %s", cmp.Or(sc.Name, scenario.DefaultName), n)
	}
	if err := run.Preflight(t.Context(), sc); err != nil {
		t.Fatalf("perftest: scenario %q: %v", cmp.Or(sc.Name, scenario.DefaultName), strings.TrimPrefix(err.Error(), run.ErrPreflight.Error()+": "))
		return nil
	}
	dir, err := artifactDir(t.ArtifactDir(), sc.Name)
	if err != nil {
		t.Fatalf("perftest: scenario %q: artifacts: %v", sc.Name, err)
		return nil
	}
	out, err := run.Run(t.Context(), sc, dir, opts...)
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return nil
	}
	r := &Result{Outcome: out, rerun: rerunHint(t, out.Scenario.Seed)}
	t.Cleanup(func() {
		// Point at the recordings once more, after the failures they explain.
		if t.Failed() {
			t.Logf("perftest: after the failures above: scenario %q's recordings and report are in %s (%s)", out.Scenario.Name, dir, artifactsNote(artifactsKept()))
		}
	})
	ctx := out.Context("")
	t.Logf("perftest: scenario %q: %d requests (%d failed), %s; artifacts: %s (%s)", out.Scenario.Name, ctx.Requests, ctx.Errors, out.Scenario.LoadString(), dir, artifactsNote(artifactsKept()))
	attrs(t, out.Metrics)
	for _, w := range out.Warnings {
		t.Logf("perftest: warning: %s", w)
	}
	for _, v := range out.Verdicts(check.KindValidity) {
		switch {
		case !v.Pass:
			t.Errorf("perftest: INVALID measurement: %s", v.With(r.Context(r.rerun)))
		case v.Status == check.Invalid:
			t.Logf("perftest: warning: %s", v)
		}
	}
	if by := out.AbortedBy(); by == loadgen.AbortObjective || by == loadgen.AbortSaturation {
		// An abort rule held: the test fails whatever it asserts after, the reason first.
		t.Errorf("perftest: ABORTED: %s (%d requests kept; docs/abort.md)", out.Aborted(), ctx.Requests)
		r.abortReported = true
	}
	for _, v := range out.Verdicts(check.KindHealth) {
		if v.Check == "error-rate" {
			r.errorRate = &v
		}
		if !v.Pass {
			r.report(t, v, false)
		}
	}
	if addr := os.Getenv(EnvHistory); addr != "" && !out.Interrupted && out.Aborted() == "" {
		recordHistory(t, r, addr)
	}
	return r
}

// artifactsKept reports whether the test binary runs with -artifacts (go test
// -artifacts), which keeps t.ArtifactDir() after the test; without it the directory is
// a temporary one, removed when the test ends.
func artifactsKept() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// artifactsNote says, beside a logged artifact path, whether the directory outlives the
// test and, if not, how to keep it. go test -artifacts makes DIR/_artifacts with
// os.Mkdir, so a DIR that does not exist fails the whole test binary before any test
// runs ("testing: mkdir DIR/_artifacts: no such file or directory"): the note says to
// create it first.
func artifactsNote(kept bool) string {
	if kept {
		return "kept by go test -artifacts"
	}
	return "removed when the test ends; keep with go test -artifacts -outputdir=DIR, after mkdir -p DIR"
}

// artifactDir claims a fresh subdirectory of base named after the scenario ("quickstart",
// then "quickstart-2", …), so several runs in one test keep their own artifacts.
func artifactDir(base, name string) (string, error) {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == os.PathSeparator || r < ' ' {
			return '_'
		}
		return r
	}, cmp.Or(name, scenario.DefaultName))
	if name == "." || name == ".." {
		name = scenario.DefaultName
	}
	for i := 1; ; i++ {
		d := filepath.Join(base, name)
		if i > 1 {
			d = filepath.Join(base, fmt.Sprintf("%s-%d", name, i))
		}
		err := os.Mkdir(d, 0o755)
		if err == nil {
			return d, nil
		}
		if !os.IsExist(err) {
			return "", err
		}
	}
}

// attrs emits the run's headline numbers as test attributes.
func attrs(t testing.TB, m record.Metrics) {
	for _, a := range []struct{ key, metric string }{
		{"perftest.ttft_p99_ms", record.MetricTTFT},
		{"perftest.itl_p99_ms", record.MetricITL},
		{"perftest.request_latency_p99_ms", record.MetricRequestLatency},
	} {
		if s, ok := m.Stat(a.metric); ok && s.Count > 0 {
			t.Attr(a.key, fmt.Sprintf("%.4g", s.P99))
		}
	}
	if s, ok := m.Scalars[record.MetricOutputTokenThroughput]; ok {
		t.Attr("perftest.output_token_throughput", fmt.Sprintf("%.4g", s.Value))
	}
	if s, ok := m.Scalars[record.MetricErrorRate]; ok {
		t.Attr("perftest.error_rate", fmt.Sprintf("%.4g", s.Value))
	}
}

// rerunHint returns the command that re-runs t's test, e.g.
// "go test -run '^TestChat$/^slow$' ./examples_test".
func rerunHint(t testing.TB, seed uint64) string {
	var parts []string
	for _, p := range strings.Split(t.Name(), "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	return fmt.Sprintf("go test -run '%s' -count=1 %s", strings.Join(parts, "/"), packageDir())
}

// packageDir returns the current directory relative to the module root ("./x/y"), or ".".
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			rel, err := filepath.Rel(d, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "."
		}
		d = parent
	}
}

// AssertVerdict reports a verdict computed elsewhere (any check.X function) on t, with
// the run's context, as the Assert methods do: t.Errorf when it failed; returns v.Pass.
// (It was Result.Check, which hid the embedded [run.Outcome.Check]: res.Check()
// is now the scenario's objectives with the run's context.)
func (r *Result) AssertVerdict(t testing.TB, v check.Verdict) bool {
	t.Helper()
	return r.report(t, v, false)
}

// report turns a verdict into t.Errorf (or t.Fatalf if fatal) with the run's context.
func (r *Result) report(t testing.TB, v check.Verdict, fatal bool) bool {
	t.Helper()
	if v.Pass {
		t.Logf("perftest: %s", v.Summary)
		return true
	}
	msg := "perftest: " + v.With(r.Context(r.rerun)).String()
	if fatal {
		t.Fatalf("%s", msg)
	} else {
		t.Errorf("%s", msg)
	}
	return false
}

func (r *Result) each(t testing.TB, vs []check.Verdict, fatal bool) bool {
	t.Helper()
	ok := true
	for _, v := range vs {
		ok = r.report(t, v, false) && ok
	}
	if !ok && fatal {
		t.FailNow()
	}
	return ok
}

// Load reads a recorded run (a directory of artifacts written by [Run], or a client
// recording .jsonl) as a Result, e.g. a baseline kept in testdata. It calls t.Fatalf
// if the recording cannot be read.
func Load(t testing.TB, path string) *Result {
	t.Helper()
	out, err := run.Load(path)
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return nil
	}
	return &Result{Outcome: out, rerun: rerunHint(t, out.Scenario.Seed)}
}
