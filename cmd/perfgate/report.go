package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/reportgen"
)

// cmdReport rebuilds a run's exports, HTML report and verdicts from the recordings in
// its artifact directory (client.jsonl, and server.jsonl and scenario.json when
// present): to recover a killed run, whose records reached disk as it went, or to
// re-gate an old run with other assertions. The exit code is the gate's, as profile's.
func cmdReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "report", "DIR [--assert EXPR]... [--goodput SLOS] [--quiet]")
	var asserts stringList
	fs.Var(&asserts, "assert", "assertion (repeatable), as profile takes it; replaces the recorded run's assertions")
	goodput := fs.String("goodput", "", "goodput SLO, as profile takes it, e.g. \"time_to_first_token:200\" (ms)")
	dirFlag := fs.String("dir", "", "the run's artifact directory (or give it as the first argument)")
	quiet := fs.Bool("quiet", false, "print only the verdicts and where the reports are")
	var dir string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case dir != "" && *dirFlag != "" && dir != *dirFlag:
		return invalidf("two directories given (%s and --dir %s); want one", dir, *dirFlag)
	case dir == "":
		dir = *dirFlag
	}
	if dir == "" {
		return invalidf("want the run's artifact directory: perfgate report DIR")
	}
	out, err := perfrun.Load(dir)
	if err != nil {
		return invalidf("%s: %v", dir, strings.TrimPrefix(err.Error(), "scenario: "))
	}
	if len(asserts) > 0 || *goodput != "" {
		if err := regate(&out.Scenario, asserts, *goodput); err != nil {
			return err
		}
		if err := out.Recompute(); err != nil {
			return runtimef("%v", err)
		}
	}
	if err := out.WriteReports(e.args...); err != nil {
		return runtimef("%v", err)
	}
	if !*quiet {
		fmt.Fprintf(e.stdout, "perfgate report: %s: %d records", dir, out.Context("").Requests+out.Metrics.Warmup)
		if out.Interrupted {
			fmt.Fprint(e.stdout, " (the run did not finish: reports marked was_cancelled)")
		}
		if out.Truncated {
			fmt.Fprint(e.stdout, " (its last line was cut short and is left out)")
		}
		fmt.Fprintln(e.stdout)
		printTable(e, out)
		printPins(e.stdout, out.Pins)
	}
	if err := invalidMeasurement(e.stdout, out.Verdicts(check.KindValidity)); err != nil {
		return err
	}
	vs := out.Check()
	ok := printVerdicts(e.stdout, vs)
	fmt.Fprintf(e.stdout, "report:    %s\n", filepath.Join(dir, reportgen.RunReportFile))
	if len(vs) > 0 {
		_, answer := check.Answer(vs)
		fmt.Fprintln(e.stdout, answer)
		if !ok {
			return assertFailed(vs)
		}
	}
	return nil
}

// regate replaces a recorded scenario's objectives with the --assert rules given (if
// any) and its SLO with --goodput (if given), for report and merge. As in profile,
// failed requests still fail the gate unless a rule says otherwise (error_rate<=1).
func regate(sc *scenario.Scenario, asserts []string, goodput string) error {
	if len(asserts) > 0 {
		sc.Objectives = scenario.Objectives{}
		if err := applyAsserts(sc, asserts); err != nil {
			return err
		}
	}
	if goodput != "" {
		slo, err := metric.ParseSLO(goodput)
		if err != nil {
			return invalidf("--goodput: %v", err)
		}
		sc.Objectives.SLO, sc.SLO = slo, slo
	}
	return nil
}
