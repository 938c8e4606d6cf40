package history

import (
	"fmt"
	"math"
	"slices"
)

// TrendStatus is [Check.Judge]'s answer for one trend.
type TrendStatus int

// Trend statuses. The zero value is TrendNoRegression.
const (
	// TrendNoRegression: enough results, and no recent change point is a regression
	// beyond the margin.
	TrendNoRegression TrendStatus = iota
	// TrendRegressed: a recent change point (or a drift) is a regression beyond the
	// margin.
	TrendRegressed
	// TrendTooFew: fewer results than change-point detection needs to find any change
	// (MinSegment on each side of one): no answer either way.
	TrendTooFew
	// TrendTooFewSince: the newest results are worse than the level before them by
	// more than the margin, but there are fewer of them than a change point needs
	// after it (MinSegment): too few results since the first of them to tell.
	TrendTooFewSince
)

// String returns "no regression", "regressed", "not enough data" or "too few results
// since the change".
func (s TrendStatus) String() string {
	switch s {
	case TrendNoRegression:
		return "no regression"
	case TrendRegressed:
		return "regressed"
	case TrendTooFew:
		return "not enough data"
	case TrendTooFewSince:
		return "too few results since the change"
	}
	return fmt.Sprintf("TrendStatus(%d)", int(s))
}

// TrendVerdict is [Check.Judge]'s answer for one trend.
type TrendVerdict struct {
	Trend  *Trend
	Status TrendStatus
	// Findings are the trend's judged change points ([Check.Findings]); Regressions
	// those of them that are regressions.
	Findings, Regressions []Finding
	// Have is the number of results: for TrendTooFew the trend's, for
	// TrendTooFewSince the newest ones that moved; Need the number detection needs (2 ×
	// MinSegment for TrendTooFew, MinSegment for TrendTooFewSince).
	Have, Need int
	// Since is the first of the newest results that moved (TrendTooFewSince), and
	// Worse how much worse their mean is than the level before them (positive =
	// worse).
	Since *Result
	Worse float64
}

// String says the verdict in one line, as `history check` prints it.
func (v TrendVerdict) String() string {
	tr := v.Trend
	switch v.Status {
	case TrendRegressed:
		return v.Regressions[0].String()
	case TrendTooFew:
		return fmt.Sprintf("%s %s: not enough data: %d %s; change-point detection needs at least %d (%d on each side of a change, --min-segment)",
			tr.Series.Scenario, tr.Metric, v.Have, pluralResults(v.Have), v.Need, v.Need/2)
	case TrendTooFewSince:
		verb := "are"
		if v.Have == 1 {
			verb = "is"
		}
		return fmt.Sprintf("%s %s: too few results since commit %s to tell: the newest %d %s (from result %d) %s %.1f%% worse than the %d before; a change point needs %d results after it",
			tr.Series.Scenario, tr.Metric, shortCommit(v.Since.Commit), v.Have, pluralResults(v.Have), v.Since.ID, verb, 100*v.Worse,
			len(tr.Values)-v.Have-v.from(), v.Need)
	}
	return fmt.Sprintf("%s %s: no regression beyond the margin near the newest of %d results", tr.Series.Scenario, tr.Metric, len(tr.Values))
}

// from is the index of the first result of the level the newest ones are compared with.
func (v TrendVerdict) from() int {
	_, from := baselineBefore(v.Trend, len(v.Trend.Values)-v.Have)
	return from
}

func pluralResults(n int) string {
	if n == 1 {
		return "result"
	}
	return "results"
}

// baselineBefore is the level of the trend's points before index end: the mean since
// the last change point before it, and the index of its first point.
func baselineBefore(tr *Trend, end int) (mean float64, from int) {
	for _, cp := range tr.ChangePoints {
		if cp.Index < end {
			from = cp.Index
		}
	}
	m, _ := meanStd(tr.Values[from:end])
	return m, from
}

// Judge is the one definition of what a trend says, which `history check` prints and
// `history report` marks: regressed when a recent change point or a drift is a
// regression beyond the margin ([Check.Findings]); else not enough data when the trend
// has fewer results than change-point detection needs (2 × MinSegment); else too few
// results to tell when its newest results (fewer than MinSegment, so no change point
// can stand after them yet) are each worse than the level before them by more than the
// margin, and worse than any point of that level; else no regression.
func (c Check) Judge(tr *Trend) TrendVerdict {
	c = c.withDefaults()
	seg := c.Detection.withDefaults().MinSegment
	v := TrendVerdict{Trend: tr, Findings: c.Findings(tr)}
	for _, f := range v.Findings {
		if f.Regression {
			v.Regressions = append(v.Regressions, f)
		}
	}
	n := len(tr.Values)
	switch {
	case len(v.Regressions) > 0:
		v.Status = TrendRegressed
		return v
	case n < 2*seg:
		v.Status, v.Have, v.Need = TrendTooFew, n, 2*seg
		return v
	}
	worse := func(before, after float64) float64 {
		if before == 0 || math.IsNaN(before) {
			return 0
		}
		w := after/before - 1
		if HigherIsBetter(tr.Metric) {
			w = -w
		}
		return w
	}
	// The longest run of newest points, shorter than a segment, each worse than the
	// level before them by more than the margin and worse than every point of that
	// level (so one noisy night of a noisy series is not news).
	for k := seg - 1; k >= 1; k-- {
		before, from := baselineBefore(tr, n-k)
		if n-k-from < 1 {
			continue
		}
		level, tail := tr.Values[from:n-k], tr.Values[n-k:]
		worst := slices.Max(level)
		if HigherIsBetter(tr.Metric) {
			worst = slices.Min(level)
		}
		moved := func(x float64) bool { return worse(before, x) > c.Margin && worse(worst, x) > 0 }
		if !slices.ContainsFunc(tail, func(x float64) bool { return !moved(x) }) {
			m, _ := meanStd(tail)
			v.Status, v.Have, v.Need, v.Since, v.Worse = TrendTooFewSince, k, seg, tr.Results[n-k], worse(before, m)
			return v
		}
	}
	return v
}

// Judgement is [Check.JudgeAll]'s answer over several trends.
type Judgement struct {
	// Verdicts are every trend's, in order; Gating[i] says whether Verdicts[i]'s metric
	// counts.
	Verdicts []TrendVerdict
	Gating   []bool
	// Regressions are the regressions of the gating trends: what `history check` fails
	// on and `history report` counts.
	Regressions []Finding
	// TooFew and TooFewSince are the gating trends that cannot tell.
	TooFew, TooFewSince []TrendVerdict
}

// JudgeAll judges every trend ([Check.Judge]); the trends of the metrics in gating
// (nil = every trend) count: their regressions are the answer's, and those that cannot
// tell are listed so that "no regression" is never said of them.
func (c Check) JudgeAll(trends []*Trend, gating []string) Judgement {
	var j Judgement
	for _, tr := range trends {
		v := c.Judge(tr)
		g := gating == nil || slices.Contains(gating, tr.Metric)
		j.Verdicts = append(j.Verdicts, v)
		j.Gating = append(j.Gating, g)
		if !g {
			continue
		}
		j.Regressions = append(j.Regressions, v.Regressions...)
		switch v.Status {
		case TrendTooFew:
			j.TooFew = append(j.TooFew, v)
		case TrendTooFewSince:
			j.TooFewSince = append(j.TooFewSince, v)
		}
	}
	return j
}
