package check

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// draws returns n log-normal run statistics around 0.1 with run CV cv, each session of
// per runs offset by its own draw at session CV scv (0 = none), and the session labels.
func draws(r *rand.Rand, sessions, per int, cv, scv, shift float64) Side {
	var s Side
	for k := range sessions {
		off := scv * r.NormFloat64()
		for range per {
			s.Values = append(s.Values, 0.1*math.Exp(shift+off+cv*r.NormFloat64()))
			s.Sessions = append(s.Sessions, k)
		}
	}
	return s
}

// A one-session baseline with no session CV cannot tell a change from session noise: the
// answer is inconclusive, says so, and names what would tell; the same runs in one shared
// session, or with a session CV given, are decided.
func TestOneSessionBaselineWithoutSessionCV(t *testing.T) {
	b := []float64{0.100, 0.103, 0.097, 0.101, 0.099}
	c := []float64{0.1004, 0.1016, 0.0982, 0.1002, 0.0996}
	got := CompareRuns("TTFT p50", Seconds, b, c, RunGate{})
	v := got.Verdict()
	if got.Change != ChangeInconclusive || got.SessionSource != "assumed" || !v.Pass {
		t.Fatalf("one session each, no session CV: %v (%s), want inconclusive (assumed)\n%s", got.Change, got.SessionSource, v)
	}
	for _, want := range []string{"(more runs would not: between-session noise is not measured; 10 baseline sessions, or a session CV, would decide it)"} {
		if !strings.Contains(v.Summary, want) {
			t.Errorf("summary %q lacks %q", v.Summary, want)
		}
	}
	if !strings.Contains(strings.Join(got.Notes, "\n"), "between-session noise not measured (baseline one session, current one session; no between-session CV stored or configured)") {
		t.Errorf("notes %q do not say the session noise was assumed", got.Notes)
	}
	// The failure path of the rule: the same runs are decided when the sessions are one,
	// or when a session CV is given (and the note then names it).
	if c := CompareRuns("TTFT p50", Seconds, b, c, RunGate{SameSession: true}); c.Change != ChangeNoRegression {
		t.Errorf("same session: %v, want no regression\n%s", c.Change, c.Verdict())
	}
	given := CompareRuns("TTFT p50", Seconds, b, c, RunGate{SessionCV: 0.002, SessionCVFrom: "the baseline's stored"})
	if given.Change != ChangeNoRegression || !strings.Contains(strings.Join(given.Notes, ""), "assumed the baseline's stored between-session CV 0.2%") {
		t.Errorf("session CV 0.2%% given: %v, notes %q; want no regression and the CV named\n%s", given.Change, given.Notes, given.Verdict())
	}
	if !(given.SE < got.SE) {
		t.Errorf("SE with a 0.2%% session CV %v, want below the assumed one's %v", given.SE, got.SE)
	}
}

// Sessions that wander widen the interval: the same runs compared as ten baseline
// sessions with offsets have a wider interval than pooled into one shared session, and
// the gate measured the between-session CV (near the one drawn).
func TestSessionOffsetsWiden(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	b := draws(r, 10, 5, 0.02, 0.03, 0)
	c := draws(r, 1, 10, 0.02, 0.03, 0)
	c.Sessions = nil
	withSessions := CompareSides("m", Seconds, b, c, RunGate{})
	pooled := CompareSides("m", Seconds, Side{Values: b.Values}, c, RunGate{SameSession: true})
	if withSessions.SessionSource != "measured" || withSessions.BaselineSessions != 10 || withSessions.CurrentSessions != 1 {
		t.Fatalf("source %q, sessions %d+%d; want measured from 10+1", withSessions.SessionSource, withSessions.BaselineSessions, withSessions.CurrentSessions)
	}
	if !(withSessions.SE > 1.5*pooled.SE) || !(withSessions.High-withSessions.Low > pooled.High-pooled.Low) {
		t.Errorf("SE with sessions %v, pooled %v: want the sessions' clearly wider", withSessions.SE, pooled.SE)
	}
	if cv := withSessions.SessionCV; !(cv > 0.015 && cv < 0.06) {
		t.Errorf("measured session CV %v, want near the 3%% drawn", cv)
	}
	// The measured CV is the one-way ANOVA estimate BetweenSessionCV gives.
	if cv, df := BetweenSessionCV(b); math.Abs(cv-withSessions.SessionCV) > 1e-12 || df != 9 {
		t.Errorf("BetweenSessionCV = %v (df %v), the comparison used %v; want equal, df 9", cv, df, withSessions.SessionCV)
	}
	// Its df is the baseline's sessions less one at most (Satterthwaite over that and the
	// current runs' 9).
	if !(withSessions.DF > 0 && withSessions.DF <= 9+9) {
		t.Errorf("df %v, want in (0, 18]", withSessions.DF)
	}
}

