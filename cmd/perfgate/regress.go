package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/history"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/reportgen"
)

// gateFlags are the regression gate's flags, shared by profile and regress.
type gateFlags struct {
	baseline, baselineURL, margin string
	priorCV, sessionCV            string
	maxRuns                       int
	failInconclusive, strictMDE   bool
	verbose                       bool   // -v: every verdict's evidence
	ignore, fail                  string // comma-separated (a string keeps profileOpts comparable)
}

// registerGateFlags adds the gate's flags; profile adds --baseline, --baseline-url and
// --max-runs too. Against a server with a prefix cache, --cache-bust (validity) gives
// each run its own prompt salt.
func registerGateFlags(fs *flag.FlagSet, g *gateFlags, profile bool) {
	fs.StringVar(&g.margin, "margin", "", "[objectives] regression gate: the margin δ, \"5%\" or 0.05 (default 5%, or the scenario's regression.margin)")
	fs.StringVar(&g.priorCV, "prior-cv", "", "[objectives] regression gate: the between-run CV to assume, \"3%\" or 0.03, when a side has one run and the baseline neither measures one (several runs) nor stores one (runs.json prior_cv)")
	fs.StringVar(&g.sessionCV, "session-cv", "", "[objectives] regression gate: the between-session CV to assume, \"2%\" or 0.02, in (0, 1), when the baseline has too few sessions to measure it (perfgate baseline add) and stores none (runs.json session_cv); without one a one-session baseline is assumed to wander as far as its runs")
	fs.BoolVar(&g.failInconclusive, "fail-inconclusive", false, "[objectives] regression gate: an inconclusive verdict fails (exit 3) instead of passing with a warning")
	fs.BoolVar(&g.strictMDE, "strict-mde", false, "[objectives] regression gate: a margin below the minimum detectable effect fails instead of warning")
	fs.StringVar(&g.ignore, "ignore-workload", "", "[objectives] regression gate: workload settings that may differ from the baseline's, comma-separated, e.g. concurrency")
	fs.BoolVar(&g.verbose, "v", false, "[objectives] regression gate: print every gating statistic's evidence (its runs, ratio, noise, rule, notes), the reported-only statistics and where each side ran, also when the gate passes (by default a passing statistic prints one line)")
	fs.StringVar(&g.fail, "gate-fail", "", "[objectives] regression gate: non-primary run statistics that fail the gate too, comma-separated, e.g. ttft_p99")
	if !profile {
		return
	}
	fs.StringVar(&g.baseline, "baseline", "", "[objectives] regression gate: compare with the baseline in DIR (a --num-runs K --artifact-dir DIR of this workload, or one run) or history:SCENARIO (the runs --history keeps); runs K (--num-runs, default 5) current runs and more while inconclusive")
	fs.StringVar(&g.baselineURL, "baseline-url", "", "[objectives] regression gate, A/B: run the baseline build at this URL and the candidate at --url, alternating A B A B, and compare")
	fs.IntVar(&g.maxRuns, "max-runs", 0, "[objectives] regression gate: the most runs per side when inconclusive (default 20; = --num-runs turns extra runs off)")
}

// apply sets g's flags over the scenario's regression block.
func (f gateFlags) apply(g gate.Gate, runs int) (gate.Gate, error) {
	if f.baseline != "" {
		g.Baseline = f.baseline
	}
	if f.margin != "" {
		m, err := parseFraction(f.margin)
		if err != nil {
			return g, invalidf("--margin: %v", err)
		}
		g.Margin = m
	}
	if f.priorCV != "" {
		cv, err := parseFraction(f.priorCV)
		if err != nil {
			return g, invalidf("--prior-cv: %v", err)
		}
		g.PriorCV = cv
	}
	if f.sessionCV != "" {
		cv, err := parseFraction(f.sessionCV)
		if err != nil {
			return g, invalidf("--session-cv: %v", err)
		}
		g.SessionCV = cv
	}
	if runs > 1 {
		g.Runs = runs
	}
	if f.maxRuns != 0 {
		g.MaxRuns = f.maxRuns
	}
	g.FailInconclusive = g.FailInconclusive || f.failInconclusive
	g.StrictMDE = g.StrictMDE || f.strictMDE
	g.IgnoreWorkload = append(g.IgnoreWorkload, splitList(f.ignore)...)
	g.Fail = append(g.Fail, splitList(f.fail)...)
	if err := g.Validate(); err != nil {
		return g, invalidf("%s", trimInvalid(err.Error()))
	}
	if g.MaxRuns < 0 {
		return g, invalidf("--max-runs %d: want at least 1", g.MaxRuns)
	}
	return g, nil
}

// gating reports whether a profile is a regression gate.
func (f gateFlags) gating(sc scenario.Scenario) bool {
	return f.baseline != "" || f.baselineURL != "" || sc.Regression.Baseline != ""
}

