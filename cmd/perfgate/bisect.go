package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/perftest/bisect"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/serverproc"
)

// revPlaceholder is what --server-cmd names the commit by in bisect.
const revPlaceholder = "{rev}"

// bisectFlags are bisect's own flags; the rest are profile's.
type bisectFlags struct {
	good, bad, repo string
}

func registerBisectFlags(fs *flag.FlagSet, b *bisectFlags) {
	fs.StringVar(&b.good, "good", "", "[bisect] a revision without the regression (hash, tag, branch, HEAD~N): its runs are the baseline every commit is gated against")
	fs.StringVar(&b.bad, "bad", "", "[bisect] a revision with the regression, a descendant of --good; gated first: if it does not regress there is nothing to find")
	fs.StringVar(&b.repo, "C", "", "[bisect] the repository's work tree (default the current directory); the server command runs there")
}

// bisectConflicts are profile's flags that mean nothing to bisect, and why.
var bisectConflicts = []struct{ flag, why string }{
	{"mock", "bisect starts the server of each commit with --server-cmd"},
	{"baseline", "the baseline is --good's runs"},
	{"baseline-url", "the baseline is --good's runs"},
	{"baseline-server-cmd", "--server-cmd starts both sides, with {rev} the commit"},
	{"sweep-concurrency", "bisect gates one workload"},
	{"sweep-rate", "bisect gates one workload"},
	{"search-concurrency", "bisect gates one workload"},
	{"search-rate", "bisect gates one workload"},
	{"history", "a bisection's runs are not results of the branch"},
	{"shards", "bisect runs one process"},
}

const bisectSynopsis = "--good REV --bad REV --url URL --server-cmd 'CMD {rev}' [profile flags]"

// cmdBisect finds the commit between --good and --bad that made the server slower:
// git bisect, each commit's server started by --server-cmd with {rev} the commit, each
// commit gated against --good's runs by the regression gate (perftest/bisect).
func cmdBisect(ctx context.Context, e *env, args []string) error {
	var f profileFlags
	var o profileOpts
	var bf bisectFlags
	fs := newFlags(e, "bisect", bisectSynopsis)
	registerProfileFlags(fs, &f, &o)
	registerBisectFlags(fs, &bf)
	fs.Usage = func() { bisectHelp(e.stdout) }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := setFlags(fs)
	for _, c := range bisectConflicts {
		if set[c.flag] {
			return invalidf("--%s: not a bisect flag: %s", c.flag, c.why)
		}
	}
	switch {
	case bf.good == "" || bf.bad == "":
		return invalidf("--good and --bad are required: the revisions without and with the regression")
	case o.server.cmd == "":
		return invalidf("--server-cmd is required: the command that starts the server of a commit, with %s for its hash, e.g. './build.sh %s && ./serve --port 8000'", revPlaceholder, revPlaceholder)
	case !strings.Contains(o.server.cmd, revPlaceholder):
		return invalidf("--server-cmd %q has no %s: the command must start the server of the commit bisect checked out, named by %s (its full hash)", serverproc.Redact(o.server.cmd), revPlaceholder, revPlaceholder)
	}
	sc, err := buildScenario(fs, &f, &o)
	if err != nil {
		return err
	}
	if err := o.server.apply(&sc, o); err != nil {
		return err
	}
	g, err := o.gate.apply(sc.Regression, o.numRuns)
	if err != nil {
		return err
	}
	g.Baseline = ""
	return writeSummary(e, o.summaryMD, runBisect(ctx, e, sc, o, g, bf))
}

