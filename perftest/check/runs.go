package check

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/perfgate/perfgate/distribution"
)

// The run-level regression gate: runs, not requests, are the unit of replication. Each
// run of a scenario gives one statistic per metric (its TTFT p50, its output throughput…);
// a baseline of K runs is compared with the current runs by the ratio of their geometric
// means and a Welch t interval on the logs of the run statistics, and each metric gets one
// of three answers against a practical margin δ. docs/statistics.md explains the design
// and compares it with benchstat's and Pinpoint's.

// DefaultMargin is the regression gate's practical margin δ when none is given: a change
// smaller than 5% is not a regression, and "no regression" means "provably under 5%".
const DefaultMargin = 0.05

// DefaultPower is the power at which the gate reports its minimum detectable effect.
const DefaultPower = 0.8

// maxRunsForMargin bounds the search for the runs a margin needs; beyond it the gate
// says "more than 1000".
const maxRunsForMargin = 1000

// Change is a regression gate's answer for one metric.
type Change int

// Changes. The zero value is ChangeNoRegression. (The names carry the prefix because
// [NoRegression], the pooled-request check, and the [Inconclusive] status exist.)
const (
	// ChangeNoRegression: the interval's worse end is within the margin, so any regression is
	// provably smaller than δ.
	ChangeNoRegression Change = iota
	// ChangeRegressed: the interval excludes no change and the ratio is worse by at least δ.
	ChangeRegressed
	// ChangeInconclusive: neither; more runs would tell.
	ChangeInconclusive
	// ChangeImproved: the interval excludes no change and the ratio is better by at least δ.
	ChangeImproved
)

// String returns "no regression", "regressed", "inconclusive" or "improved".
func (c Change) String() string {
	switch c {
	case ChangeNoRegression:
		return "no regression"
	case ChangeRegressed:
		return "regressed"
	case ChangeInconclusive:
		return "inconclusive"
	case ChangeImproved:
		return "improved"
	}
	return fmt.Sprintf("Change(%d)", int(c))
}

// RunGate configures [CompareRuns]. Its zero value is the default gate: δ = 5%, alpha =
// 0.01, lower is better, power 80%, no prior CV, an inconclusive answer passes, and a δ
// below the minimum detectable effect is a warning.
type RunGate struct {
	// Margin is δ, relative: a regression smaller than this is not one (0 = DefaultMargin).
	// Must be in (0, 1).
	Margin float64
	// Alpha is this metric's error rate (0 = DefaultAlpha), one-sided: the chance of
	// "regressed" when nothing changed, and of "no regression" when the change is δ. The
	// interval is therefore at 1-2·Alpha (98% for 0.01), each end a one-sided bound, as
	// in the two one-sided tests (TOST) of equivalence testing. Must be in (0, 0.5).
	// CompareFamily sets it per metric (Holm); a sequential gate divides it across looks
	// (Schedule.Alpha).
	Alpha float64
	// HigherIsBetter flips the direction, for throughputs and the goodput fraction: a
	// decrease regresses.
	HigherIsBetter bool
	// Power is the probability of detecting a true effect at which the minimum detectable
	// effect is reported (0 = DefaultPower).
	Power float64
	// NoRegressionAlpha is the level of the interval's worse end, the one-sided test of
	// "no regression" (0 = Alpha). CompareFamily sets it to the family alpha: "no
	// regression" on every primary metric is an intersection–union test, which needs no
	// Holm split (each metric's claim must hold on its own).
	NoRegressionAlpha float64
	// PriorCV is the between-run coefficient of variation to assume for a side that has
	// one run (a baseline's stored CV); 0 = none, and with one run on both sides the gate
	// is then inconclusive.
	PriorCV float64
	// SessionCV is the between-session CV to assume when the sides' sessions are too few
	// to measure it (fewer than MinSessions): stored with a baseline or configured; 0 =
	// none, and a side of one session is then assumed to wander between sessions as much
	// as its runs wander within one. SessionDF is its degrees of freedom when it was
	// itself estimated (0 = known exactly), and SessionCVFrom says where it came from,
	// for the verdict's note ("" = "the given").
	SessionCV     float64
	SessionDF     float64
	SessionCVFrom string
	// SameSession says the two sides ran in the same session (an interleaved A/B
	// comparison), so a session's offset touches both alike and cancels: no
	// between-session term, and session labels are ignored.
	SameSession bool
	// FailInconclusive makes an Inconclusive answer fail (Verdict.Pass = false).
	FailInconclusive bool
	// StrictMDE makes a Margin below the minimum detectable effect fail instead of warn.
	StrictMDE bool
}

func (g RunGate) withDefaults() RunGate {
	if g.Margin == 0 {
		g.Margin = DefaultMargin
	}
	if g.Alpha == 0 {
		g.Alpha = DefaultAlpha
	}
	if g.Power == 0 {
		g.Power = DefaultPower
	}
	if g.NoRegressionAlpha == 0 {
		g.NoRegressionAlpha = g.Alpha
	}
	return g
}