// BetweenSessionCV by hand: two sessions of two runs, logs ±0.01 around session means
// apart by 0.1: the variance of session means 0.005, within 0.0002 per run (h = 1/2).
func TestBetweenSessionCV(t *testing.T) {
	e := math.Exp
	s := Side{Values: []float64{e(-0.01), e(0.01), e(0.09), e(0.11)}, Sessions: []int{3, 3, 8, 8}}
	cv, df := BetweenSessionCV(s)
	want := math.Sqrt(math.Expm1(0.005 - 0.0002/2))
	if math.Abs(cv-want) > 1e-12 || df != 1 {
		t.Errorf("BetweenSessionCV = %v, %v; want %v, 1", cv, df, want)
	}
	for _, bad := range []Side{{Values: s.Values}, {Values: s.Values[:2], Sessions: []int{1, 1}}, {Values: []float64{1, -1}, Sessions: []int{1, 2}}} {
		if cv, _ := BetweenSessionCV(bad); !math.IsNaN(cv) {
			t.Errorf("BetweenSessionCV(%v) = %v, want NaN", bad, cv)
		}
	}
}

// ar draws n runs whose logs are AR(1)-correlated at rho with marginal sd cv.
func ar(r *rand.Rand, n int, cv, rho, shift float64) []float64 {
	out := make([]float64, n)
	x := cv * r.NormFloat64()
	for i := range out {
		out[i] = 0.1 * math.Exp(shift+x)
		x = rho*x + math.Sqrt(1-rho*rho)*cv*r.NormFloat64()
	}
	return out
}

// Runs correlated in run order are found (lag-1 autocorrelation) and counted as fewer
// effective runs: the note says so and the interval is wider than for the same values in
// an order that shows no dependence.
func TestDependenceWidens(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	b := ar(r, 30, 0.03, 0.8, 0)
	c := ar(r, 30, 0.03, 0.8, 0)
	g := RunGate{SameSession: true}
	got := CompareRuns("m", Seconds, b, c, g)
	if !got.Dependence[0].Widened && !got.Dependence[1].Widened {
		t.Fatalf("AR(0.8) runs: no dependence found: %+v", got.Dependence)
	}
	if !strings.Contains(strings.Join(got.Notes, "\n"), "dependence: ") || !strings.Contains(strings.Join(got.Notes, "\n"), "effective runs of 30") {
		t.Errorf("notes %q lack the dependence note", got.Notes)
	}
	// The same values interleaved high-low: no dependence, a narrower interval.
	flat := func(xs []float64) []float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		out := make([]float64, 0, len(s))
		for i, j := 0, len(s)-1; i <= j; i, j = i+1, j-1 {
			out = append(out, s[i])
			if i != j {
				out = append(out, s[j])
			}
		}
		return out
	}
	indep := CompareRuns("m", Seconds, flat(b), flat(c), g)
	if indep.Dependence[0].Widened || indep.Dependence[1].Widened || strings.Contains(strings.Join(indep.Notes, ""), "dependence") {
		t.Errorf("alternating order: dependence found %+v, notes %q", indep.Dependence, indep.Notes)
	}
	if !(got.SE > 1.3*indep.SE) {
		t.Errorf("SE with dependence %v, without %v: want clearly wider", got.SE, indep.SE)
	}
	// Correlated runs also know their variance less well: fewer degrees of freedom.
	if !(got.DF < 0.5*indep.DF) {
		t.Errorf("df with dependence %v, without %v: want far fewer (arDF)", got.DF, indep.DF)
	}
	// A trend within a session counts too.
	trend := make([]float64, 12)
	for i := range trend {
		trend[i] = 0.1 * (1 + 0.01*float64(i)) * (1 + 0.001*float64(i%2))
	}
	tr := CompareRuns("m", Seconds, flat(b)[:12], trend, g)
	if !tr.Dependence[1].Widened || !(tr.Dependence[1].TrendP < DependenceAlpha) || !strings.Contains(strings.Join(tr.Notes, ""), "the current runs show lag-1 autocorrelation 0.90 (p=0.00204) and a trend of +0.955% per run") {
		t.Errorf("a 1%%-per-run trend: %+v, notes %q; want a trend found", tr.Dependence[1], tr.Notes)
	}
}

