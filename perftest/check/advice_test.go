package check

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// primary compares b and c as a primary statistic of a gate (the default alpha 0.01).
func primary(b, c Side, g RunGate) Comparison {
	cmp := CompareSides("TTFT p50", Seconds, b, c, g)
	cmp.Primary = true
	return cmp
}

// TestDecideGate: on constructed series (fixed seeds), what would decide an
// inconclusive gate is the action that does, and nothing is asked of a decided one.
// Each case has its failure path: the same runs with what the advice asks for are
// decided.
func TestDecideGate(t *testing.T) {
	one := Side{Values: []float64{0.100, 0.103, 0.097, 0.101, 0.099}}
	near := Side{Values: []float64{0.1004, 0.1016, 0.0982, 0.1002, 0.0996}}

	// A one-session baseline with no session CV: no number of runs decides it; a session
	// CV or a baseline of MinSessions sessions (PlanBaseline's size) would.
	c := primary(one, near, RunGate{})
	a := DecideGate([]Comparison{c}, nil)
	if c.Change != ChangeInconclusive || !a.Needed() || !a.SessionNoiseAssumed || a.CurrentRuns != 0 || a.PlanErr != nil || a.Plan.Sessions != MinSessions || a.Plan.Runs < 2 {
		t.Errorf("one session, no session CV: %v, advice %+v; want the session noise named and a plan of %d sessions", c.Change, a, MinSessions)
	}
	if a.MetricsText() != "TTFT p50" || !(a.RunCV > 0.01 && a.RunCV < 0.03) || a.Margin != DefaultMargin {
		t.Errorf("advice names %q, run CV %v, margin %v; want TTFT p50, the runs' CV (about 2%%), 5%%", a.MetricsText(), a.RunCV, a.Margin)
	}
	if d := DecideGate([]Comparison{primary(one, near, RunGate{SessionCV: 0.002})}, nil); d.Needed() {
		t.Errorf("the same runs with a session CV of 0.2%%: advice %+v, want none (decided)", d)
	}
	// A statistic that does not gate asks nothing, inconclusive or not.
	if d := DecideGate([]Comparison{c}, []bool{false}); d.Needed() {
		t.Errorf("a reported-only inconclusive statistic: advice %+v, want none", d)
	}

	// Noisy runs, a session CV given, a one-session baseline of 3 runs: its own runs
	// limit the interval, so more current runs would not decide; more baseline runs in
	// its session would.
	b3 := Side{Values: []float64{0.100, 0.094, 0.106}}
	c20 := draws(rand.New(rand.NewPCG(3, 5)), 1, 20, 0.05, 0, 0)
	g := RunGate{SessionCV: 0.002}
	c = primary(b3, c20, g)
	a = DecideGate([]Comparison{c}, nil)
	if c.Change != ChangeInconclusive || a.CurrentRuns != 0 || a.BaselineRuns <= 3 || a.Both {
		t.Fatalf("3 noisy baseline runs, 20 current, session CV given: %v, advice %+v; want inconclusive, more baseline runs\n%s", c.Change, a, c.Verdict())
	}
	bigB := draws(rand.New(rand.NewPCG(3, 6)), 1, a.BaselineRuns+10, 0.05, 0, 0)
	if d := DecideGate([]Comparison{primary(bigB, c20, g)}, nil); d.BaselineRuns != 0 {
		t.Errorf("with the baseline runs it asked for (%d): advice %+v, want no more baseline runs", a.BaselineRuns, d)
	}
	// 3 baseline and 5 current runs: neither side alone would; both, at PlanBaseline's
	// size, would.
	c5 := Side{Values: []float64{0.097, 0.106, 0.094, 0.103, 0.100}}
	c = primary(b3, c5, g)
	a = DecideGate([]Comparison{c}, nil)
	if c.Change != ChangeInconclusive || !a.Both || a.Hopeless || a.PlanErr != nil || a.Plan.Runs <= 5 || a.Plan.Sessions != 1 {
		t.Errorf("3 vs 5 noisy runs: %v, advice %+v; want both sides larger, one session of the plan's runs", c.Change, a)
	}
	// Sessions as noisy as the margin: nothing would.
	c = primary(b3, c5, RunGate{SessionCV: 0.05})
	if a := DecideGate([]Comparison{c}, nil); c.Change != ChangeInconclusive || !a.Hopeless {
		t.Errorf("session CV 5%%: advice %+v, want hopeless", a)
	}

	// A large baseline and a few current runs: more current runs decide it.
	bigB = draws(rand.New(rand.NewPCG(7, 7)), 1, 60, 0.04, 0, 0)
	c3 := draws(rand.New(rand.NewPCG(7, 8)), 1, 3, 0.04, 0, 0)
	c = primary(bigB, c3, g)
	a = DecideGate([]Comparison{c}, nil)
	if c.Change != ChangeInconclusive || a.CurrentRuns <= 3 || a.PerSide || a.BaselineRuns != 0 {
		t.Fatalf("60 baseline runs, 3 current: %v, advice %+v; want more current runs\n%s", c.Change, a, c.Verdict())
	}
	more := draws(rand.New(rand.NewPCG(7, 9)), 1, a.CurrentRuns+10, 0.04, 0, 0)
	if c := primary(bigB, more, g); c.Change == ChangeInconclusive {
		t.Errorf("with the current runs it asked for (%d+10): still inconclusive\n%s", a.CurrentRuns, c.Verdict())
	}

	// A/B in one session: runs per side.
	ab := RunGate{SameSession: true}
	c = primary(Side{Values: []float64{0.100, 0.094, 0.106, 0.097, 0.103}}, Side{Values: []float64{0.103, 0.097, 0.100, 0.106, 0.094}}, ab)
	a = DecideGate([]Comparison{c}, nil)
	if c.Change != ChangeInconclusive || !a.PerSide || a.CurrentRuns <= 5 {
		t.Errorf("A/B, 5 noisy runs a side: %v, advice %+v; want runs per side", c.Change, a)
	}

	// One run per side and no CV: no interval; a prior CV gives one.
	c = primary(Side{Values: []float64{0.1}}, Side{Values: []float64{0.1}}, RunGate{})
	if a := DecideGate([]Comparison{c}, nil); !a.NoInterval || a.CurrentRuns != 0 {
		t.Errorf("one run per side: advice %+v, want no interval", a)
	}
	if !math.IsNaN(c.SE) {
		t.Errorf("one run per side has an SE %v", c.SE)
	}
}

