package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/reportgen/sweep"
	"github.com/perfgate/perfgate/servermetrics"
	"github.com/perfgate/perfgate/tokenizer"
)

// runResult is one finished run: perfrun.Run's outcome and its verdicts.
type runResult struct {
	out      *perfrun.Outcome
	verdicts []check.Verdict
	validity []check.Verdict // perfrun.Outcome.Verdicts(check.KindValidity)
}

// loadTokenizer loads the scenario's tokenizer once per name (sweeps and repeated runs
// reuse it through perfrun.WithTokenizer), naming the flag when it cannot.
func loadTokenizer(sc scenario.Scenario) (*tokenizer.Tokenizer, error) {
	name := sc.TokenizerOrDefault()
	tokMu.Lock()
	defer tokMu.Unlock()
	if t, ok := tokCache[name]; ok {
		return t, nil
	}
	t, err := tokenizer.Load(name)
	if err != nil {
		return nil, invalidf("--tokenizer %s: %v", name, err)
	}
	tokCache[name] = t
	return t, nil
}

var (
	tokMu    sync.Mutex
	tokCache = map[string]*tokenizer.Tokenizer{}
)

// runOne runs sc through perfrun.Run into dir, with the live progress display fed by
// perfrun.OnRecord, and maps what went wrong onto an exit code: a scenario Run
// rejects is invalid configuration (2), a run that broke is a runtime error (1), an
// interrupted run (partial exports, marked was_cancelled) is 130.
func runOne(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts, dir, label string) (*runResult, error) {
	tok, err := loadTokenizer(sc)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(dir)
	created := os.IsNotExist(statErr)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, invalidf("--artifact-dir %s: %v", dir, unwrapPath(err))
	}
	opts := []perfrun.RunOption{perfrun.WithTokenizer(tok), perfrun.WithCommand(redactArgs(e.args)...)}
	if o.shardInfo != nil {
		opts = append(opts, perfrun.WithShard(*o.shardInfo))
	}
	live, err := startLive(ctx, e, o.live, sc, label)
	if err != nil {
		return nil, err
	}
	var pr runDisplay
	var sinks []func(record.Client)
	if ui := resolveUI(o.uiType, e.tty); !o.quiet && ui != uiNone {
		d := sc.WithDefaults()
		if ui == uiDashboard {
			in, _ := e.in.(*os.File)
			db := newDashboard(e.stderr, in, cmpOr(label, d.Name), d.Requests, d.Duration, metric.Options{UsageOSL: d.UsageOSL, UsageISL: d.UsageISL}) // as the run's metrics (scenario's metricOptions)
			db.width = e.width
			pr = db
			opts = append(opts, perfrun.OnInFlight(db.setInFlight))
		} else {
			p := newProgress(e.stderr, e.tty, d.Requests, cmpOr(label, d.Name))
			p.width = e.width
			pr = p
		}
		sinks = append(sinks, pr.sink)
		pr.begin()
	}
	if live != nil {
		sinks = append(sinks, live.Record)
	}
	switch len(sinks) {
	case 1:
		opts = append(opts, perfrun.OnRecord(sinks[0]))
	case 2:
		opts = append(opts, perfrun.OnRecord(func(r record.Client) { sinks[0](r); sinks[1](r) }))
	}
	out, err := perfrun.Run(ctx, sc, dir, opts...)
	if pr != nil {
		pr.end()
	}
	if live != nil {
		live.Stop(context.WithoutCancel(ctx)) // its warnings went to stderr as they came
	}
	if err != nil {
		if errors.Is(err, scenario.ErrInvalidScenario) {
			// Invalid configuration is found before any request is sent: nothing was
			// measured, so the directory this run created (scenario.json, the mock's
			// empty recording) goes too.
			if created {
				_ = os.RemoveAll(dir)
			}
			return nil, invalid(errors.New(trimInvalid(err.Error())))
		}
		if errors.Is(err, context.Canceled) {
			return nil, &exitError{ExitInterrupted, fmt.Errorf("interrupted before the first request: %w", err)}
		}
		return nil, &exitError{ExitRuntime, err} // as runtimef, keeping err's chain (bisect skips a server that would not start)
	}
	if why := out.Aborted(); why != "" {
		// Why the run stopped early comes first: the table and verdicts after it are
		// of the requests that ended before the stop.
		fmt.Fprintf(e.stdout, "ABORTED (%s): %s\n", abortedExit(out.AbortedBy()), why)
	}
	r := &runResult{out: out, verdicts: out.Check(), validity: out.Verdicts(check.KindValidity)}
	if out.Interrupted {
		return r, &exitError{ExitInterrupted, fmt.Errorf("interrupted after %d requests; partial results in %s (marked was_cancelled)", out.Context("").Requests, artifactPath(dir))}
	}
	return r, nil
}