// arFactor: 1 without correlation, the exact finite-n variance ratio with it, and
// (1+ρ)/(1-ρ) in the limit.
func TestARFactor(t *testing.T) {
	if f := arFactor(10, 0); f != 1 {
		t.Errorf("arFactor(10, 0) = %v", f)
	}
	// n = 2: Var(mean) = σ²(1+ρ)/2, E[s²] = σ²(1-ρ): factor (1+ρ)/(1-ρ).
	if f := arFactor(2, 0.5); math.Abs(f-3) > 1e-12 {
		t.Errorf("arFactor(2, 0.5) = %v, want 3", f)
	}
	if f := arFactor(5000, 0.6); math.Abs(f-4) > 0.01 {
		t.Errorf("arFactor(5000, 0.6) = %v, want about 4", f)
	}
}

// arDF: Σ(n_j-1) without correlation; with it, the moment-matched degrees of freedom of
// the pooled sample variance of AR(1) runs, checked against the trace formula computed by
// matrix products, exactly 1 for two runs (s² = (x₁-x₂)²/2 is (1-ρ)σ²·χ²₁), and about
// n(1-ρ²)/(1+ρ²) for a long session.
func TestARDF(t *testing.T) {
	if d := arDF([]int{5, 10, 1}, 0); d != 13 {
		t.Errorf("arDF(5, 10, 1; ρ=0) = %v, want 13", d)
	}
	if d := arDF([]int{2}, 0.5); math.Abs(d-1) > 1e-12 {
		t.Errorf("arDF(2; ρ=0.5) = %v, want 1", d)
	}
	for _, c := range []struct {
		ns  []int
		rho float64
	}{{[]int{5}, 0.7}, {[]int{10}, 0.3}, {[]int{20}, 0.9}, {[]int{5, 10}, 0.7}, {[]int{3, 3, 3}, 0.5}} {
		var tr, tr2 float64
		for _, n := range c.ns {
			a, b := traceByMatrix(n, c.rho)
			tr += a
			tr2 += b
		}
		want := tr * tr / tr2
		if got := arDF(c.ns, c.rho); math.Abs(got-want) > 1e-9*want {
			t.Errorf("arDF(%v; ρ=%v) = %v, want %v", c.ns, c.rho, got, want)
		}
	}
	if d := arDF([]int{4000}, 0.6); math.Abs(d/4000-(1-0.36)/(1+0.36)) > 0.01 {
		t.Errorf("arDF(4000; ρ=0.6) = %v, want about %v", d, 4000*(1-0.36)/(1+0.36))
	}
}

// traceByMatrix returns tr(AΣ) and tr(AΣAΣ) for n AR(1) runs at rho by forming the
// matrices: A = I - J/n, Σ_ik = rho^|i-k|.
func traceByMatrix(n int, rho float64) (tr, tr2 float64) {
	m := make([][]float64, n) // AΣ
	for i := range n {
		m[i] = make([]float64, n)
		for k := range n {
			for j := range n {
				a := -1 / float64(n)
				if i == j {
					a++
				}
				m[i][k] += a * math.Pow(rho, math.Abs(float64(j-k)))
			}
		}
	}
	for i := range n {
		tr += m[i][i]
		for k := range n {
			tr2 += m[i][k] * m[k][i]
		}
	}
	return tr, tr2
}

