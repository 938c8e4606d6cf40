package reportgen

import (
	"fmt"
	"math"

	"github.com/perfgate/perfgate/distribution"
)

// Summary is the comparison as a markdown summary ([WriteSummary]): the verdict's
// text as `perfgate compare` prints it, marked by want (Identical or
// SameDistribution: PASS when it holds, else FAIL), and one row per length: a's mean
// as the baseline, b's as the current, the change of the mean, and the KS test's
// answer at its level (alpha/2 each).
func (v CompareVerdict) Summary(a, b Recording, want string) Summary {
	s := Summary{Title: fmt.Sprintf("perfgate compare: %s vs %s", a.Label, b.Label), Mark: "PASS", Headline: v.Text}
	if !v.Holds(want) {
		s.Mark = "FAIL"
	}
	s.Lines = []string{fmt.Sprintf("%s: %d requests; %s: %d requests", a.Label, len(a.ISL), b.Label, len(b.ISL))}
	row := func(name string, x, y []int, ks distribution.KSResult) SummaryStat {
		mx, my := summarize(ints(x)).Mean, summarize(ints(y)).Mean
		r := SummaryStat{Name: name + " mean (tokens)", Baseline: num(mx), Current: num(my), Gating: true,
			Verdict: fmt.Sprintf("same distribution (KS D=%.4f, p=%.3g)", ks.Statistic, ks.PValue)}
		if ks.PValue < v.Alpha/2 {
			r.Verdict = fmt.Sprintf("differs (KS D=%.4f, p=%.3g < %g)", ks.Statistic, ks.PValue, v.Alpha/2)
		}
		if mx > 0 && !math.IsNaN(my) {
			r.Change = fmt.Sprintf("%+.1f%%", 100*(my/mx-1))
		}
		return r
	}
	s.Stats = []SummaryStat{row("ISL", a.ISL, b.ISL, v.ISL), row("OSL", a.OSL, b.OSL, v.OSL)}
	return s
}