// profileGate runs the current side of a regression gate (or both sides, A/B) and maps
// its answer onto the exit code: 0 no regression (or improved, or inconclusive when
// inconclusive passes), 99 regressed, 3 inconclusive with --fail-inconclusive, 2 a
// baseline that cannot be read or is another workload (before any request).
func profileGate(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts) error {
	g, err := o.gate.apply(sc.Regression, o.numRuns)
	if err != nil {
		return err
	}
	// Each run is still a run: its own assertions (error rate, objectives) are checked,
	// and a run that breaks one fails the gate whatever the comparison says.
	var broken, runs int
	var outs []*perfrun.Outcome // the runs, for --history
	inner := runner(e, o)
	so := perfrun.SeriesOptions{Run: func(ctx context.Context, sc scenario.Scenario, dir string) (*perfrun.Outcome, error) {
		out, err := inner(ctx, sc, dir)
		if err != nil || out == nil {
			return out, err
		}
		runs++
		outs = append(outs, out)
		vs := append(out.Verdicts(check.KindHealth)[:1], out.Check()...)
		if !printFailed(e.stdout, vs) {
			broken++
		}
		return out, nil
	}}
	var res gate.GateResult
	if o.gate.baselineURL != "" || o.server.baselineCmd != "" {
		if len(sc.URLs) == 0 {
			return invalidf("--baseline-url: the candidate needs --url (A/B compares two servers)")
		}
		a := sc
		a.Server = nil
		if o.gate.baselineURL != "" {
			a.URLs = []string{o.gate.baselineURL}
		}
		if o.server.baselineCmd != "" {
			a.Server = o.server.server(o.server.baselineCmd)
		}
		if err := preflight(ctx, a, 0); err != nil {
			return err
		}
		shareModel(ctx, &a, &sc)
		if !o.quiet {
			if a.Server != nil || sc.Server != nil {
				abServers(e.stdout, a, sc, g.Schedule().Start)
			} else {
				fmt.Fprintf(e.stdout, "perfgate profile: A/B: baseline %s, candidate %s, alternating, %d runs each to start\n", o.gate.baselineURL, strings.Join(sc.URLs, ", "), g.Schedule().Start)
			}
		}
		res, err = perfrun.Interleave(ctx, a, sc, o.artifactDir, g, so)
		if err != nil && o.artifactDir != "" {
			fmt.Fprintf(e.stdout, "A/B stopped; the runs so far are in %s (a/run-NNN, b/run-NNN)\n", artifactPath(o.artifactDir))
		}
	} else {
		base, lerr := loadGateBaseline(ctx, g.Baseline, o.history.addr)
		if lerr != nil {
			return lerr
		}
		bsc, lerr := perfrun.SeriesScenario(base)
		if lerr != nil {
			return invalidf("--baseline %s: its scenario: %v", g.Baseline, lerr)
		}
		if sc.Server != nil && sc.Model == "" && len(sc.ModelNames) == 0 {
			sc.Model = bsc.Model // the started server is asked for the baseline's model
		}
		if ds := scenario.DiffWorkload(bsc, sc, g.IgnoreWorkload...); len(ds) > 0 {
			return invalidf("--baseline %s is another workload: %s (re-record it, or --ignore-workload FIELD)", g.Baseline, diffText(ds))
		}
		if !o.quiet {
			fmt.Fprintf(e.stdout, "perfgate profile: regression gate against %s (%d runs): %s\n", g.Baseline, base.Len(), sc.Describe())
		}
		res, err = perfrun.GateRuns(ctx, sc, base, o.artifactDir, g, so)
	}
	if err != nil {
		return libError("--baseline", err)
	}
	how := gateCommand{ab: o.gate.baselineURL != "" || o.server.baselineCmd != "", baseline: g.Baseline, verbose: o.gate.verbose}
	if res.Invalid() {
		gateSummary(e, res, how)
		printGate(e.stdout, res, how)
		return invalidf("%s", res.Headline())
	}
	gerr := gateExit(e, res, filepath.Join(o.artifactDir, reportgen.GateReportFile), how)
	if broken > 0 && gerr == nil {
		line := fmt.Sprintf("FAIL: %d of %d runs failed an assertion (their verdicts are above)", broken, runs)
		fmt.Fprintln(e.stdout, line)
		if e.summary != nil {
			e.summary.Mark = "FAIL"
			e.summary.Lines = append([]string{line}, e.summary.Lines...)
		}
		gerr = errAssertFailed
	}
	if !how.ab {
		// The current runs are one result of --history, whatever the gate said (a
		// history keeps regressions too): against history:SCENARIO, tomorrow's baseline
		// has this job as one more session.
		if herr := recordHistory(ctx, e, o, nil, outs...); herr != nil {
			if gerr == nil {
				return herr
			}
			fmt.Fprintf(e.stderr, "perfgate profile: %v\n", herr)
		}
	}
	return gerr
}

