package check

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
)

// base are five runs' TTFT p50 with a between-run spread of about 1.6%; tight, of 0.16%.
var (
	base  = []float64{0.100, 0.102, 0.098, 0.101, 0.099}
	tight = []float64{0.1000, 0.1002, 0.0998, 0.1001, 0.0999}
)

// scaled returns xs times f, with each run's own wobble w[i%len(w)] (relative).
func scaled(xs []float64, f float64, w ...float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
		if len(w) > 0 {
			out[i] *= 1 + w[i%len(w)]
		}
	}
	return out
}

// same is the gate of runs measured in one session: no between-session term, as the
// rule's arithmetic is tested here (sessions_test.go tests the sessions).
var same = RunGate{SameSession: true}

func logsOf(xs []float64) []float64 {
	l, bad := logs(xs, "")
	if bad != "" {
		panic(bad)
	}
	return l
}

// TestCompareRunsInterval: the ratio is the ratio of geometric means and the interval is
// Welch's on the logs (distribution.Welch is checked against SciPy separately).
func TestCompareRunsInterval(t *testing.T) {
	cur := scaled(base, 1.04, 0.01, -0.02, 0.0)
	c := CompareRuns("TTFT p50", Seconds, base, cur, RunGate{SameSession: true})
	w, err := distribution.Welch(logsOf(base), logsOf(cur), 0.98) // 1-2·alpha: one-sided ends
	if err != nil {
		t.Fatal(err)
	}
	gm := func(xs []float64) float64 { m, _ := meanVar(logsOf(xs)); return math.Exp(m) }
	for _, x := range []struct {
		name      string
		got, want float64
	}{
		{"ratio", c.Ratio, gm(cur) / gm(base)},
		{"low", c.Low, math.Exp(w.Lo)},
		{"high", c.High, math.Exp(w.Hi)},
		{"p", c.PValue, w.PValue / 2}, // one-sided, toward worse (the ratio is above 1)
		{"df", c.DF, w.DF},
		{"alpha", c.Alpha, DefaultAlpha},
		{"mde", c.MDE, math.Expm1(distribution.DetectableEffect(w.SE, w.DF, 0.02, 0.8))},
	} {
		if math.Abs(x.got-x.want) > 1e-12*math.Abs(x.want) {
			t.Errorf("%s = %v, want %v", x.name, x.got, x.want)
		}
	}
	if c.Invalid != "" {
		t.Errorf("invalid %q; want none", c.Invalid)
	}
}

