package check

import (
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
	// PriorCV is the between-run coefficient of variation to assume for a side that has
	// one run (a baseline's stored CV); 0 = none, and with one run on both sides the gate
	// is then inconclusive.
	PriorCV float64
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
	if !(g.PriorCV >= 0 && !math.IsInf(g.PriorCV, 0)) {
		bad = append(bad, fmt.Sprintf("prior CV %v is not a finite value >= 0", g.PriorCV))
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
	// Ratio is current/baseline, the ratio of the geometric means of the run statistics;
	// [Low, High] is its interval at 1-2·Alpha, each end a one-sided bound at Alpha (NaN
	// when it cannot be computed: one run per side and no PriorCV).
	Ratio, Low, High float64
	// PValue is Welch's t test on the logs of "no change" against "worse", one-sided
	// (NaN without an interval): below Alpha exactly when the interval lies on the worse
	// side of 1. Holm ranks the primary metrics by it.
	PValue float64
	// DF is the t reference's degrees of freedom (Welch–Satterthwaite; +Inf when both
	// variances were assumed from PriorCV).
	DF float64
	// Alpha is the level used, after Holm and sequential spending.
	Alpha float64
	// Baseline and Current are the run statistics compared, one per run, in run order.
	Baseline, Current []float64
	// CV is the between-run coefficient of variation used: pooled over both sides' runs,
	// or PriorCV. It is reported as a relative standard deviation (sqrt(e^s²-1) for the
	// standard deviation s of the logs; for small values the two are equal).
	CV float64
	// MDE is the smallest relative effect in the worse direction that these runs detect
	// at Alpha with the gate's Power (NaN without an interval).
	MDE float64
	// RunsForMargin is the number of runs per side that would detect Margin at Alpha with
	// the gate's Power, given CV (0 when unknown or more than 1000).
	RunsForMargin int
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
// and a current set of runs. The effect is the ratio of geometric means current/baseline;
// its interval at 1-2·Alpha (each end a one-sided bound at Alpha) comes from Welch's t on the logs of the run statistics (degrees
// of freedom by Welch–Satterthwaite; see [distribution.Welch]). With δ = Margin:
//
//   - [ChangeRegressed]: the interval excludes 1 on the worse side and the ratio is worse by at
//     least δ (r >= 1+δ for latencies, r <= 1-δ for throughputs);
//   - [ChangeImproved]: the interval excludes 1 on the better side and the ratio is better by at
//     least δ;
//   - [ChangeNoRegression]: otherwise, when the interval's worse end is worse by less than δ;
//   - [ChangeInconclusive]: anything else.
//
// A side with one run has no measured between-run noise: its variance is taken from
// PriorCV when given, else from the other side's runs (and a note says so); with one run
// on each side and no PriorCV there is no interval, and the answer is ChangeInconclusive. The
// minimum detectable effect (MDE) and the runs needed for δ are computed at Alpha and
// Power ([distribution.DetectableEffect]); a δ below the MDE adds a note (or, with
// StrictMDE, fails the verdict). CompareRuns never panics on data: bad settings or
// values give an Invalid comparison.
func CompareRuns(metric string, u Unit, baseline, current []float64, g RunGate) Comparison {
	g = g.withDefaults()
	c := Comparison{
		Metric: metric, Unit: u, Gate: g, Alpha: g.Alpha, Change: ChangeInconclusive,
		Baseline: append([]float64(nil), baseline...), Current: append([]float64(nil), current...),
		Ratio: math.NaN(), Low: math.NaN(), High: math.NaN(), PValue: math.NaN(), DF: math.NaN(),
		CV: math.NaN(), MDE: math.NaN(),
	}
	if bad := g.validate(); bad != "" {
		c.Invalid = bad
		return c
	}
	if len(baseline) == 0 || len(current) == 0 {
		c.Invalid = fmt.Sprintf("a side has no runs (baseline %d, current %d)", len(baseline), len(current))
		return c
	}
	lb, bad := logs(baseline, "baseline")
	if bad == "" {
		var lc []float64
		lc, bad = logs(current, "current")
		if bad == "" {
			c.compare(lb, lc)
			return c
		}
	}
	c.Invalid = bad + " (the ratio is taken on a log scale)"
	return c
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
func (c *Comparison) compare(lb, lc []float64) {
	g := c.Gate
	nb, nc := len(lb), len(lc)
	mb, vb := meanVar(lb)
	mc, vc := meanVar(lc)
	diff := mc - mb
	c.Ratio = math.Exp(diff)
	conf := 1 - 2*g.Alpha // each end a one-sided bound at Alpha
	// The prior's variance on the log scale: a lognormal with CV k has log-variance log(1+k²).
	prior := math.Log1p(g.PriorCV * g.PriorCV)
	var w distribution.WelchResult
	var pooled float64 // the between-run log-variance the CV and the planning use (every case below sets it)
	switch {
	case nb >= 2 && nc >= 2:
		w, _ = distribution.Welch(lb, lc, conf)
		pooled = ((float64(nb-1))*vb + float64(nc-1)*vc) / float64(nb+nc-2)
	case nb == 1 && nc == 1:
		if g.PriorCV == 0 {
			c.Notes = append(c.Notes, "between-run noise not measured: one run per side and no stored CV, so a change cannot be told from run-to-run noise; record a baseline of several runs (or give the gate a prior CV)")
			c.RunsForMargin = 0
			return
		}
		pooled = prior
		w = distribution.WelchFrom(diff, math.Sqrt(2*prior), math.Inf(1), conf, nb, nc)
		c.Notes = append(c.Notes, fmt.Sprintf("between-run noise not measured: one run per side; assumed the stored between-run CV %s", pct(g.PriorCV)))
	default: // one side has one run, the other several
		one, v, n := "current", vb, nb
		if nb == 1 {
			one, v, n = "baseline", vc, nc
		}
		if g.PriorCV > 0 {
			// The one-run side's variance is the prior (known: no degrees of freedom); the
			// other side's is estimated.
			se2 := v/float64(n) + prior
			df := se2 * se2 / ((v / float64(n)) * (v / float64(n)) / float64(n-1))
			if v == 0 {
				df = math.Inf(1)
			}
			w = distribution.WelchFrom(diff, math.Sqrt(se2), df, conf, nb, nc)
			pooled = (float64(n-1)*v + prior) / float64(n)
			c.Notes = append(c.Notes, fmt.Sprintf("between-run noise of the %s not measured (one run); assumed the stored between-run CV %s", one, pct(g.PriorCV)))
		} else {
			// Assume the one-run side varies as much as the other: a pooled estimate with
			// the other side's n-1 degrees of freedom.
			w = distribution.WelchFrom(diff, math.Sqrt(v*(1/float64(n)+1)), float64(n-1), conf, nb, nc)
			pooled = v
			c.Notes = append(c.Notes, fmt.Sprintf("between-run noise of the %s not measured (one run); assumed it varies as the %d %s runs do", one, n, other(one)))
		}
	}
	c.DF = w.DF
	// One-sided p of "worse", from the two-sided one by symmetry.
	toward := w.T
	if g.HigherIsBetter {
		toward = -w.T
	}
	c.PValue = w.PValue / 2
	if toward < 0 || toward == 0 && w.SE == 0 {
		c.PValue = 1 - w.PValue/2
	}
	c.Low, c.High = math.Exp(w.Lo), math.Exp(w.Hi)
	c.CV = math.Sqrt(math.Expm1(pooled))
	c.MDE = 0
	if w.SE > 0 {
		// The one-sided test at Alpha is the two-sided one at 2·Alpha less its far tail,
		// which is negligible at any useful power.
		c.MDE = g.relative(distribution.DetectableEffect(w.SE, w.DF, 2*g.Alpha, g.Power))
	}
	c.RunsForMargin = distribution.RunsForEffect(math.Sqrt(pooled), g.marginLog(), 2*g.Alpha, g.Power, maxRunsForMargin)
	c.Change = c.decide()
	if c.MDE > g.Margin {
		c.Notes = append(c.Notes, c.mdeNote())
	}
}

func other(side string) string {
	if side == "baseline" {
		return "current"
	}
	return "baseline"
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
	if c.RunsForMargin > 0 {
		s += fmt.Sprintf("; %d runs per side would detect it", c.RunsForMargin)
	} else {
		s += fmt.Sprintf("; more than %d runs per side would be needed", maxRunsForMargin)
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

// intervalText prints "99% interval +8.0% to +16.1%".
func (c Comparison) intervalText() string {
	if math.IsNaN(c.Low) {
		return "no interval"
	}
	return fmt.Sprintf("%s%% interval %s to %s", sig3((1-2*c.Alpha)*100), signedPct(c.Low-1), signedPct(c.High-1))
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
		if c.RunsForMargin > max(len(c.Baseline), len(c.Current)) {
			v.Summary += fmt.Sprintf(" (about %d runs per side would)", c.RunsForMargin)
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
		gm := math.NaN()
		if l, bad := logs(xs, ""); bad == "" {
			m, _ := meanVar(l)
			gm = math.Exp(m)
		}
		return fmt.Sprintf("%s   (%d %s, geometric mean %s)", strings.Join(parts, " "), len(xs), plural(len(xs), "run", "runs"), c.Unit.Format(gm))
	}
	ev := []Line{{"baseline", runs(c.Baseline)}, {"current", runs(c.Current)}}
	if math.IsNaN(c.Low) {
		ev = append(ev, Line{"ratio", fmt.Sprintf("%.4g (current/baseline, ratio of geometric means); no interval", c.Ratio)})
	} else {
		ev = append(ev, Line{"ratio", fmt.Sprintf("%.4g (current/baseline, ratio of geometric means), %s%% interval [%.4g, %.4g]; Welch t on log run statistics, df=%.3g, one-sided p(worse)=%s",
			c.Ratio, sig3((1-2*c.Alpha)*100), c.Low, c.High, c.DF, pvalue(c.PValue))})
		noise := fmt.Sprintf("between-run CV %s; minimum detectable effect %s at alpha %s and power %s", pct(c.CV), pct(c.MDE), sig3(c.Alpha), pct(g.Power))
		if c.RunsForMargin > 0 {
			noise += fmt.Sprintf("; %d runs per side detect %s", c.RunsForMargin, pct(g.Margin))
		}
		ev = append(ev, Line{"noise", noise})
	}
	dir := "higher"
	if g.HigherIsBetter {
		dir = "lower"
	}
	ev = append(ev, Line{"rule", fmt.Sprintf("regressed if the %s%% interval excludes no change and the ratio is %s by >= %s; no regression if its worse end is within %s; otherwise inconclusive (each a one-sided test at alpha %s%s)",
		sig3((1-2*c.Alpha)*100), dir, pct(g.Margin), pct(g.Margin), sig3(c.Alpha), primaryText(c.Primary))})
	for _, n := range c.Notes {
		ev = append(ev, Line{"note", n})
	}
	return ev
}

func primaryText(p bool) string {
	if p {
		return ", a primary metric"
	}
	return ""
}

// Series is one metric's input to [CompareFamily].
type Series struct {
	Metric            string
	Unit              Unit
	Baseline, Current []float64
	Gate              RunGate
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
// A primary comparison with no interval counts as p = 1. Results are in input order.
func CompareFamily(familyAlpha float64, series []Series) []Comparison {
	if familyAlpha == 0 {
		familyAlpha = DefaultAlpha
	}
	out := make([]Comparison, len(series))
	var prim []int
	var ps []float64
	for i, s := range series {
		g := s.Gate
		if s.Primary || g.Alpha == 0 {
			g.Alpha = familyAlpha
		}
		out[i] = CompareRuns(s.Metric, s.Unit, s.Baseline, s.Current, g)
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
		c := CompareRuns(s.Metric, s.Unit, s.Baseline, s.Current, g)
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
// primary comparison is ChangeInconclusive (an invalid one counts as settled: more runs
// will not fix it). A sequential gate adds runs while it is false and looks remain.
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
			open = true
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