// trimInvalid drops the sentinel prefixes from a configuration error, leaving what is wrong.
func trimInvalid(msg string) string {
	for _, p := range []string{"scenario: invalid scenario: ", "loadgen: invalid config: "} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	return msg
}

// invalidMeasurement prints the validity verdicts that found a problem (warnings and
// failures) and, when one fails, returns the exit-1 error "invalid measurement": the
// run's numbers measure something else than the server (the client, a warm cache, a
// drifting window), so its objectives are neither passed nor failed.
func invalidMeasurement(w io.Writer, vs []check.Verdict) error {
	var failed []string
	for _, v := range vs {
		if v.Status != check.Invalid {
			continue
		}
		mark := "WARN"
		if !v.Pass {
			mark = "INVALID"
			failed = append(failed, v.Check)
		}
		fmt.Fprintf(w, "%s %s\n", mark, v.String())
	}
	if len(failed) == 0 {
		return nil
	}
	fmt.Fprintln(w, "objectives not judged: the measurement is invalid (verdicts.txt has them for reference)")
	return runtimef("invalid measurement: %s (docs/validity.md says what each check means and how to switch it)", strings.Join(failed, ", "))
}

// printVerdicts prints each verdict with PASS/FAIL and returns whether all passed.
func printVerdicts(w io.Writer, vs []check.Verdict) bool {
	ok := true
	for _, v := range vs {
		mark := "PASS"
		if !v.Pass {
			mark, ok = "FAIL", false
			if v.Status == check.Invalid {
				mark = "INVALID"
			}
		}
		fmt.Fprintf(w, "%s %s\n", mark, v.String())
	}
	return ok
}

// profile runs the scenario once, repeatedly, as a sweep or as a search, prints the
// results and maps the verdicts onto the exit code.
func profile(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts) error {
	if err := preflight(ctx, sc, time.Duration(o.waitModel*float64(time.Second))); err != nil {
		return err
	}
	if sc.Model == "" && len(sc.ModelNames) == 0 {
		sc.Model = perfrun.FirstServedModel(ctx, sc) // no --model: the server's first, as vLLM's benchmark does
	}
	switch {
	case o.gate.gating(sc) || o.server.baselineCmd != "":
		return profileGate(ctx, e, sc, o)
	case o.sweepConc != "" || o.sweepRate != "":
		return profileSweep(ctx, e, sc, o)
	case o.searchConc != "" || o.searchRate != "":
		return profileSearch(ctx, e, sc, o)
	case o.numRuns > 1:
		return profileRepeat(ctx, e, sc, o)
	}
	stop, err := syncShard(ctx, e, &sc, &o)
	if err != nil {
		return err
	}
	defer stop()
	if !o.quiet {
		fmt.Fprintln(e.stdout, "perfgate profile: "+sc.Describe())
	}
	r, err := runOne(ctx, e, sc, o, o.artifactDir, "")
	if err != nil {
		return err
	}
	if !o.quiet {
		printTable(e, r.out)
	}
	printServerMetrics(e.stdout, r.out.ServerMetrics)
	printGPU(e.stdout, r.out.GPU)
	err = recordHistory(ctx, e, o, finish(ctx, e, r, o, o.artifactDir), r.out)
	s := r.out.Summary()
	s.Title = "perfgate profile: " + strings.TrimPrefix(s.Title, "perfgate: ")
	s.Trends = historyTrends(ctx, o.history.addr, r.out.Scenario.Name)
	setSummary(e, s)
	return err
}

