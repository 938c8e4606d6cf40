package run

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/reportgen"
)

// ValidityMark is how a validity verdict is marked: INVALID when it fails (the
// measurement cannot be trusted), WARN when it found a problem it lets through, PASS
// otherwise.
func ValidityMark(v check.Verdict) string {
	switch {
	case !v.Pass:
		return "INVALID"
	case v.Status == check.Invalid:
		return "WARN"
	}
	return "PASS"
}

// Summary is the run as a markdown summary (reportgen.WriteSummary): the answer the
// console gives under its verdicts (check.Answer; a run that completed nothing, was
// aborted, or whose measurement is invalid says that instead), the run's warnings,
// its validity verdicts, its run statistics (the current column: one run has no
// baseline), its assertions' verdicts, and links to its report and exports.
func (o *Outcome) Summary() reportgen.Summary {
	sc := o.Scenario
	s := reportgen.Summary{Title: fmt.Sprintf("perfgate: %s (%s)", sc.Name, sc.LoadString())}
	vs, val := o.Verdicts(), o.Validity()
	for _, v := range val {
		s.Validity = append(s.Validity, reportgen.SummaryLine{Mark: ValidityMark(v), Text: v.Summary})
	}
	s.Mark, s.Headline = runAnswer(vs, val, o.Health()[0], o.Aborted())
	ctx := o.Context("")
	s.Lines = append(s.Lines, fmt.Sprintf("%d requests (%d failed), seed %d", ctx.Requests, ctx.Errors, sc.Seed))
	if o.Interrupted {
		s.Lines = append(s.Lines, "interrupted: the numbers are of the requests that finished (was_cancelled)")
	}
	s.Lines = append(s.Lines, o.Warnings...)
	rs := o.RunStats()
	for _, st := range gate.RunStatList() {
		v, ok := rs.Stats[st.Name]
		if !ok || math.IsNaN(v) {
			continue
		}
		s.Stats = append(s.Stats, reportgen.SummaryStat{Name: st.Label, Current: st.Unit.Format(v), Gating: true})
	}
	for _, v := range vs {
		s.Verdicts = append(s.Verdicts, reportgen.SummaryLine{Mark: v.Mark(), Text: v.Summary})
	}
	if o.Dir != "" {
		jsonName, csvName, _ := reportgen.ExportFiles(sc.Exports.Prefix)
		for _, a := range []struct{ label, name string }{
			{"report", reportgen.RunReportFile}, {"verdicts", VerdictsFile}, {"metrics", MetricsFile},
			{"AIPerf JSON", jsonName}, {"AIPerf CSV", csvName}, {"client recording", ClientFile},
		} {
			if p := o.File(a.name); p != "" {
				s.Artifacts = append(s.Artifacts, reportgen.SummaryLink{Label: a.label, Path: p})
			}
		}
	}
	return s
}

// runAnswer is a run's answer: a run that completed nothing fails with the reason
// (completed, the run's own gate), a run an abort rule stopped fails with why, a
// measurement a validity check finds invalid is INVALID, naming the checks (its
// objectives are not judged), else the assertions' answer (check.Answer).
func runAnswer(vs, validity []check.Verdict, completed check.Verdict, aborted string) (mark, headline string) {
	var invalid []string
	for _, v := range validity {
		if !v.Pass {
			invalid = append(invalid, v.Check)
		}
	}
	switch {
	case !completed.Pass:
		return "FAIL", completed.Summary
	case aborted != "":
		return "FAIL", "ABORTED: " + aborted
	case len(invalid) > 0:
		return "INVALID", fmt.Sprintf("invalid measurement: %s; the objectives are not judged (docs/validity.md)", strings.Join(invalid, ", "))
	}
	return check.Answer(vs)
}

// WriteSummary writes the run's markdown summary ([Outcome.Summary]) to w, under
// GitHub's 1 MiB limit for a job summary.
func (o *Outcome) WriteSummary(w io.Writer) error {
	return reportgen.WriteSummary(w, o.Summary())
}
