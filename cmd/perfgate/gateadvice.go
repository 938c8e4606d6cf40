package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
)

// gateCommand is how the user ran a gate, so that its advice names the flags of that
// command: profile (a baseline directory or history:, or A/B) or regress (two saved
// directories).
type gateCommand struct {
	regress  bool   // perfgate regress BASELINE_DIR CURRENT_DIR
	ab       bool   // profile --baseline-url / --baseline-server-cmd
	baseline string // the baseline as given: a directory, or history:SCENARIO…
	current  string // regress: the current directory
	verbose  bool   // -v: every verdict's evidence, the reported statistics and where each side ran, passing or not
}

// gateAdvice says, in the flags of the command the user ran, what would decide an
// inconclusive gate: check.DecideGate's numbers (the runs and sessions each comparison
// needs, and check.PlanBaseline's baseline when the session noise was assumed). Empty
// when the gate was not inconclusive.
func gateAdvice(res gate.GateResult, how gateCommand) []string {
	if res.Invalid() || res.Change() != check.ChangeInconclusive {
		return nil
	}
	a := check.DecideGate(res.Comparisons, res.Gating)
	if !a.Needed() {
		return nil
	}
	base := cmp.Or(how.baseline, "BASELINE_DIR")
	runs := func(n int) string { return fmt.Sprintf("%d %s", n, plural(n, "run", "runs")) }
	var out []string
	switch {
	case a.NoInterval:
		out = append(out, "between-run noise is not measured (one run per side): record the baseline with --num-profile-runs 5 or more, or give --prior-cv (the between-run CV of an earlier baseline)")
	case a.CurrentRuns > 0 && a.PerSide:
		out = append(out, fmt.Sprintf("about %s per side decide it: re-run with --num-profile-runs %d --max-runs %d", runs(a.CurrentRuns), a.CurrentRuns, a.CurrentRuns))
	case a.CurrentRuns > 0 && how.regress:
		out = append(out, fmt.Sprintf("about %s on the current side decide it (it has %d): record them with perfgate profile … --num-profile-runs %d --artifact-dir DIR, then perfgate regress %s DIR",
			runs(a.CurrentRuns), res.Current.Len(), a.CurrentRuns, base))
	case a.CurrentRuns > 0:
		out = append(out, fmt.Sprintf("about %s on the current side decide it (this gate ran %d): re-run with --num-profile-runs %d --max-runs %d",
			runs(a.CurrentRuns), res.Current.Len(), a.CurrentRuns, a.CurrentRuns))
	}
	if a.CurrentRuns > 0 || a.NoInterval {
		return out
	}
	more := "more current runs would not"
	switch {
	case a.BaselineRuns > 0:
		out = append(out, fmt.Sprintf("%s; a baseline of about %s in its one session would (it has %d): re-record it with perfgate profile … --num-profile-runs %d --artifact-dir %s",
			more, runs(a.BaselineRuns), res.Baseline.Len(), a.BaselineRuns, base))
	case a.BaselineSessions > 0:
		out = append(out, more+"; "+sessionsAdvice(a.BaselineSessions, a.RunsPerSession, a.HaveSessions, base))
	case a.SessionNoiseAssumed:
		s := fmt.Sprintf("%s: how far sessions wander is not measured (baseline %d %s, fewer than %d). Give --session-cv (the between-session CV, e.g. 1%%, measured by an earlier baseline of %d sessions)",
			more, a.HaveSessions, plural(a.HaveSessions, "session", "sessions"), check.MinSessions, check.MinSessions)
		if a.PlanErr == nil && a.Plan.Sessions > 0 {
			s += ", or " + sessionsAdvice(a.Plan.Sessions, a.Plan.Runs, a.HaveSessions, base) +
				fmt.Sprintf(" (perfgate baseline plan --cv %s --margin %s)", check.PctText(a.RunCV), check.PctText(a.Margin))
		}
		out = append(out, s)
	case a.Both && !a.Hopeless:
		s := fmt.Sprintf("neither side's runs alone would: a baseline of %d %s of %s and %s on the current side would (perfgate baseline plan --cv %s --session-cv %s --margin %s): ",
			a.Plan.Sessions, plural(a.Plan.Sessions, "session", "sessions"), runs(a.Plan.Runs), runs(a.Plan.Runs),
			check.PctText(a.RunCV), check.PctText(a.SessionCV), check.PctText(a.Margin))
		if how.regress {
			s += fmt.Sprintf("record each side with perfgate profile … --num-profile-runs %d, then perfgate regress", a.Plan.Runs)
		} else {
			s += fmt.Sprintf("re-record the baseline with --num-profile-runs %d --artifact-dir %s, then gate with --num-profile-runs %d", a.Plan.Runs, base, a.Plan.Runs)
		}
		out = append(out, s)
	case a.Hopeless:
		out = append(out, fmt.Sprintf("no number of runs or baseline sessions would: the current session's own offset hides a %s change; widen --margin, or compare A/B in one session with --baseline-url",
			check.PctText(a.Margin)))
	}
	return out
}

