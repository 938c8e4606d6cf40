package history

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Trend is one metric of one series: a point per result that has the metric, with the
// interval of its runs, and the change points found in it.
type Trend struct {
	Series SeriesKey
	Metric string
	// Results are the series' results that have the metric, oldest first; Values[i] is
	// Results[i]'s [Center], Lo[i] and Hi[i] the smallest and largest of its runs.
	Results []*Result
	Values  []float64
	Lo, Hi  []float64
	// ChangePoints are the change points in Values.
	ChangePoints []ChangePoint
}

// NewTrend returns metric's points over results (one series, oldest first), without
// change points ([Trend.Detect] finds them).
func NewTrend(results []Result, metric string) *Trend {
	tr := &Trend{Metric: metric}
	for i := range results {
		r := &results[i]
		v := r.Values(metric)
		if len(v) == 0 {
			continue
		}
		tr.Series = r.Series()
		tr.Results = append(tr.Results, r)
		tr.Values = append(tr.Values, Center(v))
		tr.Lo = append(tr.Lo, slices.Min(v))
		tr.Hi = append(tr.Hi, slices.Max(v))
	}
	return tr
}

// Detect finds the change points, reusing prev (see [DetectIncremental]) when it was
// saved for the same results' prefix, and returns the state to save.
func (tr *Trend) Detect(d Detection, prev State) State {
	n := len(tr.Values)
	if prev.N > n || prev.N == 0 || tr.Results[prev.N-1].ID != prev.LastID {
		prev = State{} // results were added out of order, or removed: start over
	}
	var st State
	tr.ChangePoints, st = DetectIncremental(tr.Values, d, prev)
	if n > 0 {
		st.LastID = tr.Results[n-1].ID
	}
	return st
}

// Baseline is the current level of the trend: the mean of the points since the last
// change point, and the index of the first of them.
func (tr *Trend) Baseline() (mean float64, from int) {
	if len(tr.ChangePoints) > 0 {
		from = tr.ChangePoints[len(tr.ChangePoints)-1].Index
	}
	m, _ := meanStd(tr.Values[from:])
	return m, from
}

// Finding is a change point judged by [Check].
type Finding struct {
	Series SeriesKey   `json:"series"`
	Metric string      `json:"metric"`
	Point  ChangePoint `json:"change_point"`
	// Worse is the change expressed so that positive is worse (slower latency, lower
	// throughput), relative to the level before.
	Worse float64 `json:"worse"`
	// Regression: the change is recent and worse than the margin.
	Regression bool `json:"regression"`
	// Steps is the number of change points the finding spans: 1 for one step, more for
	// a drift (successive changes since Point.Index that together pass the margin).
	Steps int `json:"steps"`
	// First is the first result after the change, LastBefore the last one before it:
	// the change entered in the commits between them.
	First, LastBefore *Result `json:"-"`
}

// String is the finding as `history check` prints it.
func (f Finding) String() string {
	verb := "improved"
	if f.Worse > 0 {
		verb = "regressed"
	}
	if f.Steps > 1 {
		verb += fmt.Sprintf(" in %d steps", f.Steps)
	}
	return fmt.Sprintf("%s %s %s by %.1f%% (%s → %s, p = %.2g): first result after the change is commit %s (result %d); the last before it is commit %s (result %d)",
		f.Series.Scenario, f.Metric, verb, 100*math.Abs(f.Worse), Format(f.Metric, f.Point.Before), Format(f.Metric, f.Point.After), f.Point.P,
		shortCommit(f.First.Commit), f.First.ID, shortCommit(f.LastBefore.Commit), f.LastBefore.ID)
}

// Check decides which change points fail a nightly job: those at or near the newest
// results that make a metric worse by more than a margin.
type Check struct {
	Detection Detection
	// Margin is the relative worsening that fails (default 0.05).
	Margin float64
	// Recent is how near the newest result a change point must be, in results
	// (default 10): an older change was someone's news on an earlier night.
	Recent int
	// Lookback is how far back, in results, a drift is added up (default 40): when the
	// newest change point is recent, the level since it is compared with the level
	// before each change point of the last Lookback results, so small steps that are
	// each within the margin fail together once their sum passes it.
	Lookback int
}