// CompareFamily tests "no regression" at the family alpha (an intersection–union test),
// not at each metric's Holm level: a metric whose worse end is within δ at 0.01 but not
// at 0.0025 is no regression in the family, inconclusive when its worse end is asked
// for the Holm level.
func TestCompareFamilyNoRegressionAlpha(t *testing.T) {
	b := []float64{1.00, 1.03, 0.97, 1.01, 0.99, 1.02, 0.98, 1.00}
	family := func(cur []float64) Comparison {
		var series []Series
		for range 4 {
			series = append(series, Series{Metric: "m", Unit: None, Baseline: b, Current: cur, Primary: true, Gate: same})
		}
		return CompareFamily(0.01, series)[0]
	}
	holm := same
	holm.Alpha, holm.NoRegressionAlpha = 0.0025, 0.0025
	// The smallest slowdown whose worse end is beyond δ at 0.0025 but within it at 0.01.
	for f := 1.0; f < 1.05; f += 0.0005 {
		cur := scaled(b, f, 0.01, -0.01, 0.0)
		c, strict := family(cur), CompareRuns("m", None, b, cur, holm)
		if !(strict.High-1 >= 0.05 && c.High-1 < 0.05) {
			continue
		}
		if c.NoRegressionAlpha != 0.01 || c.Alpha != 0.0025 {
			t.Fatalf("alphas %v (better end), %v (worse end); want 0.0025 and 0.01", c.Alpha, c.NoRegressionAlpha)
		}
		if c.Change != ChangeNoRegression || strict.Change != ChangeInconclusive {
			t.Errorf("%.4f× slower: family %v, at the Holm level %v; want no regression and inconclusive", f, c.Change, strict.Change)
		}
		return
	}
	t.Fatal("no slowdown up to 5% puts the worse end between the two levels' bounds")
}

// Settled: an inconclusive comparison that more current runs would barely sharpen (a
// one-session baseline, session noise assumed) does not keep a sequential gate running;
// one that more runs would sharpen does.
func TestSettledWhenRunsCannotHelp(t *testing.T) {
	b := []float64{0.100, 0.103, 0.097, 0.101, 0.099}
	cur := scaled(b, 1.04, 0.01, -0.01)
	assumed := CompareRuns("m", Seconds, b, cur, RunGate{})
	assumed.Primary = true
	if assumed.Change != ChangeInconclusive || !Settled([]Comparison{assumed}) {
		t.Errorf("assumed session noise: %v, SE %v, with more runs %v; want inconclusive and settled", assumed.Change, assumed.SE, assumed.SEMoreRuns)
	}
	shared := CompareRuns("m", Seconds, b, cur, same)
	shared.Primary = true
	if shared.Change != ChangeInconclusive || Settled([]Comparison{shared}) {
		t.Errorf("one shared session: %v, SE %v, with more runs %v; want inconclusive and not settled", shared.Change, shared.SE, shared.SEMoreRuns)
	}
	if !strings.Contains(shared.Verdict().Summary, "runs per side would decide it") {
		t.Errorf("summary %q does not say how many runs per side would decide it", shared.Verdict().Summary)
	}
}

func TestCompareSidesLabelsMismatch(t *testing.T) {
	c := CompareSides("m", Seconds, Side{Values: base, Sessions: []int{1, 2}}, Side{Values: base}, RunGate{})
	if !strings.Contains(c.Invalid, "baseline has 5 runs and 2 session labels") {
		t.Errorf("invalid %q", c.Invalid)
	}
	if c := CompareRuns("m", Seconds, base, base, RunGate{SessionCV: 1.2}); !strings.Contains(c.Invalid, "session CV 1.2 is outside [0, 1)") {
		t.Errorf("session CV 1.2: invalid %q", c.Invalid)
	}
}