// printFailed prints the failing verdicts of vs and reports whether all passed.
func printFailed(w io.Writer, vs []check.Verdict) bool {
	ok := true
	for _, v := range vs {
		if !v.Pass {
			fmt.Fprintf(w, "FAIL %s\n", v.String())
			ok = false
		}
	}
	return ok
}

func diffText(ds []scenario.Difference) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.String())
	}
	return strings.Join(s, "; ")
}

// gateExit prints the gate, writes its HTML report to report ("" = none), and returns
// the exit error: nil when the gate passed, 3 when inconclusive fails it, else 99.
func gateExit(e *env, res gate.GateResult, report string, how gateCommand) error {
	printGate(e.stdout, res, how)
	if report != "" {
		if err := res.WriteReport(report); err != nil {
			return runtimef("gate report %s: %v", report, err)
		}
		fmt.Fprintf(e.stdout, "gate report: %s\n", report)
	}
	gateSummary(e, res, how)
	switch {
	case res.Pass():
		return nil
	case res.Inconclusive():
		return &exitError{ExitInconclusive, errors.New(res.Headline())}
	}
	return errAssertFailed
}

// cmdRegress re-gates two saved directories: `perfgate regress BASELINE_DIR CURRENT_DIR`.
func cmdRegress(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "regress", "[--margin 5%] [--fail-inconclusive] [--html FILE] [--summary-md FILE] BASELINE_DIR CURRENT_DIR")
	var gf gateFlags
	registerGateFlags(fs, &gf, false)
	var summaryMD string
	registerSummaryFlag(fs, &summaryMD)
	html := fs.String("html", "", "write the gate's HTML report here (default CURRENT_DIR/"+reportgen.GateReportFile+"; \"-\" = none)")
	flags, dirs := splitArgs(fs, args)
	if err := parseFlags(fs, flags); err != nil {
		return err
	}
	if len(dirs) != 2 {
		return invalidf("want two directories, BASELINE_DIR CURRENT_DIR; got %d arguments", len(dirs))
	}
	var sides [2]*gate.Series
	for i, d := range dirs {
		s, err := perfrun.LoadSeries(d)
		if err != nil {
			return invalidf("%s: %v", d, strings.TrimPrefix(err.Error(), "scenario: load series: "))
		}
		sides[i] = s
	}
	cur, err := perfrun.SeriesScenario(sides[1])
	if err != nil {
		return invalidf("%s: its scenario: %v", dirs[1], err)
	}
	g, err := gf.apply(cur.Regression, 0)
	if err != nil {
		return err
	}
	res := gate.Compare(sides[0], sides[1], g, 0)
	how := gateCommand{regress: true, baseline: dirs[0], current: dirs[1], verbose: gf.verbose}
	if res.Invalid() {
		gateSummary(e, res, how)
		printGate(e.stdout, res, how)
		return writeSummary(e, summaryMD, invalidf("%s", res.Headline()))
	}
	out := filepath.Join(dirs[1], reportgen.GateReportFile)
	switch *html {
	case "-":
		out = ""
	case "":
	default:
		out = *html
	}
	return writeSummary(e, summaryMD, gateExit(e, res, out, how))
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// splitArgs separates flags (with their values) from positional arguments, which may
// come in any order.
func splitArgs(fs *flag.FlagSet, args []string) (flags, pos []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(pos, args[i+1:]...)
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if inline || f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, pos
}

// loadGateBaseline reads the regression gate's baseline: a directory of runs, or
// history:SCENARIO[?last=N&branch=B&since=change] from the history database (--history,
// or $PERFGATE_HISTORY). Errors are invalid configuration: nothing has run yet.
func loadGateBaseline(ctx context.Context, baseline, historyAddr string) (*gate.Series, error) {
	if !history.IsBaselineSpec(baseline) {
		base, err := perfrun.LoadSeries(baseline)
		if err != nil {
			return nil, invalidf("--baseline %s: %v", baseline, strings.TrimPrefix(err.Error(), "scenario: load series: "))
		}
		return base, nil
	}
	spec, err := history.ParseBaselineSpec(baseline)
	if err != nil {
		return nil, invalidf("--baseline: %v", err)
	}
	if historyAddr == "" {
		return nil, invalidf("--baseline %s: no history database: give --history (a SQLite file or a postgres:// URL) or set %s", baseline, history.EnvHistory)
	}
	st, err := history.Open(ctx, historyAddr)
	if err != nil {
		return nil, invalidf("--baseline %s: %v", baseline, err)
	}
	defer st.Close()
	base, _, err := loadHistoryBaseline(ctx, st, spec)
	if err != nil {
		return nil, invalidf("--baseline %s: %v", baseline, err)
	}
	return base, nil
}
