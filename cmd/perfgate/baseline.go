package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
)

// baselineCommands are the subcommands of `perfgate baseline`.
var baselineCommands = []struct{ name, synopsis, summary string }{
	{"plan", "--cv 3% [--session-cv 1%] [--margin 5%] [--power 80%] [--alpha A]", "the runs and sessions a baseline and a gate need for a decisive answer"},
	{"add", "BASELINE_DIR RUNS_DIR…", "add saved runs (each directory a session) to a baseline, so the gate can measure how far sessions wander"},
}

// cmdBaseline is `perfgate baseline plan|add`.
func cmdBaseline(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1 {
		w := e.stdout
		if len(args) == 0 {
			w = e.stderr
		}
		fmt.Fprintln(w, "Usage: perfgate baseline <command> [flags]")
		fmt.Fprintln(w, "\nCommands:")
		var names []string
		for _, c := range baselineCommands {
			fmt.Fprintf(w, "  %-5s %s\n", c.name, c.summary)
			names = append(names, c.name)
		}
		if len(args) == 0 {
			return invalidf("a command is required (%s)", strings.Join(names, ", "))
		}
		return flag.ErrHelp
	}
	sub, rest := args[0], args[1:]
	if sub == "help" && len(rest) > 0 {
		sub, rest = rest[0], []string{"-h"}
	}
	for _, c := range baselineCommands {
		if c.name != sub {
			continue
		}
		fs := newFlags(e, "baseline "+c.name, c.synopsis)
		if sub == "plan" {
			return baselinePlan(e, fs, rest)
		}
		return baselineAdd(e, fs, rest)
	}
	return invalidf("unknown command %q (want plan or add)", sub)
}

// baselinePlan prints check.PlanBaseline's answer twice: with the between-session CV
// given to the gate (--session-cv, stored), and with the gate measuring it from the
// baseline's sessions.
func baselinePlan(e *env, fs *flag.FlagSet, args []string) error {
	cv := fs.String("cv", "", "the between-run CV within a session, \"3%\" or 0.03 (required)")
	scv := fs.String("session-cv", "", "the between-session CV, \"1%\" or 0.01 (default: sessions do not differ)")
	margin := fs.String("margin", "5%", "the margin δ")
	power := fs.String("power", "80%", "the probability of each decisive answer")
	alpha := fs.Float64("alpha", 0, "the one-sided level of each end of the interval at one look (default the family alpha 0.01 over the default plan's 3 looks)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return invalidf("unexpected arguments %q", fs.Args())
	}
	var p check.BaselinePlan
	for _, f := range []struct {
		name, v  string
		to       *float64
		required bool
	}{{"--cv", *cv, &p.RunCV, true}, {"--session-cv", *scv, &p.SessionCV, false}, {"--margin", *margin, &p.Margin, false}, {"--power", *power, &p.Power, false}} {
		if f.v == "" {
			if f.required {
				return invalidf("%s is required, e.g. %s 3%%", f.name, f.name)
			}
			continue
		}
		x, err := parseFraction(f.v)
		if err != nil {
			return invalidf("%s: %v", f.name, err)
		}
		*f.to = x
	}
	p.Alpha = *alpha
	given, err := check.PlanBaseline(p)
	if err != nil && !errors.Is(err, check.ErrNoPlan) {
		return invalidf("%s", strings.TrimPrefix(err.Error(), "check: plan: "))
	}
	in := given.Input
	fmt.Fprintf(e.stdout, "run CV %s, session CV %s, margin %s, power %s, alpha %.3g per end and look\n", pctText(in.RunCV), pctText(in.SessionCV), pctText(in.Margin), pctText(in.Power), in.Alpha)
	fmt.Fprintln(e.stdout, "decisive: \"regressed\" for a 2δ slowdown and \"no regression\" for no change, each with that power")
	if err != nil {
		fmt.Fprintf(e.stdout, "session CV given to the gate (--session-cv, or stored):  %v\n", err)
	} else {
		fmt.Fprintf(e.stdout, "session CV given to the gate (--session-cv, or stored):  %s\n", given)
		if in.SessionCV == 0 {
			fmt.Fprintln(e.stdout, "  (a gate is told sessions barely differ with a small --session-cv, e.g. 0.5%; told nothing, it assumes they wander as far as runs)")
		}
	}
	p.Measure = true
	measured, err := check.PlanBaseline(p)
	if err != nil {
		fmt.Fprintf(e.stdout, "session CV measured by the gate from the baseline:      %v\n", err)
		return nil
	}
	fmt.Fprintf(e.stdout, "session CV measured by the gate from the baseline:      %s\n", measured)
	return nil
}

func pctText(x float64) string { return strings.TrimSuffix(fmt.Sprintf("%.3g", x*100), ".0") + "%" }

// baselineAdd appends each RUNS_DIR (a series or one run) to the baseline in
// BASELINE_DIR as a session of its own (gate.Series.AppendSession), creating the
// baseline if it has no runs.json, and rewrites its runs.json.
func baselineAdd(e *env, fs *flag.FlagSet, args []string) error {
	flags, pos := splitArgs(fs, args)
	if err := parseFlags(fs, flags); err != nil {
		return err
	}
	if len(pos) < 2 {
		return invalidf("want BASELINE_DIR and at least one RUNS_DIR; got %d arguments", len(pos))
	}
	dir := pos[0]
	base, err := perfrun.LoadSeries(dir)
	if err != nil {
		if _, serr := os.Stat(filepath.Join(dir, gate.RunsFile)); serr == nil {
			return invalidf("%s: %v", dir, strings.TrimPrefix(err.Error(), "scenario: load series: "))
		}
		base = &gate.Series{} // a new baseline
	}
	base.Dir = dir
	for _, d := range pos[1:] {
		s, err := perfrun.LoadSeries(d)
		if err != nil {
			return invalidf("%s: %v", d, strings.TrimPrefix(err.Error(), "scenario: load series: "))
		}
		had := base.Len()
		if err := base.AppendSession(s); err != nil {
			// Name the session refused (its directory and the runs it would have been)
			// and what the baseline it was refused by holds.
			return invalidf("%s (the session that would be runs %s of %s): %s; the baseline's runs %s are the other workload",
				d, runRange(had+1, had+s.Len()), dir, strings.TrimPrefix(err.Error(), "scenario: invalid scenario: append session: "), runRange(1, had))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return runtimef("%v", err)
	}
	if err := base.SaveIndex(); err != nil {
		return runtimef("%v", err)
	}
	fmt.Fprintf(e.stdout, "baseline %s: %d runs in %d sessions", dir, base.Len(), base.Sessions())
	if n := base.Sessions(); n < check.MinSessions {
		fmt.Fprintf(e.stdout, " (%d more and the gate measures how far sessions wander)", check.MinSessions-n)
	}
	fmt.Fprintln(e.stdout)
	return nil
}

// runRange prints "1–15" (or "3" for one run).
func runRange(from, to int) string {
	if from == to {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d–%d", from, to)
}