func (g RunGate) validate() string {
	var bad []string
	if !(g.Margin > 0 && g.Margin < 1) {
		bad = append(bad, fmt.Sprintf("margin %v is outside (0, 1)", g.Margin))
	}
	if !(g.Alpha > 0 && g.Alpha < 0.5) {
		bad = append(bad, fmt.Sprintf("alpha %v is outside (0, 0.5)", g.Alpha))
	}
	if !(g.Power > 0 && g.Power < 1) {
		bad = append(bad, fmt.Sprintf("power %v is outside (0, 1)", g.Power))
	}
	if !(g.NoRegressionAlpha > 0 && g.NoRegressionAlpha < 0.5) {
		bad = append(bad, fmt.Sprintf("no-regression alpha %v is outside (0, 0.5)", g.NoRegressionAlpha))
	}
	if !(g.PriorCV >= 0 && !math.IsInf(g.PriorCV, 0)) {
		bad = append(bad, fmt.Sprintf("prior CV %v is not a finite value >= 0", g.PriorCV))
	}
	if !(g.SessionCV >= 0 && g.SessionCV < 1) {
		bad = append(bad, fmt.Sprintf("session CV %v is outside [0, 1)", g.SessionCV))
	}
	if !(g.SessionDF >= 0) {
		bad = append(bad, fmt.Sprintf("session CV df %v is negative", g.SessionDF))
	}
	return strings.Join(bad, "; ")
}

// marginLog is δ on the log scale, in the worse direction: log(1+δ) when lower is better
// (a ratio of 1+δ), -log(1-δ) when higher is better (a ratio of 1-δ).
func (g RunGate) marginLog() float64 {
	if g.HigherIsBetter {
		return -math.Log1p(-g.Margin)
	}
	return math.Log1p(g.Margin)
}

// worse returns how much worse a ratio is than no change, as a fraction of the baseline:
// r-1 when lower is better, 1-r when higher is better (negative = better).
func (g RunGate) worse(r float64) float64 {
	if g.HigherIsBetter {
		return 1 - r
	}
	return r - 1
}

// relative turns a log-scale effect d (> 0, in the worse direction) into the relative
// change a reader sees: e^d - 1 for latencies, 1 - e^-d for throughputs.
func (g RunGate) relative(d float64) float64 {
	if g.HigherIsBetter {
		return -math.Expm1(-d)
	}
	return math.Expm1(d)
}

// Comparison is one metric's run-level comparison, made by [CompareRuns].
type Comparison struct {
	Metric string
	Unit   Unit
	Change Change
	// Ratio is current/baseline, the ratio of the (geometric) means of the run
	// statistics, each side's mean being the mean of its sessions' means; [Low, High] is
	// its interval, the better end a one-sided bound at Alpha and the worse end one at
	// NoRegressionAlpha (NaN when it cannot be computed: one run per side and no PriorCV).
	Ratio, Low, High float64
	// PValue is the t test on the logs of "no change" against "worse", one-sided (NaN
	// without an interval): below Alpha exactly when the better end lies on the worse side
	// of 1. Holm ranks the primary metrics by it.
	PValue float64
	// SE is the standard error of the log ratio, from the two-level noise model, and DF
	// its t reference's degrees of freedom (Satterthwaite over the variance's parts;
	// +Inf when every part was assumed).
	SE, DF float64
	// Alpha is the level of the better end (of "regressed"), after Holm and sequential
	// spending; NoRegressionAlpha that of the worse end (of "no regression").
	Alpha, NoRegressionAlpha float64
	// BaselineSessions and CurrentSessions count the sessions of each side.
	BaselineSessions, CurrentSessions int
	// SessionCV is the between-session CV the interval used (NaN when the sides share
	// their sessions), and SessionSource how it was found: "measured" (from MinSessions
	// sessions or more), "given" (RunGate.SessionCV), "assumed" (as large as the run CV:
	// too few sessions and nothing given), "few sessions" (what 2–9 sessions show, larger
	// than the given or assumed one; "few sessions/given" and "few sessions/assumed" when
	// that one was larger), or "same session".
	SessionCV     float64
	SessionSource string
	// Dependence is what the tests for dependence in run order found on each side
	// (baseline, current).
	Dependence [2]Dependence
	// CurrentRunsToDecide is the number of current runs that would make this comparison
	// decisive (detect δ at Alpha with the gate's Power, and prove "no regression" for no
	// change) with the baseline as it is; 0 when no number up to 1000 would (the
	// baseline's sessions, or the current session's own offset, limit it), and then
	// BaselineRunsToDecide (for a one-session baseline) the runs in that session that
	// would, else SessionsToDecide the number of baseline sessions (of the baseline's runs
	// per session) that would with the current runs; 0 when none (up to 1000 runs, 200
	// sessions) would.
	CurrentRunsToDecide, BaselineRunsToDecide, SessionsToDecide int
	// SEMoreRuns is the standard error this comparison would have with unlimited current
	// runs and the baseline as it is (NaN unless inconclusive or δ is below the MDE): what
	// the baseline's runs and sessions and the current session's own offset leave.
	SEMoreRuns float64
	// Baseline and Current are the run statistics compared, one per run, in run order.
	Baseline, Current []float64
	// CV is the between-run coefficient of variation within a session: pooled over both
	// sides' sessions, or PriorCV. It is reported as a relative standard deviation
	// (sqrt(e^s²-1) for the standard deviation s of the logs; for small values the two
	// are equal).
	CV float64
	// MDE is the smallest relative effect in the worse direction that these runs detect
	// at Alpha with the gate's Power (NaN without an interval).
	MDE float64
	// Primary is set by CompareFamily for a primary metric (Holm-corrected, can fail the gate).
	Primary bool
	Gate    RunGate // with defaults filled in
	// Notes are caveats printed with the verdict, e.g. "between-run noise not measured:
	// one run per side".
	Notes []string
	// Invalid, when not empty, says why no comparison could be made (bad gate settings,
	// an empty side, a statistic that is not a positive finite number); Change is then
	// ChangeInconclusive and the verdict fails.
	Invalid string
}