// TestCompareRunsChanges covers every answer, in both directions.
func TestCompareRunsChanges(t *testing.T) {
	tput := scaled(base, 10000) // 1000 tok/s-ish runs
	for _, tc := range []struct {
		name       string
		b, c       []float64
		g          RunGate
		want       Change
		pass       bool
		status     Status
		summary    string // a substring of the first line
		wantErr    error
		wantNoteIn string
	}{
		{"regressed by 12%", base, scaled(base, 1.12, 0.005, -0.005), RunGate{SameSession: true}, ChangeRegressed, false, Decided,
			"TTFT p50 regressed: +12", ErrBreached, ""},
		{"no regression", base, scaled(base, 1.0, 0.005, -0.005), RunGate{SameSession: true}, ChangeNoRegression, true, Decided,
			"TTFT p50: no regression: ", nil, ""},
		{"significant but small is no regression", tight, scaled(tight, 1.02, 0.001, -0.001), RunGate{SameSession: true}, ChangeNoRegression, true, Decided,
			"no regression: +2", nil, ""},
		{"inconclusive: interval straddles δ", base, scaled(base, 1.04, 0.02, -0.02, 0.01), RunGate{SameSession: true}, ChangeInconclusive, true, Inconclusive,
			"TTFT p50: inconclusive: +", nil, ""},
		{"inconclusive fails when asked", base, scaled(base, 1.04, 0.02, -0.02, 0.01), RunGate{SameSession: true, FailInconclusive: true}, ChangeInconclusive, false, Inconclusive,
			"inconclusive", ErrInconclusive, ""},
		{"improved", base, scaled(base, 0.85, 0.005, -0.005), RunGate{SameSession: true}, ChangeImproved, true, Decided,
			"TTFT p50 improved: -14.9% vs baseline (98% interval -17.1% to -12.7%, 5 vs 5 runs)", nil, ""},
		{"throughput drop regresses", tput, scaled(tput, 0.88, 0.005, -0.005), RunGate{SameSession: true, HigherIsBetter: true}, ChangeRegressed, false, Decided,
			"regressed: -11.9% vs baseline (98% interval -14.2% to -9.6%, 5 vs 5 runs), want above -5%", ErrBreached, ""},
		{"throughput rise improves", tput, scaled(tput, 1.12, 0.005, -0.005), RunGate{SameSession: true, HigherIsBetter: true}, ChangeImproved, true, Decided,
			"improved: +12", nil, ""},
		{"a latency drop of 12% with a 15% margin is no regression", base, scaled(base, 0.88, 0.005, -0.005), RunGate{SameSession: true, Margin: 0.15}, ChangeNoRegression, true, Decided,
			"no regression", nil, ""},
		{"one run per side, no prior", base[:1], base[1:2], RunGate{SameSession: true}, ChangeInconclusive, true, Inconclusive,
			"no interval, 1 vs 1 run", nil, "one run per side and no stored CV"},
		{"one run per side, prior CV 1%", base[:1], scaled(base[:1], 1.2), RunGate{SameSession: true, PriorCV: 0.01}, ChangeRegressed, false, Decided,
			"regressed: +20", ErrBreached, "assumed the stored between-run CV 1%"},
		{"one current run, the baseline's spread", base, scaled(base[:1], 1.25), RunGate{SameSession: true}, ChangeRegressed, false, Decided,
			"1 run)", ErrBreached, "assumed it varies as the 5 baseline runs do"},
		{"one baseline run, prior", base[:1], scaled(base, 1.0), RunGate{SameSession: true, PriorCV: 0.02}, ChangeInconclusive, true, Inconclusive,
			"inconclusive", nil, "between-run noise of the baseline not measured"},
		{"δ below the MDE warns", base, scaled(base, 1.0, 0.05, -0.05, 0.03), RunGate{SameSession: true, Margin: 0.02}, ChangeInconclusive, true, Inconclusive,
			"inconclusive", nil, "margin 2% is below the minimum detectable effect"},
		{"δ below the MDE fails with StrictMDE", base, scaled(base, 1.0, 0.005, -0.005), RunGate{SameSession: true, Margin: 0.01, StrictMDE: true}, ChangeInconclusive, false, Decided,
			"the gate cannot detect a 1% regression with 5 vs 5 runs: minimum detectable effect", ErrBreached, "margin 1% is below"},
		{"a regression still says regressed under StrictMDE", base, scaled(base, 1.3, 0.05, -0.05), RunGate{SameSession: true, Margin: 0.01, StrictMDE: true}, ChangeRegressed, false, Decided,
			"regressed: +31.1%", ErrBreached, "margin 1% is below"},
		{"constant runs, no change", []float64{1, 1, 1}, []float64{1, 1, 1}, RunGate{SameSession: true}, ChangeNoRegression, true, Decided,
			"no regression: +0%", nil, ""},
		{"constant runs, 10% slower", []float64{1, 1, 1}, []float64{1.1, 1.1, 1.1}, RunGate{SameSession: true}, ChangeRegressed, false, Decided,
			"regressed: +10", ErrBreached, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CompareRuns("TTFT p50", Seconds, tc.b, tc.c, tc.g)
			if c.Change != tc.want {
				t.Fatalf("change = %v, want %v\n%s", c.Change, tc.want, c.Verdict())
			}
			v := c.Verdict()
			if v.Pass != tc.pass || v.Status != tc.status || v.Check != "regression" {
				t.Errorf("pass %v status %v check %q, want %v %v regression\n%s", v.Pass, v.Status, v.Check, tc.pass, tc.status, v)
			}
			if !strings.Contains(v.Summary, tc.summary) {
				t.Errorf("summary %q does not contain %q", v.Summary, tc.summary)
			}
			if err := v.Err(); !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantNoteIn != "" && !strings.Contains(strings.Join(c.Notes, "\n"), tc.wantNoteIn) {
				t.Errorf("notes %q lack %q", c.Notes, tc.wantNoteIn)
			}
			if strings.Contains(v.Summary, "\n") {
				t.Errorf("summary spans lines: %q", v.Summary)
			}
		})
	}
}