// runBisect runs the bisection and prints its answer: exit 0 when a first bad commit
// is named, 3 when none is (only skipped commits left, or --bad does not regress), 2
// for bad input (before any server starts), 1 when a run fails, 130 interrupted.
func runBisect(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts, g gate.Gate, bf bisectFlags) error {
	template := *sc.Server
	template.Dir = bf.repo
	var broken int
	inner := runner(e, o)
	so := perfrun.SeriesOptions{Run: func(ctx context.Context, sc scenario.Scenario, dir string) (*perfrun.Outcome, error) {
		out, err := inner(ctx, sc, dir)
		if err == nil && out != nil {
			if !printFailed(e.stdout, append(out.Verdicts(check.KindHealth)[:1], out.Check()...)) {
				broken++
			}
		}
		return out, err
	}}
	measure := func(ctx context.Context, commit string, s *gate.Series, n int) error {
		run := sc
		srv := template
		srv.Name = bisect.Short(commit)
		srv.Cmd = strings.ReplaceAll(template.Cmd, revPlaceholder, commit)
		run.Server = &srv
		_, err := perfrun.Extend(ctx, s, run, n, so)
		if errors.Is(err, serverproc.ErrExited) || errors.Is(err, serverproc.ErrNotReady) {
			return fmt.Errorf("%w: %w", bisect.ErrUntestable, err)
		}
		return err
	}
	if !o.quiet {
		fmt.Fprintf(e.stdout, "perfgate bisect: %s..%s, each commit started by %s: %s\n", bf.good, bf.bad, template.String(), sc.Describe())
	}
	log := io.Writer(e.stdout)
	res, err := bisect.Run(ctx, bisect.Config{Dir: bf.repo, Good: bf.good, Bad: bf.bad, Gate: g, Measure: measure, Artifacts: o.artifactDir, Log: log})
	if errors.Is(err, bisect.ErrInvalid) {
		return invalidf("%s", strings.TrimPrefix(err.Error(), bisect.ErrInvalid.Error()+": "))
	}
	if res != nil {
		setSummary(e, res.Summary())
	}
	if err != nil {
		if o.artifactDir != "" {
			fmt.Fprintf(e.stdout, "bisect stopped (git bisect reset); the runs so far are in %s\n", artifactPath(o.artifactDir))
		}
		return libError("--server-cmd", err)
	}
	printBisect(e.stdout, res, o.gate.verbose)
	if broken > 0 {
		fmt.Fprintf(e.stdout, "note: %d runs failed an assertion (their verdicts are above): the commits' servers answered with errors\n", broken)
	}
	if !res.Found() {
		return &exitError{ExitInconclusive, errors.New(strings.TrimPrefix(res.Headline(), "bisect: "))}
	}
	return nil
}

// printBisect prints the answer: the first bad commit and the gate that found it, or
// why none was named.
func printBisect(w io.Writer, res *bisect.Result, verbose bool) {
	if !res.Found() {
		fmt.Fprintf(w, "%s %s\n", res.Summary().Mark, res.Headline())
		return
	}
	c := res.Culprit
	fmt.Fprintf(w, "FOUND first bad commit %s %s\n", c.Commit, c.Subject)
	fmt.Fprintf(w, "    %s against good %s (%d runs)\n", bisect.Regressions(c.Result), res.Good, res.GoodRuns.Len())
	printGate(w, c.Result, gateCommand{verbose: verbose})
	if c.Result.Current != nil && c.Result.Current.Dir != "" {
		fmt.Fprintf(w, "gate report: %s\n", filepath.Join(c.Result.Current.Dir, "gate_report.html"))
	}
}

// bisectHelp is bisect's -h: what it does, its own flags, and which of profile's apply.
func bisectHelp(w io.Writer) {
	fs := flag.NewFlagSet("bisect", flag.ContinueOnError)
	registerBisectFlags(fs, &bisectFlags{})
	fmt.Fprintf(w, "Usage: perfgate bisect %s\n\n", bisectSynopsis)
	fmt.Fprint(w, `Finds the commit between --good and --bad that made the server slower: git bisect in the
repository's work tree, each commit checked out and its server started for each run by
--server-cmd with {rev} replaced by the commit's hash, each commit gated against --good's
runs (measured once, reused) by the regression gate: regressed is bad, no regression is
good, inconclusive at --max-runs is skipped (git bisect run's exit 1, 0 and 125). The work
tree must be clean; git bisect reset ends every bisection, an error or Ctrl-C included.

Example:
  perfgate bisect --good v1.4.0 --bad main --url http://127.0.0.1:8000 --concurrency 8 \
    --request-count 200 --server-cmd 'make -s build REV={rev} && ./bin/serve --port 8000'

Flags (one or two dashes):
`)
	printDefaults(w, fs)
	fmt.Fprint(w, `
Every perfgate profile flag of the target, workload, load, stop, recording and objectives
applies (perfgate profile --help-all), with --server-cmd, --server-ready,
--server-ready-timeout and --server-stop-grace; the gate's: --num-runs (runs per side to
start, default 5), --max-runs (default 20), --margin (default 5%), --gate-fail, -v; and
--artifact-dir (each commit's runs in DIR/<hash>), --summary-md. Not --mock, --baseline,
--baseline-url, --baseline-server-cmd, --sweep-*, --search-*, --history or --shards.

Exit: 0 a first bad commit was named; 3 none was (--bad does not regress, or only skipped
commits are left); 2 bad input (before any server starts); 1 a run failed; 130 interrupted.
`)
}