// TestReportedVerdict: a reported-only statistic's verdict passes, states the change and
// its interval, and has no threshold ("want …") and no rule, whatever the change.
func TestReportedVerdict(t *testing.T) {
	b := []float64{0.100, 0.101, 0.099, 0.1005, 0.0995}
	c := []float64{0.300, 0.303, 0.297, 0.3015, 0.2985}
	cmp := CompareRuns("TTFT p99", Seconds, b, c, RunGate{})
	if cmp.Change != ChangeRegressed || cmp.Verdict().Pass {
		t.Fatalf("TTFT p99 ×3 as a gate: %v; want regressed (the failure path of the reported form)", cmp.Change)
	}
	v := cmp.Reported()
	s := v.String()
	if !v.Pass || v.Status != Decided || !strings.HasPrefix(v.Summary, "TTFT p99 +200% vs baseline (") || strings.Contains(s, "want") || strings.Contains(s, "regressed") || strings.Contains(s, "rule:") {
		t.Errorf("reported verdict:\n%s\nwant a passing 'TTFT p99 +200%% vs baseline (…)' with no threshold or rule", s)
	}
	bad := CompareRuns("TTFT p99", Seconds, b, []float64{0.1, -1}, RunGate{}).Reported()
	if !bad.Pass || !strings.Contains(bad.Summary, "not compared") {
		t.Errorf("reported verdict of an invalid comparison: %q pass %v; want a passing 'not compared'", bad.Summary, bad.Pass)
	}
}
