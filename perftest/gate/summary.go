package gate

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/reportgen"
)

// Mark is the gate's answer as the console marks its headline: INVALID when nothing
// could be compared, INCONCLUSIVE when a gating statistic could not tell, FAIL when
// the gate failed, else PASS.
func (r GateResult) Mark() string {
	switch {
	case r.Invalid():
		return "INVALID"
	case r.Inconclusive():
		return "INCONCLUSIVE"
	case !r.Pass():
		return "FAIL"
	}
	return "PASS"
}

// Summary is the gate's answer as a markdown summary (reportgen.WriteSummary): the
// marked [GateResult.Headline], where each side ran and the margin, one row per
// statistic (each side's geometric mean, the change, its interval and the verdict;
// reported-only statistics marked), and links to the gate report and each side's
// runs when they are on disk. A caller adds its own lines (what would decide) and
// history.
func (r GateResult) Summary() reportgen.Summary {
	s := reportgen.Summary{Title: "perfgate regression gate", Mark: r.Mark(), Headline: r.Headline()}
	if !r.Invalid() {
		for _, l := range r.Where() {
			s.Lines = append(s.Lines, strings.TrimSpace(l.Label+": "+l.Text))
		}
	}
	for _, d := range r.Workload {
		s.Lines = append(s.Lines, "workload differs: "+d.String())
	}
	if len(r.Comparisons) > 0 {
		g := r.Gate
		s.Lines = append(s.Lines, fmt.Sprintf("margin δ %s, family alpha %s over the gating statistics",
			check.Fraction.Format(cmp.Or(g.Margin, check.DefaultMargin)), check.Fraction.Format(r.Alpha)))
	}
	for i, c := range r.Comparisons {
		row := reportgen.SummaryStat{Name: c.Metric, Gating: r.Gating[i], Verdict: c.Change.String()}
		row.Baseline, row.Current, row.Change, row.Interval = c.Cells()
		if v := r.Verdicts[i]; c.Invalid != "" {
			row.Verdict = "invalid: " + c.Invalid
		} else if r.Gating[i] && !v.Pass {
			row.Verdict += ": fails the gate"
		}
		s.Stats = append(s.Stats, row)
	}
	if r.Current != nil && r.Current.Dir != "" {
		s.Artifacts = appendIfExists(s.Artifacts, "gate report", filepath.Join(r.Current.Dir, reportgen.GateReportFile))
		s.Artifacts = appendIfExists(s.Artifacts, "current runs", filepath.Join(r.Current.Dir, RunsFile))
	}
	if r.Baseline != nil && r.Baseline.Dir != "" {
		s.Artifacts = appendIfExists(s.Artifacts, "baseline runs", filepath.Join(r.Baseline.Dir, RunsFile))
	}
	return s
}

// appendIfExists links path when it is on disk.
func appendIfExists(ls []reportgen.SummaryLink, label, path string) []reportgen.SummaryLink {
	if _, err := os.Stat(path); err != nil {
		return ls
	}
	return append(ls, reportgen.SummaryLink{Label: label, Path: path})
}

// WriteSummary writes the gate's markdown summary ([GateResult.Summary]) to w, under
// GitHub's 1 MiB limit for a job summary; its artifact links are the paths as the
// series name them (reportgen.WriteSummaryFile makes them relative to a file).
func (r GateResult) WriteSummary(w io.Writer) error {
	return reportgen.WriteSummary(w, r.Summary())
}