// printTable prints the run's console summary table, and under it, when the client's
// and the server's input counts differ, the one line that says why (the chat template).
func printTable(e *env, out *perfrun.Outcome) {
	_ = reportgen.WriteTable(e.stdout, out.Metrics, reportgen.TableOptions{Width: e.width})
	printClassTables(e.stdout, out.Metrics, e.width) // classes.go
	if n := out.ISLCounts().Note(); n != "" {
		fmt.Fprintln(e.stdout, n)
	}
}

// finish prints the verdicts and where the artifacts are, and returns the exit error.
func finish(ctx context.Context, e *env, r *runResult, o profileOpts, dir string) error {
	for _, w := range r.out.Warnings {
		fmt.Fprintf(e.stdout, "WARN %s\n", w)
	}
	ok := true
	if !anyFailed(r.validity) {
		ok = printVerdicts(e.stdout, r.verdicts)
	}
	m := r.out.Metrics
	if m.Value(record.MetricRequestCount) == 0 {
		fmt.Fprintf(e.stdout, "artifacts: %s\n", artifactPath(dir))
		// The run's own gate, as perftest.Run reports it: its first verdict is Completed.
		v := r.out.Verdicts(check.KindHealth)[0]
		msg := v.Summary
		for _, l := range v.Evidence {
			msg += "; " + l.Label + ": " + l.Text
		}
		if len(v.Evidence) == 0 {
			msg += " (is --benchmark-duration shorter than one request, or the input empty?)"
		}
		return runtimef("%s", msg)
	}
	fmt.Fprintf(e.stdout, "artifacts: %s\nreport:    %s\n", artifactPath(dir), filepath.Join(artifactPath(dir), reportgen.RunReportFile))
	if err := invalidMeasurement(e.stdout, r.validity); err != nil {
		return err
	}
	if len(r.verdicts) > 0 {
		_, answer := check.Answer(r.verdicts)
		fmt.Fprintln(e.stdout, answer)
		if !ok {
			if o.shard.shards > 1 {
				// A shard's verdicts cover its part only; perfgate merge gates the run.
				fmt.Fprintln(e.stdout, "(shard verdicts do not gate: perfgate merge judges the merged run)")
				return nil
			}
			return assertFailed(r.verdicts)
		}
	}
	return nil
}

// assertFailed is the error of failing verdicts: exit 1 when one could not be judged
// (an Invalid verdict, such as a rule on a prefix-cache hit rate the run could not
// measure), else the failed-assertion exit.
func assertFailed(vs []check.Verdict) error {
	var invalid []string
	for _, v := range vs {
		if !v.Pass && v.Status == check.Invalid {
			invalid = append(invalid, v.Check)
		}
	}
	if len(invalid) > 0 {
		return runtimef("assertion(s) not judged, the quantity is unknown for this run: %s", strings.Join(invalid, ", "))
	}
	return errAssertFailed
}

func anyFailed(vs []check.Verdict) bool { return countFailed(vs) > 0 }

func countFailed(vs []check.Verdict) int {
	n := 0
	for _, v := range vs {
		if !v.Pass {
			n++
		}
	}
	return n
}

// runner is perfrun.Runner over runOne: each run of a repeat, sweep or search gets
// its own progress line, labelled with its directory under the artifact root.
func runner(e *env, o profileOpts) perfrun.Runner {
	return func(ctx context.Context, sc scenario.Scenario, dir string) (*perfrun.Outcome, error) {
		label, err := filepath.Rel(o.artifactDir, dir)
		if err != nil {
			label = dir
		}
		r, err := runOne(ctx, e, sc, o, dir, label)
		if err != nil {
			return nil, err
		}
		return r.out, nil
	}
}

// libError maps an error of perfrun.Repeat, Sweep or Search: a run's error already
// carries its exit code; a rejected setting is invalid configuration, named by flag.
func libError(flag string, err error) error {
	var ee *exitError
	switch {
	case err == nil || errors.As(err, &ee):
		return err
	case errors.Is(err, scenario.ErrInvalidScenario):
		return invalidf("%s: %s", flag, trimInvalid(err.Error()))
	}
	return runtimef("%v", err)
}