// TestCompareRunsRuleBoundary pins the rule on one interval: the same ratio regresses or
// not depending on δ, and the worse end decides between "no regression" and inconclusive.
func TestCompareRunsRuleBoundary(t *testing.T) {
	cur := scaled(base, 1.06, 0.004, -0.004)
	c := CompareRuns("m", Seconds, base, cur, RunGate{SameSession: true})
	if c.Change != ChangeRegressed || !(c.Low > 1) || !(c.Ratio-1 >= 0.05) {
		t.Fatalf("δ 5%%: %v, ratio %v [%v, %v]; want regressed", c.Change, c.Ratio, c.Low, c.High)
	}
	// δ just above the ratio: no longer regressed; the worse end is above δ: inconclusive.
	c2 := CompareRuns("m", Seconds, base, cur, RunGate{SameSession: true, Margin: c.Ratio - 1 + 1e-9})
	if c2.Change != ChangeInconclusive {
		t.Errorf("δ above the ratio: %v, want inconclusive", c2.Change)
	}
	// δ just above the worse end: no regression.
	c3 := CompareRuns("m", Seconds, base, cur, RunGate{SameSession: true, Margin: c.High - 1 + 1e-9})
	if c3.Change != ChangeNoRegression {
		t.Errorf("δ above the worse end %v: %v, want no regression", c3.High, c3.Change)
	}
}

func TestCompareRunsInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		b, c []float64
		g    RunGate
		want string
	}{
		{"empty baseline", nil, base, RunGate{SameSession: true}, "a side has no runs (baseline 0, current 5)"},
		{"zero throughput", base, []float64{0.1, 0, 0.1}, RunGate{SameSession: true}, "current run 2 of 3 has statistic 0, want a positive finite number"},
		{"NaN", []float64{math.NaN()}, base, RunGate{SameSession: true}, "baseline run 1 of 1 has statistic NaN"},
		{"margin", base, base, RunGate{SameSession: true, Margin: 1.5}, "margin 1.5 is outside (0, 1)"},
		{"alpha", base, base, RunGate{SameSession: true, Alpha: 0.5}, "alpha 0.5 is outside (0, 0.5)"},
		{"power", base, base, RunGate{SameSession: true, Power: 2}, "power 2 is outside (0, 1)"},
		{"prior", base, base, RunGate{SameSession: true, PriorCV: -0.1}, "prior CV -0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CompareRuns("TTFT p50", Seconds, tc.b, tc.c, tc.g)
			v := c.Verdict()
			if c.Invalid == "" || v.Pass || !strings.Contains(v.Summary, tc.want) || !strings.HasPrefix(v.Summary, "cannot check TTFT p50 regression: ") {
				t.Errorf("invalid %q, verdict pass=%v %q; want a failing verdict saying %q", c.Invalid, v.Pass, v.Summary, tc.want)
			}
			if !errors.Is(v.Err(), ErrBreached) {
				t.Errorf("err %v does not wrap ErrBreached", v.Err())
			}
		})
	}
}

// TestCompareRunsInputsKept: the comparison keeps copies of the run statistics in run order.
func TestCompareRunsInputsKept(t *testing.T) {
	b := []float64{3, 1, 2}
	c := CompareRuns("m", None, b, []float64{2, 2, 2}, RunGate{SameSession: true})
	b[0] = 99
	if c.Baseline[0] != 3 || c.Baseline[1] != 1 || len(c.Current) != 3 {
		t.Errorf("baseline %v, current %v; want copies in run order", c.Baseline, c.Current)
	}
}

func TestChangeString(t *testing.T) {
	for c, want := range map[Change]string{ChangeNoRegression: "no regression", ChangeRegressed: "regressed", ChangeInconclusive: "inconclusive", ChangeImproved: "improved", Change(9): "Change(9)"} {
		if got := c.String(); got != want {
			t.Errorf("%d: %q, want %q", int(c), got, want)
		}
	}
}

// TestCompareRunsMDE: the runs that would decide shrink the MDE below the margin.
func TestCompareRunsMDE(t *testing.T) {
	g := RunGate{SameSession: true, Margin: 0.02}
	c := CompareRuns("m", Seconds, base, base, g)
	if !c.MDEBelowMargin() || c.CurrentRunsToDecide <= len(base) {
		t.Fatalf("MDE %v, runs to decide 2%% %d: want MDE above 2%% and more than 5 runs", c.MDE, c.CurrentRunsToDecide)
	}
	n := c.CurrentRunsToDecide
	more := func(k int) []float64 {
		out := make([]float64, k)
		for i := range out {
			out[i] = base[i%len(base)]
		}
		return out
	}
	// With n runs per side of the same spread the MDE is at (or just around) the margin;
	// with 2n it is clearly below.
	c2 := CompareRuns("m", Seconds, more(2*n), more(2*n), g)
	if c2.MDEBelowMargin() {
		t.Errorf("with %d runs per side MDE %v is still above 2%%", 2*n, c2.MDE)
	}
	// The reported MDE in the worse direction: for a throughput it is 1-e^-d.
	ct := CompareRuns("m", TokPerSec, base, base, RunGate{SameSession: true, HigherIsBetter: true})
	cl := CompareRuns("m", Seconds, base, base, same)
	d := math.Log1p(cl.MDE)
	if math.Abs(ct.MDE-(-math.Expm1(-d))) > 1e-12 {
		t.Errorf("throughput MDE %v, want %v", ct.MDE, -math.Expm1(-d))
	}
}