// CompareRuns compares one metric's run statistics, one value per run, between a baseline
// and a current set of runs, each side measured in one session of its own: it is
// [CompareSides] with no session labels.
func CompareRuns(metric string, u Unit, baseline, current []float64, g RunGate) Comparison {
	return CompareSides(metric, u, Side{Values: baseline}, Side{Values: current}, g)
}

// CompareSides compares one metric's run statistics between a baseline and a current
// side, each a [Side]: one value per run in run order, and the session each run was
// measured in. The effect is the ratio current/baseline of the sides' geometric means
// (each side's mean of logs being the mean of its sessions' means). Its interval comes
// from a t reference on the two-level noise model (see the file's comment and
// docs/statistics.md): a side's mean varies with its sessions' offsets (between-session
// variance σ_b²) and with its runs' noise within a session (σ_w², widened by the
// effective number of runs when the runs are correlated in run order). σ_b² is
//
//   - nothing, with SameSession (an interleaved A/B comparison);
//   - measured, by one-way random-effects ANOVA, when the sides have MinSessions sessions
//     or more (sum of m-1 at least MinSessions-1): a side of several sessions then
//     contributes the variance of its session means over their number, with m-1 degrees
//     of freedom, and a side of one session σ_b² plus its within-session part;
//   - else SessionCV (stored or configured), or the larger of it and what 2–4 sessions
//     show;
//   - else assumed equal to σ_w²: a side of one session may be offset as far as a run
//     wanders, and the verdict says so and what would tell (more baseline sessions, or a
//     session CV).
//
// The degrees of freedom are Satterthwaite's over the parts. With δ = Margin:
//
//   - [ChangeRegressed]: the better end (a one-sided bound at Alpha) is on the worse side
//     of 1 and the ratio is worse by at least δ (r >= 1+δ for latencies, r <= 1-δ for
//     throughputs);
//   - [ChangeImproved]: the worse end is on the better side and the ratio is better by at
//     least δ;
//   - [ChangeNoRegression]: otherwise, when the worse end (a one-sided bound at
//     NoRegressionAlpha) is worse by less than δ;
//   - [ChangeInconclusive]: anything else; the verdict says what would decide it
//     (CurrentRunsToDecide, SessionsToDecide).
//
// A side with one run has no measured within-session noise: its variance is taken from
// PriorCV when given, else from the other side's runs (and a note says so); with one run
// on each side and no PriorCV there is no interval, and the answer is ChangeInconclusive.
// The minimum detectable effect (MDE) and the runs needed for δ are computed at Alpha and
// Power ([distribution.DetectableEffect]); a δ below the MDE adds a note (or, with
// StrictMDE, fails the verdict). CompareSides never panics on data: bad settings or
// values give an Invalid comparison.
func CompareSides(metric string, u Unit, baseline, current Side, g RunGate) Comparison {
	return compareSides(metric, u, baseline, current, g, true)
}