// profileRepeat runs the scenario N times (perfrun.Repeat) and reports each metric as
// a mean with a confidence interval.
func profileRepeat(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts) error {
	outs, est, err := perfrun.Repeat(ctx, sc, o.numRuns, o.confidence, o.artifactDir, runner(e, o))
	if err != nil {
		return libError("--num-runs", err)
	}
	failed := 0
	for _, out := range outs {
		if ok, _ := out.Passed(); !ok {
			failed++
			printVerdicts(e.stdout, out.Check())
		}
	}
	// A repeat with an artifact directory is a baseline: say what it is as one (the
	// headline, and the run statistics a gate compares); every metric's mean and
	// interval is in repeat.json.
	var series *gate.Series
	if o.artifactDir != "" {
		series, _ = perfrun.LoadSeries(o.artifactDir)
	}
	if series != nil {
		for _, l := range baselineHeadline(series) {
			fmt.Fprintln(e.stdout, l)
		}
		if !o.quiet {
			writeRunStatTable(e.stdout, series)
		}
	} else if !o.quiet {
		_ = sweep.WriteRepeatTable(e.stdout, est)
	}
	fmt.Fprintf(e.stdout, "artifacts: %s (run-001 … run-%03d, %s with every metric's mean and interval, %s: a baseline for --baseline)\n", artifactPath(o.artifactDir), o.numRuns, perfrun.RepeatFile, gate.RunsFile)
	if o.artifactDir != "" {
		fmt.Fprintf(e.stdout, "report:    %s (the runs' latency–throughput charts)\n", filepath.Join(artifactPath(o.artifactDir), reportgen.SweepReportFile))
	}
	s := reportgen.Summary{Title: fmt.Sprintf("perfgate profile: %s, %d runs", sc.NameOrDefault(), o.numRuns), Mark: "PASS",
		Headline: fmt.Sprintf("PASS: all %d runs met every assertion", o.numRuns)}
	var err2 error
	if failed > 0 {
		s.Mark, s.Headline, err2 = "FAIL", fmt.Sprintf("FAIL: %d of %d runs failed an assertion", failed, o.numRuns), errAssertFailed
	}
	fmt.Fprintln(e.stdout, s.Headline)
	err = recordHistory(ctx, e, o, err2, outs...)
	if series != nil {
		s.Lines = baselineHeadline(series)
		s.Artifacts = []reportgen.SummaryLink{{Label: "runs", Path: filepath.Join(o.artifactDir, gate.RunsFile)},
			{Label: "repeat", Path: filepath.Join(o.artifactDir, perfrun.RepeatFile)},
			{Label: "report", Path: filepath.Join(o.artifactDir, reportgen.SweepReportFile)}}
	}
	s.Trends = historyTrends(ctx, o.history.addr, sc.NameOrDefault())
	setSummary(e, s)
	return err
}

// axis returns the load axis and flag of a sweep or search.
func axis(rate bool, kind string) (perfrun.Axis, string) {
	if rate {
		return perfrun.Rate, "--" + kind + "-rate"
	}
	return perfrun.Concurrency, "--" + kind + "-concurrency"
}

// profileSweep runs every level (times --num-runs) with perfrun.Sweep and prints a table.
func profileSweep(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts) error {
	a, flagName := axis(o.sweepRate != "", "sweep")
	levels, err := sweep.Levels(cmpOr(o.sweepRate, o.sweepConc))
	if err != nil {
		return invalidf("%s: %v", flagName, strings.TrimPrefix(err.Error(), "sweep: "))
	}
	pts, err := perfrun.Sweep(ctx, sc, a, levels, o.numRuns, o.artifactDir, runner(e, o))
	if err != nil {
		return libError(flagName, err)
	}
	anyFail := false
	for _, p := range pts {
		anyFail = anyFail || !p.Pass
	}
	if !o.quiet {
		_ = sweep.WriteSweepTable(e.stdout, string(a), pts)
	}
	fmt.Fprintf(e.stdout, "artifacts: %s (one directory per level, sweep.csv)\nreport:    %s\n", artifactPath(o.artifactDir),
		filepath.Join(artifactPath(o.artifactDir), reportgen.SweepReportFile))
	s := reportgen.Summary{Title: fmt.Sprintf("perfgate profile: %s sweep", a), Mark: "PASS", Headline: fmt.Sprintf("every one of %d points met the assertions", len(pts)),
		Artifacts: []reportgen.SummaryLink{{Label: "report", Path: filepath.Join(o.artifactDir, reportgen.SweepReportFile)}}}
	for _, p := range pts {
		if !p.Pass {
			s.Mark, s.Headline = "FAIL", "a point failed an assertion or had failed requests (the report has each point)"
		}
	}
	setSummary(e, s)
	if anyFail {
		return errAssertFailed // failed requests fail a level even without --assert
	}
	return nil
}