// TestCompareFamilyHolm: primary metrics are compared at alpha/(m-i) in p-value order,
// the procedure stops at the first non-significant one, and other metrics keep their alpha.
func TestCompareFamilyHolm(t *testing.T) {
	b := []float64{1.00, 1.02, 0.98, 1.01, 0.99, 1.00}
	series := []Series{
		{Metric: "a (weak)", Unit: None, Baseline: b, Current: scaled(b, 1.025, 0.02, -0.02), Primary: true, Gate: same},
		{Metric: "b (strong)", Unit: None, Baseline: b, Current: scaled(b, 1.20), Primary: true, Gate: same},
		{Metric: "c (none)", Unit: None, Baseline: b, Current: scaled(b, 1.0, 0.001), Primary: true, Gate: same},
		{Metric: "d (reported)", Unit: None, Baseline: b, Current: scaled(b, 1.20), Gate: same},
		{Metric: "e (medium)", Unit: None, Baseline: b, Current: scaled(b, 1.08, 0.01, -0.01), Primary: true, Gate: same},
	}
	cs := CompareFamily(0.01, series)
	var ps []float64
	for _, i := range []int{0, 1, 2, 4} {
		ps = append(ps, CompareRuns("", None, series[i].Baseline, series[i].Current, RunGate{SameSession: true}).PValue)
	}
	// The ranks, by construction: b < e < a < c.
	if !(ps[1] < ps[3] && ps[3] < ps[0] && ps[0] < ps[2]) {
		t.Fatalf("constructed p-values out of the intended order: %v", ps)
	}
	want := map[string]float64{"b (strong)": 0.01 / 4, "e (medium)": 0.01 / 3}
	if ps[0] < 0.01/2 {
		t.Fatalf("a's p %v should not be significant at 0.005", ps[0])
	}
	// a is the first not rejected (p >= 0.01/2): a and everything after keep 0.01/2.
	want["a (weak)"], want["c (none)"] = 0.01/2, 0.01/2
	want["d (reported)"] = 0.01
	for _, c := range cs {
		if math.Abs(c.Alpha-want[c.Metric]) > 1e-15 {
			t.Errorf("%s alpha = %v, want %v", c.Metric, c.Alpha, want[c.Metric])
		}
		if c.Primary != (c.Metric != "d (reported)") {
			t.Errorf("%s primary = %v", c.Metric, c.Primary)
		}
	}
	if cs[1].Change != ChangeRegressed || cs[3].Change != ChangeRegressed || !strings.Contains(strings.Join(cs[1].Notes, ""), "Holm: p-value rank 1 of 4 primary metrics, compared at alpha 0.0025") {
		t.Errorf("b: %v %q; d: %v", cs[1].Change, cs[1].Notes, cs[3].Change)
	}
	if len(cs[3].Notes) != 0 {
		t.Errorf("a reported metric has Holm notes: %q", cs[3].Notes)
	}
	// The interval of each primary metric is at its Holm level.
	// (Its worse end, the test of "no regression", is at the family's 0.01.)
	if !strings.Contains(cs[4].Verdict().Summary, "(99.7%/99% bounds)") {
		t.Errorf("e's summary %q: want its better end at 1-0.01/3, its worse end at 0.99", cs[4].Verdict().Summary)
	}
}

// TestCompareFamilyHolmAgreesWithAdjustedP: a primary metric's interval excludes 1 exactly
// when its Holm-adjusted p-value is below the family alpha.
func TestCompareFamilyHolmAgreesWithAdjustedP(t *testing.T) {
	b := []float64{1.00, 1.03, 0.97, 1.01, 0.99}
	var series []Series
	var ps []float64
	for i, f := range []float64{1.00, 1.02, 1.04, 1.05, 1.06, 1.08, 1.10} {
		cur := scaled(b, f, 0.01*float64(i%3-1), -0.01)
		series = append(series, Series{Metric: "m", Unit: None, Baseline: b, Current: cur, Primary: true, Gate: same})
		ps = append(ps, CompareRuns("", None, b, cur, RunGate{SameSession: true}).PValue)
	}
	adj := distribution.Holm(ps)
	for i, c := range CompareFamily(0.01, series) {
		excludes := c.Low > 1 || c.High < 1
		if excludes != (adj[i] < 0.01) {
			t.Errorf("series %d: interval [%v, %v] excludes 1 = %v, Holm-adjusted p %v", i, c.Low, c.High, excludes, adj[i])
		}
	}
}

