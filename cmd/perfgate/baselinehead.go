package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
)

// baselineHeadline says what a series recorded in dir is as a regression gate's
// baseline, in one sentence and one line under it: its runs and sessions, the workload
// and the directory; the measured between-run CV of the primary statistics; and
// whether that is enough for a decisive gate at the default margin, as `perfgate
// baseline plan` would answer for that CV (check.PlanBaseline): with the
// between-session noise the gate assumes when told nothing (as large as the runs'),
// and, when that is not enough, the sessions from which it measures it instead.
func baselineHeadline(s *gate.Series) []string {
	sc, _ := perfrun.SeriesScenario(s) // a series this process recorded: its scenario decodes
	head := fmt.Sprintf("baseline recorded: %s in %s of %q (%s) in %s",
		runsText(s.Len()), sessionsText(s.Sessions()), sc.NameOrDefault(), sc.Describe(), artifactPath(s.Dir))
	var parts []string
	cv := 0.0
	for _, st := range gate.RunStatList() {
		if !st.Primary {
			continue
		}
		if c := s.CV(st.Name); !math.IsNaN(c) {
			parts = append(parts, st.Label+" "+check.PctText(c))
			cv = math.Max(cv, c)
		}
	}
	if len(parts) == 0 {
		return []string{head, "    between-run CV: not measured (one run): a gate against it is inconclusive unless told a CV (--prior-cv); record --num-profile-runs 5 or more"}
	}
	lines := []string{head, fmt.Sprintf("    between-run CV of the primary statistics: %s (largest %s)", strings.Join(parts, ", "), check.PctText(cv))}
	cv = math.Min(cv, 0.99)
	margin := check.PctText(check.DefaultMargin)
	head2 := fmt.Sprintf("    decisive at the default %s margin (80%% power; perfgate baseline plan --cv %s): ", margin, check.PctText(cv))
	as, err := check.PlanBaseline(check.BaselinePlan{RunCV: cv, SessionCV: cv})
	measured, merr := check.PlanBaseline(check.BaselinePlan{RunCV: cv, Measure: true})
	add := fmt.Sprintf("record them in separate jobs and add each with perfgate baseline add %s RUN_DIR", artifactPath(s.Dir))
	per := s.Len() / max(1, s.Sessions())
	switch {
	case merr == nil && s.Sessions() >= check.MinSessions:
		verdict := "yes"
		if s.Sessions() < measured.Sessions || per < measured.Runs {
			verdict = "not yet"
		}
		lines = append(lines, head2+fmt.Sprintf("%s: the gate measures how far sessions wander; it needs %s (it has %d of %d)", verdict, measured, s.Sessions(), per))
	case err == nil:
		verdict := "yes"
		if s.Sessions() < as.Sessions || per < as.Runs {
			verdict = "not yet"
		}
		lines = append(lines, head2+fmt.Sprintf("%s, if sessions wander no more than runs, as the gate assumes without --session-cv: %s (it has %d of %d)", verdict, as, s.Sessions(), per))
		if merr == nil {
			lines = append(lines, fmt.Sprintf("    to measure how far sessions wander instead: %s; %s", measured, add))
		}
	case merr == nil:
		lines = append(lines, head2+fmt.Sprintf("not yet: no baseline is, if sessions wander as far as runs (as the gate assumes without --session-cv); a gate that measures how far they wander needs %s; %s; or give the gate --session-cv", measured, add))
	default:
		lines = append(lines, head2+"no baseline is at this between-run CV; steady the runs or widen --margin")
	}
	return lines
}

// writeRunStatTable writes the series' run statistics as a compact table: per statistic
// its geometric mean, between-run CV, smallest and largest run, and whether it gates.
func writeRunStatTable(w io.Writer, s *gate.Series) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  statistic\tgeometric mean\tCV\tmin\tmax\tgate\n")
	for _, st := range gate.RunStatList() {
		xs, _ := s.Values(st.Name)
		if len(xs) == 0 {
			continue
		}
		gm := "-" // a statistic with a zero or negative run has no geometric mean
		if g := check.GeoMean(xs); !math.IsNaN(g) {
			gm = st.Unit.Format(g)
		}
		cv := "-"
		if c := s.CV(st.Name); !math.IsNaN(c) {
			cv = check.PctText(c)
		}
		role := "reported"
		if st.Primary {
			role = "primary"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", st.Name, gm, cv,
			st.Unit.Format(slices.Min(xs)), st.Unit.Format(slices.Max(xs)), role)
	}
	_ = tw.Flush()
}

func runsText(n int) string { return fmt.Sprintf("%d %s", n, plural(n, "run", "runs")) }

func sessionsText(n int) string { return fmt.Sprintf("%d %s", n, plural(n, "session", "sessions")) }