// profileSearch bisects for the highest load meeting every assertion (perfrun.Search).
func profileSearch(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts) error {
	a, flagName := axis(o.searchRate != "", "search")
	spec := cmpOr(o.searchRate, o.searchConc)
	los, his, ok := strings.Cut(spec, ":")
	lo, err1 := strconv.ParseFloat(los, 64)
	hi, err2 := strconv.ParseFloat(his, 64)
	if !ok || err1 != nil || err2 != nil || !(lo > 0) || !(hi > lo) {
		return invalidf("%s %q: want LO:HI with 0 < LO < HI, e.g. 1:64", flagName, spec)
	}
	if !(o.searchTol > 0 && o.searchTol < 1) {
		return invalidf("--search-tolerance: want a fraction in (0, 1), got %g", o.searchTol)
	}
	res, err := perfrun.Search(ctx, sc, a, sweep.SearchOptions{Lo: lo, Hi: hi, Tolerance: o.searchTol}, o.artifactDir, runner(e, o))
	if err != nil {
		return libError(flagName, err)
	}
	if !o.quiet {
		_ = sweep.WriteSweepTable(e.stdout, string(a), res.Probes)
	}
	fmt.Fprintf(e.stdout, "artifacts: %s (one directory per probe, search.csv)\nreport:    %s\n", artifactPath(o.artifactDir),
		filepath.Join(artifactPath(o.artifactDir), reportgen.SweepReportFile))
	s := reportgen.Summary{Title: fmt.Sprintf("perfgate profile: %s search", a), Mark: "PASS",
		Artifacts: []reportgen.SummaryLink{{Label: "report", Path: filepath.Join(o.artifactDir, reportgen.SweepReportFile)}}}
	switch {
	case !res.Found:
		s.Mark, s.Headline = "FAIL", fmt.Sprintf("FAIL: no %s in [%g, %g] meets the assertions (%g fails)", a, lo, hi, res.FailedAt)
	case res.FailedAt > 0:
		s.Headline = fmt.Sprintf("highest %s meeting the assertions: %g (%g fails)", a, res.Best, res.FailedAt)
	default:
		s.Headline = fmt.Sprintf("highest %s meeting the assertions: %g (the top of the range)", a, res.Best)
	}
	fmt.Fprintln(e.stdout, s.Headline)
	setSummary(e, s)
	if !res.Found {
		return errAssertFailed
	}
	return nil
}

// printGPU prints the GPU telemetry over the measured window: the totals, then a
// line per GPU.
func printGPU(w io.Writer, s *servermetrics.GPUSummary) {
	if s == nil {
		return
	}
	fmt.Fprintln(w, "gpu telemetry:")
	for _, l := range s.Lines() {
		fmt.Fprintf(w, "    %-28s %s\n", l[0]+":", l[1])
	}
}

// printServerMetrics prints, per scraped URL, the scrape counts (failures always
// shown) and the derived figures.
func printServerMetrics(w io.Writer, s *servermetrics.Summary) {
	if s == nil {
		return
	}
	for _, ep := range s.Endpoints {
		fmt.Fprintf(w, "server metrics %s:\n", ep.URL)
		for _, l := range ep.Lines() {
			fmt.Fprintf(w, "    %-28s %s\n", l[0]+":", l[1])
		}
		for _, msg := range ep.Errors {
			fmt.Fprintf(w, "    failed scrape: %s\n", msg)
		}
	}
}