func TestCompareFamilyDefaultsAndNoInterval(t *testing.T) {
	cs := CompareFamily(0, []Series{
		{Metric: "one run", Baseline: []float64{1}, Current: []float64{2}, Primary: true, Gate: same},
		{Metric: "x", Baseline: base, Current: scaled(base, 1.2), Primary: true, Gate: same},
	})
	if cs[0].Alpha != 0.01 || cs[1].Alpha != 0.005 {
		t.Errorf("alphas %v, %v; want 0.01 (no interval counts as p=1, ranked last) and 0.005", cs[0].Alpha, cs[1].Alpha)
	}
	if Settled(cs[:1]) {
		t.Errorf("settled with an inconclusive primary metric")
	}
	if !Settled(cs[1:]) {
		t.Errorf("not settled with only a regressed metric")
	}
	cs[1].Change = ChangeNoRegression
	if Settled(cs) {
		t.Errorf("settled with an inconclusive primary metric and no regression")
	}
	cs[1].Change = ChangeRegressed
	if !Settled(cs) {
		t.Errorf("a regressed primary metric does not settle the gate while another is inconclusive")
	}
	if !Settled([]Comparison{{Change: ChangeInconclusive}}) {
		t.Errorf("a non-primary inconclusive metric keeps the gate running")
	}
}

func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		s     Schedule
		looks []int
	}{
		{Schedule{}, []int{5, 10, 20}},
		{Schedule{Start: 3}, []int{3, 6, 12, 20}},
		{Schedule{Start: 5, Cap: 10}, []int{5, 10}},
		{Schedule{Start: 5, Cap: 12}, []int{5, 10, 12}},
		{Schedule{Start: 5, Cap: 5}, []int{5}},
		{Schedule{Start: 30}, []int{30}},
		{Schedule{Start: 8, Cap: 2}, []int{8}},
	} {
		got := tc.s.Looks()
		if len(got) != len(tc.looks) {
			t.Errorf("%+v looks %v, want %v", tc.s, got, tc.looks)
			continue
		}
		for i := range got {
			if got[i] != tc.looks[i] {
				t.Errorf("%+v looks %v, want %v", tc.s, got, tc.looks)
				break
			}
		}
		sum := 0.0
		for i := range got {
			sum += tc.s.Alpha(0.01, i)
		}
		if math.Abs(sum-0.01) > 1e-15 {
			t.Errorf("%+v spends %v over its looks, want 0.01", tc.s, sum)
		}
		if a := tc.s.Alpha(0.01, len(got)); a != 0 {
			t.Errorf("%+v alpha past the last look = %v, want 0", tc.s, a)
		}
	}
	if a := (Schedule{}).Alpha(0, 0); math.Abs(a-DefaultAlpha/3) > 1e-18 {
		t.Errorf("default alpha at look 0 = %v, want %v", a, DefaultAlpha/3)
	}
}

// TestScheduleSequential walks a sequential gate over constructed runs: an 8% slowdown with
// 4-5% run-to-run noise is inconclusive at 5 runs, and decided later at the spent alpha.
func TestScheduleSequential(t *testing.T) {
	wob := []float64{0.06, -0.05, 0.01, -0.06, 0.03, 0.0, -0.02, 0.05}
	b := scaled(make20(), 1, wob...)
	c := scaled(make20(), 1.08, wob[3:]...)
	s := Schedule{}
	var trail []Change
	for i, k := range s.Looks() {
		cs := CompareFamily(s.Alpha(0.01, i), []Series{{Metric: "ttft", Unit: Seconds, Baseline: b[:k], Current: c[:k], Primary: true, Gate: same}})
		trail = append(trail, cs[0].Change)
		if math.Abs(cs[0].Alpha-0.01/3) > 1e-15 {
			t.Errorf("look %d alpha %v, want 0.01/3", i, cs[0].Alpha)
		}
		if Settled(cs) {
			break
		}
	}
	if len(trail) < 2 || trail[0] != ChangeInconclusive || trail[len(trail)-1] != ChangeRegressed {
		t.Errorf("changes over the looks %v: want inconclusive first and regressed at the end", trail)
	}
}

func make20() []float64 {
	out := make([]float64, 20)
	for i := range out {
		out[i] = 0.1
	}
	return out
}