// sessionsAdvice says how to grow a baseline to want sessions of per runs: more results
// of a history baseline, else more sessions added with perfgate baseline add.
func sessionsAdvice(want, per, have int, base string) string {
	if history.IsBaselineSpec(base) {
		name, _, _ := strings.Cut(strings.TrimPrefix(base, history.BaselinePrefix), "?")
		return fmt.Sprintf("a baseline of %d results would (each a session; it has %d): --baseline %s%s?last=%d once the history holds them",
			want, have, history.BaselinePrefix, name, want)
	}
	return fmt.Sprintf("a baseline of %d sessions of %d %s would (it has %d): record each with perfgate profile … --num-profile-runs %d --artifact-dir RUN_DIR in its own job, then perfgate baseline add %s RUN_DIR…",
		want, per, plural(per, "run", "runs"), have, per, base)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// printGate prints the gate: the headline (the answer, what was compared, runs and
// sessions per side), what would decide it when inconclusive, where each side ran, the
// verdicts of the statistics that gate (PASS, FAIL, INCONCLUSIVE), then those reported
// only, under their own heading, one line each, marked "info". A passing verdict is its
// one line; the evidence (runs, ratio, noise, rule, notes) is printed for a failing or
// inconclusive one, and for every one with -v. A gate that passed decided (no
// regression, or improved) is compact without -v: the headline, what differs between
// the sides, and one line per gating statistic.
func printGate(w io.Writer, res gate.GateResult, how gateCommand) {
	fmt.Fprintf(w, "%s %s\n", res.Mark(), res.Headline())
	for _, l := range gateAdvice(res, how) {
		fmt.Fprintf(w, "    to decide: %s\n", l)
	}
	compact := !how.verbose && !res.Invalid() && res.Pass() && !res.Inconclusive()
	if !res.Invalid() {
		for _, l := range res.Where() {
			if compact && (l.Label == "baseline" || l.Label == "current") {
				continue // the headline counts each side's runs; -v says where they are
			}
			fmt.Fprintf(w, "    %s: %s\n", cmp.Or(l.Label, "      "), l.Text)
		}
	}
	if len(res.Workload) > 0 || len(res.Gating) != len(res.Verdicts) {
		for _, v := range res.AllVerdicts() {
			fmt.Fprintf(w, "%s %s\n", verdictMark(v), v.String())
		}
		return
	}
	for i, v := range res.Verdicts {
		if res.Gating[i] {
			fmt.Fprintf(w, "%s %s\n", verdictMark(v), verdictText(v, how.verbose))
		}
	}
	if compact {
		if n := len(res.Verdicts) - gatingCount(res); n > 0 {
			fmt.Fprintf(w, "    reported, not gating: %d %s; -v prints them, the HTML report has their runs\n", n, plural(n, "statistic", "statistics"))
		}
		return
	}
	head := false
	for i, v := range res.Verdicts {
		if res.Gating[i] {
			continue
		}
		if !head {
			fmt.Fprintln(w, "Reported, not gating (the HTML report has their runs):")
			head = true
		}
		fmt.Fprintf(w, "  info %s\n", v.Summary)
	}
}

// verdictText is a verdict's summary alone when it passed decided, else with its
// evidence; with verbose always with it.
func verdictText(v check.Verdict, verbose bool) string {
	if v.Pass && v.Status == check.Decided && !verbose {
		return v.Summary
	}
	return v.String()
}

func gatingCount(res gate.GateResult) int {
	n := 0
	for _, g := range res.Gating {
		if g {
			n++
		}
	}
	return n
}

func verdictMark(v check.Verdict) string { return v.Mark() }
