package check

import (
	"math"
	"strings"
)

// Advice is what would decide an inconclusive regression gate, over its gating
// comparisons: the largest need among those that were inconclusive, as numbers a
// command or a Go test turns into its own settings ([DecideGate]). Its zero value says
// nothing is needed (no gating comparison was inconclusive).
type Advice struct {
	// Metrics names the inconclusive gating comparisons.
	Metrics []string
	// NoInterval: a comparison had no interval (one run per side, no CV stored or
	// given): a baseline of several runs, or a prior CV, would give it one.
	NoInterval bool
	// CurrentRuns is the number of current runs (per side when PerSide: an A/B gate
	// whose sides run together) that would decide every inconclusive comparison with
	// the baseline as it is; 0 when more current runs would not decide one of them.
	CurrentRuns int
	PerSide     bool
	// BaselineRuns is the number of runs in the baseline's one session that would
	// decide them (with the current runs as they are); 0 when not asked or none would.
	BaselineRuns int
	// BaselineSessions is the number of baseline sessions of RunsPerSession runs each
	// that would decide them (the baseline has HaveSessions); 0 when not asked or none
	// up to 200 would.
	BaselineSessions, RunsPerSession, HaveSessions int
	// SessionNoiseAssumed: a comparison assumed how far sessions wander (the sides have
	// fewer than MinSessions sessions and no session CV was stored or given), so no
	// number of runs decides it: a session CV, or a baseline of Plan's size that the
	// gate measures it from, would. PlanErr is set when no such baseline would.
	SessionNoiseAssumed bool
	Plan                Plan
	PlanErr             error
	// RunCV is the largest between-run CV of the inconclusive comparisons, and Margin
	// their margin δ (the largest): what `perfgate baseline plan --cv --margin` takes.
	RunCV, Margin float64
	// Both: neither more current runs nor more baseline runs alone would; a baseline and
	// a current side of Plan's size together would (PlanBaseline at the given session
	// CV, SessionCV).
	Both      bool
	SessionCV float64
	// Hopeless: no number of runs or baseline sessions would, because the current
	// session's own offset hides a δ change (a wider margin, or an A/B comparison within
	// one session, would).
	Hopeless bool
}

// Needed reports whether the advice asks for anything.
func (a Advice) Needed() bool { return len(a.Metrics) > 0 }

// DecideGate says what would decide the inconclusive comparisons among cs whose gating[i]
// is set (nil gating = the primary ones): the most current runs any of them needs when
// more current runs decide all of them, else what the baseline needs (more runs in its
// one session, more sessions, or a measured or given session noise, with the baseline
// [PlanBaseline] sizes for the largest run CV at the gate's margin), else a baseline and
// a current side both larger (PlanBaseline at the given session CV), else nothing would.
func DecideGate(cs []Comparison, gating []bool) Advice {
	var a Advice
	allCurrent := true
	for i, c := range cs {
		gates := c.Primary
		if gating != nil {
			gates = i < len(gating) && gating[i]
		}
		if !gates || c.Invalid != "" || c.Change != ChangeInconclusive {
			continue
		}
		a.Metrics = append(a.Metrics, c.Metric)
		a.Margin = math.Max(a.Margin, c.Gate.Margin)
		if math.IsNaN(c.SE) {
			a.NoInterval = true
			allCurrent = false
			continue
		}
		if !math.IsNaN(c.CV) {
			a.RunCV = math.Max(a.RunCV, c.CV)
		}
		a.PerSide = a.PerSide || c.SessionSource == sessionSame
		if c.CurrentRunsToDecide > 0 {
			a.CurrentRuns = max(a.CurrentRuns, c.CurrentRunsToDecide)
			continue
		}
		allCurrent = false
		switch {
		case c.BaselineRunsToDecide > 0:
			a.BaselineRuns = max(a.BaselineRuns, c.BaselineRunsToDecide)
		case c.SessionsToDecide > 0:
			a.BaselineSessions = max(a.BaselineSessions, c.SessionsToDecide)
			a.RunsPerSession = max(1, int(math.Round(float64(len(c.Baseline))/float64(max(1, c.BaselineSessions)))))
			a.HaveSessions = c.BaselineSessions
		case c.SessionSource == sessionAssumed:
			a.SessionNoiseAssumed = true
			a.HaveSessions = c.BaselineSessions
		default:
			a.Both = true
			if !math.IsNaN(c.SessionCV) {
				a.SessionCV = math.Max(a.SessionCV, c.SessionCV)
			}
		}
	}
	if !allCurrent {
		a.CurrentRuns = 0
	}
	switch {
	case a.RunCV == 0:
	case a.SessionNoiseAssumed:
		a.Plan, a.PlanErr = PlanBaseline(BaselinePlan{RunCV: math.Min(a.RunCV, 0.99), Margin: a.Margin, Measure: true})
	case a.Both:
		a.Plan, a.PlanErr = PlanBaseline(BaselinePlan{RunCV: math.Min(a.RunCV, 0.99), SessionCV: math.Min(a.SessionCV, 0.99), Margin: a.Margin})
		a.Hopeless = a.PlanErr != nil
	}
	return a
}

// MetricsText lists the inconclusive statistics: "TTFT p50 and ITL p50".
func (a Advice) MetricsText() string {
	switch len(a.Metrics) {
	case 0:
		return ""
	case 1:
		return a.Metrics[0]
	}
	return strings.Join(a.Metrics[:len(a.Metrics)-1], ", ") + " and " + a.Metrics[len(a.Metrics)-1]
}

// PctText prints a fraction as a percentage with three significant digits, as the
// verdicts do ("1.2%").
func PctText(x float64) string { return pct(x) }