// Defaults of [Check].
const (
	DefaultMargin   = 0.05
	DefaultRecent   = 10
	DefaultLookback = 40
)

func (c Check) withDefaults() Check {
	if c.Margin <= 0 {
		c.Margin = DefaultMargin
	}
	if c.Recent <= 0 {
		c.Recent = DefaultRecent
	}
	if c.Lookback <= 0 {
		c.Lookback = DefaultLookback
	}
	return c
}

// Findings judges the trend's change points (found already): one finding per change
// point, and a drift finding when successive recent changes together pass the margin.
func (c Check) Findings(tr *Trend) []Finding {
	c = c.withDefaults()
	var out []Finding
	n := len(tr.Values)
	worse := func(before, after float64) float64 {
		if before == 0 {
			return 0
		}
		w := after/before - 1
		if HigherIsBetter(tr.Metric) {
			w = -w
		}
		return w
	}
	regressed := false
	for _, cp := range tr.ChangePoints {
		f := Finding{Series: tr.Series, Metric: tr.Metric, Point: cp, Worse: worse(cp.Before, cp.After), Steps: 1,
			First: tr.Results[cp.Index], LastBefore: tr.Results[cp.Index-1]}
		f.Regression = cp.Index >= n-c.Recent && f.Worse > c.Margin
		regressed = regressed || f.Regression
		out = append(out, f)
	}
	k := len(tr.ChangePoints) - 1
	if regressed || k < 1 || tr.ChangePoints[k].Index < n-c.Recent {
		return out
	}
	// Drift: the level now against the level before each earlier change in Lookback.
	now, _ := tr.Baseline()
	var drift *Finding
	for j := k - 1; j >= 0 && tr.ChangePoints[j].Index >= n-c.Lookback; j-- {
		cp := tr.ChangePoints[j]
		w := worse(cp.Before, now)
		if w > c.Margin && (drift == nil || w > drift.Worse) {
			p := 0.0
			for _, q := range tr.ChangePoints[j : k+1] {
				p = max(p, q.P)
			}
			drift = &Finding{Series: tr.Series, Metric: tr.Metric, Worse: w, Regression: true, Steps: k - j + 1,
				Point: ChangePoint{Index: cp.Index, Before: cp.Before, StdBefore: cp.StdBefore, After: now, P: p},
				First: tr.Results[cp.Index], LastBefore: tr.Results[cp.Index-1]}
		}
	}
	if drift != nil {
		out = append(out, *drift)
	}
	return out
}

// Analyze reads every series q selects from s, finds the change points of each of the
// metrics (all metrics when none are named) incrementally (saving the detector's state
// back), and returns the trends, series by series.
func Analyze(ctx context.Context, s Store, q Query, d Detection, metrics []string) ([]*Trend, error) {
	rs, err := s.Results(ctx, q)
	if err != nil {
		return nil, err
	}
	bySeries := map[SeriesKey][]Result{}
	var keys []SeriesKey
	for _, r := range rs {
		k := r.Series()
		if _, ok := bySeries[k]; !ok {
			keys = append(keys, k)
		}
		bySeries[k] = append(bySeries[k], r)
	}
	slices.SortFunc(keys, func(a, b SeriesKey) int { return strings.Compare(a.String(), b.String()) })
	var out []*Trend
	for _, k := range keys {
		results := bySeries[k]
		names := metrics
		if len(names) == 0 {
			names = allMetrics(results)
		}
		for _, m := range names {
			tr := NewTrend(results, m)
			if len(tr.Values) == 0 {
				continue
			}
			prev := State{}
			if q.Last == 0 && q.Branch == "" {
				// The saved state is of the whole series; a subset starts over.
				if prev, _, err = s.State(ctx, k, m); err != nil {
					return nil, err
				}
			}
			st := tr.Detect(d, prev)
			if q.Last == 0 && q.Branch == "" {
				if err := s.PutState(ctx, k, m, st); err != nil {
					return nil, err
				}
			}
			out = append(out, tr)
		}
	}
	return out, nil
}

func allMetrics(rs []Result) []string {
	var names []string
	for i := range rs {
		for _, m := range rs[i].Metrics() {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	slices.Sort(names)
	return names
}