// compareSides is CompareSides; without full it stops at the change, leaving out the MDE,
// the runs for the margin, the notes and what would decide it (CompareFamily's first
// pass needs the p-value only).
func compareSides(metric string, u Unit, baseline, current Side, g RunGate, full bool) Comparison {
	g = g.withDefaults()
	c := Comparison{
		Metric: metric, Unit: u, Gate: g, Alpha: g.Alpha, NoRegressionAlpha: g.NoRegressionAlpha, Change: ChangeInconclusive,
		Baseline: append([]float64(nil), baseline.Values...), Current: append([]float64(nil), current.Values...),
		Ratio: math.NaN(), Low: math.NaN(), High: math.NaN(), PValue: math.NaN(), SE: math.NaN(), DF: math.NaN(),
		CV: math.NaN(), MDE: math.NaN(), SessionCV: math.NaN(), SEMoreRuns: math.NaN(),
	}
	if bad := g.validate(); bad != "" {
		c.Invalid = bad
		return c
	}
	if len(baseline.Values) == 0 || len(current.Values) == 0 {
		c.Invalid = fmt.Sprintf("a side has no runs (baseline %d, current %d)", len(baseline.Values), len(current.Values))
		return c
	}
	for _, s := range []struct {
		name string
		side Side
	}{{"baseline", baseline}, {"current", current}} {
		if s.side.Sessions != nil && len(s.side.Sessions) != len(s.side.Values) {
			c.Invalid = fmt.Sprintf("%s has %d runs and %d session labels; want one label per run", s.name, len(s.side.Values), len(s.side.Sessions))
			return c
		}
	}
	lb, bad := logs(baseline.Values, "baseline")
	if bad == "" {
		var lc []float64
		lc, bad = logs(current.Values, "current")
		if bad == "" {
			c.compare(lb, lc, baseline.Sessions, current.Sessions, full)
			return c
		}
	}
	c.Invalid = bad + " (the ratio is taken on a log scale)"
	return c
}

// GeoMean is the geometric mean of xs, the centre the run-level gate compares: NaN
// unless every value is a positive finite number (a run with a zero hit rate has no
// log, so no geometric mean).
func GeoMean(xs []float64) float64 {
	l, bad := logs(xs, "")
	if bad != "" || len(l) == 0 {
		return math.NaN()
	}
	m, _ := meanVar(l)
	return math.Exp(m)
}

// logs returns the natural logs of xs, or says which value is not a positive finite number.
func logs(xs []float64, side string) ([]float64, string) {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Sprintf("%s run %d of %d has statistic %v, want a positive finite number", side, i+1, len(xs), x)
		}
		out[i] = math.Log(x)
	}
	return out, ""
}

func meanVar(xs []float64) (m, v float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	if len(xs) > 1 {
		v /= float64(len(xs) - 1)
	}
	return m, v
}

// compare fills in the interval, the change, the MDE and the notes from the logs.
func (c *Comparison) compare(lb, lc []float64, sb, sc []int, full bool) {
	g := c.Gate
	b := groupSide("baseline", lb, sb, g.SameSession)
	cu := groupSide("current", lc, sc, g.SameSession)
	poolDependence(b, cu)
	c.BaselineSessions, c.CurrentSessions = b.m(), cu.m()
	c.Dependence = [2]Dependence{b.dep, cu.dep}
	diff := cu.mean - b.mean
	c.Ratio = math.Exp(diff)
	wb, wc, ok := c.withinTerms(b, cu)
	if !ok {
		return
	}
	nz := twoLevel(b, cu, wb, wc, g)
	se2, df := satterthwaite(nz.terms)
	se := math.Sqrt(se2)
	c.SE, c.DF = se, df
	c.SessionSource = nz.source
	if nz.source != sessionSame {
		c.SessionCV = math.Sqrt(math.Expm1(nz.sb2))
	}
	// The better end at Alpha, the worse end at NoRegressionAlpha.
	qr, qn := distribution.TQuantile(1-g.Alpha, df)*se, distribution.TQuantile(1-g.NoRegressionAlpha, df)*se
	if g.HigherIsBetter {
		c.Low, c.High = math.Exp(diff-qn), math.Exp(diff+qr)
	} else {
		c.Low, c.High = math.Exp(diff-qr), math.Exp(diff+qn)
	}
	toward := diff
	if g.HigherIsBetter {
		toward = -diff
	}
	switch {
	case se > 0:
		c.PValue = distribution.TSurvival(toward/se, df)
	case toward > 0:
		c.PValue = 0
	default:
		c.PValue = 1
	}
	c.CV = math.Sqrt(math.Expm1(nz.sw2))
	c.Change = c.decide()
	if !full {
		return // CompareFamily's first pass: the p-value is all it needs
	}
	c.MDE = 0
	if se > 0 {
		// The one-sided test at Alpha is the two-sided one at 2·Alpha less its far tail,
		// which is negligible at any useful power.
		c.MDE = g.relative(distribution.DetectableEffect(se, df, 2*g.Alpha, g.Power))
	}
	c.sessionNotes(b, cu, nz)
	if c.Change == ChangeInconclusive || c.MDE > g.Margin {
		c.toDecide(b, cu, wb, wc, nz)
	}
	if c.MDE > g.Margin {
		c.Notes = append(c.Notes, c.mdeNote())
	}
}