// PlanBaseline against a brute-force simulation at one setting: at the size it plans,
// drawn comparisons (single look, the plan's alpha) prove "no regression" for no change
// and show "regressed" for a 2δ slowdown at least about as often as its power; with
// clearly fewer runs they do not.
func TestPlanBaselineBruteForce(t *testing.T) {
	const scv = 0.005
	p, err := PlanBaseline(BaselinePlan{RunCV: 0.03, SessionCV: scv, Margin: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if p.Sessions != 1 || p.Runs < 3 || p.Input.Alpha != DefaultAlpha/3 || p.Input.Power != DefaultPower {
		t.Fatalf("plan %+v: want one session, defaults filled in", p)
	}
	rate := func(runs int, shift float64, want Change) float64 {
		r := rand.New(rand.NewPCG(11, uint64(runs)))
		g := RunGate{Margin: 0.05, Alpha: p.Input.Alpha, SessionCV: scv}
		hit := 0
		const pairs = 1500
		for range pairs {
			b := draws(r, 1, runs, 0.03, scv, 0)
			c := draws(r, 1, runs, 0.03, scv, shift)
			if CompareSides("m", Seconds, b, c, g).Change == want {
				hit++
			}
		}
		return float64(hit) / pairs
	}
	slow := math.Log(1.05 * 1.05) // 2δ on the log scale
	for _, x := range []struct {
		name  string
		shift float64
		want  Change
	}{{"no change → no regression", 0, ChangeNoRegression}, {"2δ slower → regressed", slow, ChangeRegressed}} {
		at := rate(p.Runs, x.shift, x.want)
		if at < p.Input.Power-0.04 {
			t.Errorf("%s at the planned %d runs: %.3f, want about %v or more", x.name, p.Runs, at, p.Input.Power)
		}
		// "No regression" for no change is what binds: with half the runs it fails.
		if fewer := max(2, p.Runs/2); x.want == ChangeNoRegression {
			if below := rate(fewer, x.shift, x.want); below >= at-0.1 {
				t.Errorf("%s at %d runs: %.3f, not clearly below %.3f at the planned %d", x.name, fewer, below, at, p.Runs)
			}
		}
	}
}

func TestPlanBaselineShapesAndErrors(t *testing.T) {
	// Measured session noise needs MinSessions sessions at least.
	m, err := PlanBaseline(BaselinePlan{RunCV: 0.03, Margin: 0.05, Measure: true})
	if err != nil || m.Sessions < MinSessions {
		t.Errorf("measured: %v, %v; want >= %d sessions", m, err, MinSessions)
	}
	if s := m.String(); !strings.Contains(s, "sessions of") || !strings.Contains(s, "current runs") {
		t.Errorf("String() = %q", s)
	}
	// Sessions that wander as far as δ: no size decides, and the error says why.
	if _, err := PlanBaseline(BaselinePlan{RunCV: 0.03, SessionCV: 0.05, Margin: 0.05}); !errors.Is(err, ErrNoPlan) || !strings.Contains(err.Error(), "the current side is one session") {
		t.Errorf("session CV 5%%, δ 5%%: err %v, want ErrNoPlan naming the current session", err)
	}
	for _, bad := range []BaselinePlan{{}, {RunCV: 1}, {RunCV: 0.03, SessionCV: -1}, {RunCV: 0.03, Margin: 2}, {RunCV: 0.03, Power: 1}, {RunCV: 0.03, Alpha: 0.6}} {
		if _, err := PlanBaseline(bad); err == nil || errors.Is(err, ErrNoPlan) || !strings.HasPrefix(err.Error(), "check: plan: ") {
			t.Errorf("PlanBaseline(%+v) = %v, want a validation error", bad, err)
		}
	}
	// More noise needs more runs.
	a, _ := PlanBaseline(BaselinePlan{RunCV: 0.02, SessionCV: 0.005})
	b, _ := PlanBaseline(BaselinePlan{RunCV: 0.04, SessionCV: 0.005})
	if !(b.Runs > a.Runs) {
		t.Errorf("runs at CV 2%% %d, at 4%% %d: want more at 4%%", a.Runs, b.Runs)
	}
}

// Three sessions are too few to measure the between-session noise: the gate takes the
// larger of what they show and the given (or assumed) CV, and says which.
func TestFewSessions(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 4))
	b := draws(r, 3, 5, 0.02, 0.05, 0)
	c := draws(r, 1, 5, 0.02, 0, 0)
	c.Sessions = nil
	wide := CompareSides("m", Seconds, b, c, RunGate{SessionCV: 0.001})
	if wide.SessionSource != "few sessions" || !(wide.SessionCV > 0.01) || !strings.Contains(strings.Join(wide.Notes, ""), "baseline 3 sessions, current one session: too few to measure between-session noise (10 or more); assumed the larger of what they show and the given between-session CV 0.1%") {
		t.Errorf("3 sessions 5%% apart, session CV 0.1%% given: source %q CV %v, notes %q", wide.SessionSource, wide.SessionCV, wide.Notes)
	}
	calm := draws(r, 3, 5, 0.02, 0, 0)
	given := CompareSides("m", Seconds, calm, c, RunGate{SessionCV: 0.2})
	if given.SessionSource != "few sessions/given" || math.Abs(given.SessionCV-0.2) > 1e-12 {
		t.Errorf("3 calm sessions, session CV 20%% given: source %q CV %v", given.SessionSource, given.SessionCV)
	}
	if a := CompareSides("m", Seconds, calm, c, RunGate{}); a.SessionSource != "few sessions/assumed" || !strings.Contains(strings.Join(a.Notes, ""), "the runs' CV (nothing stored or configured)") {
		t.Errorf("3 calm sessions, nothing given: source %q, notes %q", a.SessionSource, a.Notes)
	}
}