// withinTerms returns each side's within-session variance (log scale) with its degrees
// of freedom: its own; for a side without (one run per session), PriorCV's (known), else
// the other side's. With neither side measuring it and no PriorCV it notes why there is
// no interval and returns false.
func (c *Comparison) withinTerms(b, cu *side) (wb, wc term, ok bool) {
	g := c.Gate
	prior := term{math.Log1p(g.PriorCV * g.PriorCV), math.Inf(1)}
	own := func(s *side) term { return term{s.sw2(), s.wdf()} }
	switch {
	case b.dfw > 0 && cu.dfw > 0:
		return own(b), own(cu), true
	case b.dfw == 0 && cu.dfw == 0:
		if g.PriorCV == 0 {
			c.Notes = append(c.Notes, "between-run noise not measured: one run per side and no stored CV, so a change cannot be told from run-to-run noise; record a baseline of several runs (or give the gate a prior CV)")
			return term{}, term{}, false
		}
		c.Notes = append(c.Notes, fmt.Sprintf("between-run noise not measured: one run per side; assumed the stored between-run CV %s", pct(g.PriorCV)))
		return prior, prior, true
	}
	one, many := b, cu
	if cu.dfw == 0 {
		one, many = cu, b
	}
	what := fmt.Sprintf("between-run noise of the %s not measured (one run)", one.name)
	if one.n > 1 {
		what = fmt.Sprintf("between-run noise of the %s not measured within a session (one run per session)", one.name)
	}
	t := own(many)
	if g.PriorCV > 0 {
		t = prior
		c.Notes = append(c.Notes, fmt.Sprintf("%s; assumed the stored between-run CV %s", what, pct(g.PriorCV)))
	} else {
		c.Notes = append(c.Notes, fmt.Sprintf("%s; assumed it varies as the %d %s runs do", what, many.n, many.name))
	}
	if one == b {
		return t, own(cu), true
	}
	return own(b), t, true
}

// sessionNotes says how the between-session noise was found, when it was not measured,
// and what the tests for dependence found.
func (c *Comparison) sessionNotes(b, cu *side, nz noise) {
	switch {
	case nz.source == sessionGiven:
		c.Notes = append(c.Notes, fmt.Sprintf("between-session noise not measured (%s): assumed %s between-session CV %s",
			c.sessionsText(), cmp.Or(c.Gate.SessionCVFrom, "the given"), pct(c.SessionCV)))
	case nz.source == sessionAssumed:
		c.Notes = append(c.Notes, fmt.Sprintf("between-session noise not measured (%s; no between-session CV stored or configured): assumed sessions differ as much as runs do (CV %s), so a change that session noise could explain is inconclusive",
			c.sessionsText(), pct(c.SessionCV)))
	case strings.HasPrefix(nz.source, sessionFewMeasure):
		other := "the runs' CV (nothing stored or configured)"
		if c.Gate.SessionCV > 0 {
			other = fmt.Sprintf("%s between-session CV %s", cmp.Or(c.Gate.SessionCVFrom, "the given"), pct(c.Gate.SessionCV))
		}
		c.Notes = append(c.Notes, fmt.Sprintf("%s: too few to measure between-session noise (%d or more); assumed the larger of what they show and %s: CV %s",
			c.sessionsText(), MinSessions, other, pct(c.SessionCV)))
	}
	if b.dep.Pooled && cu.dep.Pooled && b.dep.Widened && cu.dep.Widened {
		c.Notes = append(c.Notes, fmt.Sprintf("dependence: the runs of both sides together show %s in run order; the baseline's %d runs count as %.3g effective runs, the current side's %d as %.3g, so the interval is wider",
			b.dep.found(), b.n, float64(b.n)/b.dep.Factor, cu.n, float64(cu.n)/cu.dep.Factor))
		return
	}
	for _, s := range []*side{b, cu} {
		found := s.dep.found()
		switch {
		case found == "" || !s.dep.Widened:
		case s.dep.Pooled:
			c.Notes = append(c.Notes, fmt.Sprintf("dependence: the runs of both sides together show %s in run order; the %s runs count as %.3g effective runs of %d, so the interval is wider",
				found, s.name, float64(s.n)/s.dep.Factor, s.n))
		default:
			c.Notes = append(c.Notes, fmt.Sprintf("dependence: the %s runs show %s in run order; counted as %.3g effective runs of %d, so the interval is wider",
				s.name, found, float64(s.n)/s.dep.Factor, s.n))
		}
	}
}

// sessionsText prints "the baseline is one session, the current side one".
func (c Comparison) sessionsText() string {
	n := func(k int) string {
		if k == 1 {
			return "one session"
		}
		return fmt.Sprintf("%d sessions", k)
	}
	return fmt.Sprintf("baseline %s, current %s", n(c.BaselineSessions), n(c.CurrentSessions))
}

// decide applies the three-verdict rule to the interval.
func (c *Comparison) decide() Change {
	g := c.Gate
	worseEnd, betterEnd := c.High, c.Low
	if g.HigherIsBetter {
		worseEnd, betterEnd = c.Low, c.High
	}
	switch {
	case g.worse(betterEnd) > 0 && g.worse(c.Ratio) >= g.Margin:
		return ChangeRegressed
	case g.worse(worseEnd) < 0 && -g.worse(c.Ratio) >= g.Margin:
		return ChangeImproved
	case g.worse(worseEnd) < g.Margin:
		return ChangeNoRegression
	}
	return ChangeInconclusive
}

func (c *Comparison) mdeNote() string {
	s := fmt.Sprintf("margin %s is below the minimum detectable effect %s with %d+%d runs (alpha %s, power %s): a regression of exactly %s is caught less than %s of the time",
		pct(c.Gate.Margin), pct(c.MDE), len(c.Baseline), len(c.Current), sig3(c.Alpha), pct(c.Gate.Power), pct(c.Gate.Margin), pct(c.Gate.Power))
	if r := c.remedy("detect it"); r != "" && c.Change != ChangeInconclusive {
		s += "; " + r // an inconclusive summary says it already
	}
	return s
}

// MDEBelowMargin reports whether the margin is smaller than the minimum detectable effect.
func (c Comparison) MDEBelowMargin() bool { return c.MDE > c.Gate.Margin }

// signedPct prints a relative change with its sign, e.g. "+12.3%", "-4.1%".
func signedPct(x float64) string {
	s := pct(x)
	if x >= 0 && !math.IsNaN(x) {
		s = "+" + s
	}
	return s
}

// runsText prints "5 vs 5 runs".
func (c Comparison) runsText() string {
	return fmt.Sprintf("%d vs %d %s", len(c.Baseline), len(c.Current), plural(len(c.Current), "run", "runs"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// intervalText prints "98% interval +8.0% to +16.1%" when both ends are at one level,
// else "interval +8.0% to +16.1% (99.9%/99% bounds)" with each end's one-sided level.
func (c Comparison) intervalText() string {
	if math.IsNaN(c.Low) {
		return "no interval"
	}
	if c.Alpha == c.NoRegressionAlpha {
		return fmt.Sprintf("%s%% interval %s to %s", sig3((1-2*c.Alpha)*100), signedPct(c.Low-1), signedPct(c.High-1))
	}
	lo, hi := c.Alpha, c.NoRegressionAlpha
	if c.Gate.HigherIsBetter {
		lo, hi = hi, lo
	}
	return fmt.Sprintf("interval %s to %s (%s%%/%s%% bounds)", signedPct(c.Low-1), signedPct(c.High-1), sig3((1-lo)*100), sig3((1-hi)*100))
}

// remedy says what would make the comparison decisive ("" when nothing was computed),
// with verb ("decide it", "detect it") after its "would".
func (c Comparison) remedy(verb string) string {
	per := max(1, int(math.Round(float64(len(c.Baseline))/float64(max(1, c.BaselineSessions)))))
	switch {
	case math.IsNaN(c.SE):
		return ""
	case c.CurrentRunsToDecide > 0 && c.SessionSource == sessionSame:
		return fmt.Sprintf("about %d runs per side would %s", c.CurrentRunsToDecide, verb)
	case c.CurrentRunsToDecide > 0:
		return fmt.Sprintf("about %d current runs would %s", c.CurrentRunsToDecide, verb)
	case c.BaselineRunsToDecide > 0:
		return fmt.Sprintf("more current runs would not: about %d baseline runs would %s", c.BaselineRunsToDecide, verb)
	case c.SessionsToDecide > 0:
		return fmt.Sprintf("more current runs would not: about %d baseline sessions of %d %s would %s", c.SessionsToDecide, per, plural(per, "run", "runs"), verb)
	case c.SessionSource == sessionAssumed:
		return fmt.Sprintf("more runs would not: between-session noise is not measured; %d baseline sessions, or a session CV, would %s", MinSessions, verb)
	case c.SessionSource == sessionSame:
		return fmt.Sprintf("more than %d runs per side would be needed to %s", maxRunsForMargin, verb)
	}
	return fmt.Sprintf("no number of runs or baseline sessions would %s: the current session's own offset (between-session CV %s) hides a %s change", verb, pct(c.SessionCV), pct(c.Gate.Margin))
}

// Verdict renders the comparison as a verdict of check "regression". Its Status is
// [Inconclusive] when Change is [ChangeInconclusive], and Pass is then
// !Gate.FailInconclusive; ChangeRegressed fails, ChangeNoRegression and ChangeImproved pass, and with Gate.StrictMDE a margin below the
// minimum detectable effect fails (a decided failure: the gate is too blunt for δ). The
// summary stands alone, in got/want order; the evidence gives both sides' run
// statistics, the ratio and its interval, the noise and MDE, the rule and the notes.
func (c Comparison) Verdict() Verdict {
	const check = "regression"
	if c.Invalid != "" {
		return invalid(check, "%s regression: %s", c.Metric, c.Invalid)
	}
	g := c.Gate
	change := fmt.Sprintf("%s vs baseline (%s, %s)", signedPct(c.Ratio-1), c.intervalText(), c.runsText())
	want := "want under " + signedPct(g.Margin)
	if g.HigherIsBetter {
		want = "want above " + signedPct(-g.Margin)
	}
	v := Verdict{Check: check, Value: c.Ratio - 1, Unit: Fraction}
	switch c.Change {
	case ChangeRegressed:
		v.Summary = fmt.Sprintf("%s regressed: %s, %s", c.Metric, change, want)
	case ChangeImproved:
		v.Summary = fmt.Sprintf("%s improved: %s", c.Metric, change)
		v.Pass = true
	case ChangeNoRegression:
		v.Summary = fmt.Sprintf("%s: no regression: %s; any regression is under %s", c.Metric, change, pct(g.Margin))
		v.Pass = true
	default:
		v.Status = Inconclusive
		v.Pass = !g.FailInconclusive
		v.Summary = fmt.Sprintf("%s: inconclusive: %s can neither rule out nor show a %s regression", c.Metric, change, pct(g.Margin))
		if r := c.remedy("decide it"); r != "" {
			v.Summary += " (" + r + ")"
		}
	}
	if g.StrictMDE && c.MDEBelowMargin() && c.Change != ChangeRegressed {
		v.Pass, v.Status = false, Decided
		v.Summary = fmt.Sprintf("%s: the gate cannot detect a %s regression with %s: minimum detectable effect %s, want at most the margin %s (StrictMDE); measured %s",
			c.Metric, pct(g.Margin), c.runsText(), pct(c.MDE), pct(g.Margin), change)
	}
	v.Evidence = c.evidence()
	return v
}

func (c Comparison) evidence() []Line {
	g := c.Gate
	runs := func(xs []float64) string {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = c.Unit.Format(x)
		}
		return fmt.Sprintf("%s   (%d %s, geometric mean %s)", strings.Join(parts, " "), len(xs), plural(len(xs), "run", "runs"), c.Unit.Format(GeoMean(xs)))
	}
	ev := []Line{{"baseline", runs(c.Baseline)}, {"current", runs(c.Current)}}
	if math.IsNaN(c.Low) {
		ev = append(ev, Line{"ratio", fmt.Sprintf("%.4g (current/baseline, ratio of geometric means); no interval", c.Ratio)})
	} else {
		ev = append(ev, Line{"ratio", fmt.Sprintf("%.4g (current/baseline, ratio of geometric means), interval [%.4g, %.4g]; t on log run statistics over sessions and runs, SE %.3g, df=%.3g, one-sided p(worse)=%s",
			c.Ratio, c.Low, c.High, c.SE, c.DF, pvalue(c.PValue))})
		noise := fmt.Sprintf("between-run CV %s within a session", pct(c.CV))
		if c.SessionSource != sessionSame {
			noise += fmt.Sprintf(", between-session CV %s (%s; %s)", pct(c.SessionCV), c.SessionSource, c.sessionsText())
		}
		noise += fmt.Sprintf("; minimum detectable effect %s at alpha %s and power %s", pct(c.MDE), sig3(c.Alpha), pct(g.Power))
		ev = append(ev, Line{"noise", noise})
	}
	dir := "higher"
	if g.HigherIsBetter {
		dir = "lower"
	}
	ev = append(ev, Line{"rule", fmt.Sprintf("regressed if the interval's better end (one-sided at alpha %s) excludes no change and the ratio is %s by >= %s; no regression if its worse end (one-sided at alpha %s) is within %s; otherwise inconclusive%s",
		sig3(c.Alpha), dir, pct(g.Margin), sig3(c.NoRegressionAlpha), pct(g.Margin), primaryText(c.Primary))})
	for _, n := range c.Notes {
		ev = append(ev, Line{"note", n})
	}
	return ev
}

func primaryText(p bool) string {
	if p {
		return " (a primary metric)"
	}
	return ""
}

// Series is one metric's input to [CompareFamily].
type Series struct {
	Metric            string
	Unit              Unit
	Baseline, Current []float64
	// BaselineSessions and CurrentSessions label each run's session (as [Side.Sessions];
	// nil = one session).
	BaselineSessions, CurrentSessions []int
	Gate                              RunGate
	// Primary metrics share the family alpha (Holm) and can fail the gate; the others are
	// compared at Gate.Alpha (0 = the family alpha), reported, and fail only when a rule
	// names them (the caller's decision).
	Primary bool
}

// CompareFamily compares every series, Holm-correcting the primary ones to familyAlpha
// (0 = DefaultAlpha): the primary comparisons' p-values are ranked, and the i-th smallest
// (0-based) of m is compared at familyAlpha/(m-i) as long as every smaller one was
// significant at its level; the rest keep the level at which the procedure stopped
// ([distribution.HolmLevels]). A ChangeRegressed answer needs significance at that level, so the
// chance that any primary metric regresses when none changed is at most familyAlpha.
// "No regression" needs every primary metric's worse end within δ, an intersection–union
// test: each is at familyAlpha (NoRegressionAlpha), not at its Holm level. A primary
// comparison with no interval counts as p = 1. Results are in input order.
func CompareFamily(familyAlpha float64, series []Series) []Comparison {
	if familyAlpha == 0 {
		familyAlpha = DefaultAlpha
	}
	out := make([]Comparison, len(series))
	var prim []int
	var ps []float64
	sides := func(s Series) (Side, Side) {
		return Side{Values: s.Baseline, Sessions: s.BaselineSessions}, Side{Values: s.Current, Sessions: s.CurrentSessions}
	}
	for i, s := range series {
		g := s.Gate
		if s.Primary || g.Alpha == 0 {
			g.Alpha = familyAlpha
		}
		b, c := sides(s)
		out[i] = compareSides(s.Metric, s.Unit, b, c, g, !s.Primary)
		out[i].Primary = s.Primary
		if s.Primary {
			p := out[i].PValue
			if math.IsNaN(p) {
				p = 1
			}
			prim = append(prim, i)
			ps = append(ps, p)
		}
	}
	if len(prim) == 0 {
		return out
	}
	levels := distribution.HolmLevels(ps, familyAlpha)
	order := distribution.HolmOrder(ps)
	rank := make([]int, len(ps))
	for r, k := range order {
		rank[k] = r
	}
	for k, i := range prim {
		s := series[i]
		g := s.Gate
		g.Alpha = levels[k]
		if g.NoRegressionAlpha == 0 {
			g.NoRegressionAlpha = familyAlpha
		}
		b, cur := sides(s)
		c := CompareSides(s.Metric, s.Unit, b, cur, g)
		c.Primary = true
		if len(prim) > 1 && c.Invalid == "" {
			c.Notes = append(c.Notes, fmt.Sprintf("Holm: p-value rank %d of %d primary metrics, compared at alpha %s of the family's %s",
				rank[k]+1, len(prim), sig3(levels[k]), sig3(familyAlpha)))
		}
		out[i] = c
	}
	return out
}

// Settled reports whether more runs cannot change a sequential gate's outcome: a
// primary comparison regressed (the gate fails at this look; its alpha was spent), or no
// primary comparison is ChangeInconclusive but those that more current runs would barely
// sharpen (SEMoreRuns at least 90% of SE: the baseline's sessions or the sessions' noise
// limit them; an invalid one counts as settled too: more runs will not fix it). A
// sequential gate adds runs while it is false and looks remain.
func Settled(cs []Comparison) bool {
	open := false
	for _, c := range cs {
		if !c.Primary || c.Invalid != "" {
			continue
		}
		switch c.Change {
		case ChangeRegressed:
			return true
		case ChangeInconclusive:
			if !(c.SEMoreRuns >= 0.9*c.SE) {
				open = true
			}
		}
	}
	return !open
}

// Schedule is the sequential plan of a gate that runs the current side itself: it looks
// at Start runs per side, and while a primary metric is inconclusive doubles the runs
// (Start, 2·Start, 4·Start, …), the last look being at Cap. Zero values mean 5 and 20;
// Cap below Start means Start.
//
// Alpha is spent by a Bonferroni split: each of the L looks is tested at family/L. The
// chance of a false "regressed" at any look is then at most the family alpha whatever the
// correlation between looks (a union bound), which needs no assumption about how the
// Welch statistics of nested run sets are jointly distributed. A Pocock-type constant
// would be less conservative (0.0040 instead of 0.0033 per look for looks at 5, 10 and
// 20 runs at 0.01, under normal independent increments), at the price of that
// assumption; see docs/statistics.md.
type Schedule struct{ Start, Cap int }

// DefaultSchedule is the sequential plan when none is given: 5, 10, 20 runs per side.
var DefaultSchedule = Schedule{Start: 5, Cap: 20}

func (s Schedule) norm() Schedule {
	if s.Start <= 0 {
		s.Start = DefaultSchedule.Start
	}
	if s.Cap <= 0 {
		s.Cap = max(DefaultSchedule.Cap, s.Start)
	}
	s.Cap = max(s.Cap, s.Start)
	return s
}

// Looks returns the runs per side at each look: Start, doubling while below Cap, then Cap,
// e.g. {5, 10, 20} for the default and {3, 6, 12, 20} for Start 3.
func (s Schedule) Looks() []int {
	s = s.norm()
	var ks []int
	for k := s.Start; k < s.Cap; k *= 2 {
		ks = append(ks, k)
	}
	return append(ks, s.Cap)
}

// Alpha returns the level of look (0-based) for a family alpha (0 = DefaultAlpha): the
// Bonferroni share family/len(Looks()). A look outside the plan gets 0: its alpha was
// never budgeted.
func (s Schedule) Alpha(family float64, look int) float64 {
	if family == 0 {
		family = DefaultAlpha
	}
	n := len(s.Looks())
	if look < 0 || look >= n {
		return 0
	}
	return family / float64(n)
}
