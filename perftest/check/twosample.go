package check

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfgate/perfgate/distribution"
)

// DefaultAlpha is the significance level of the statistical checks when none is given.
const DefaultAlpha = 0.01

// DefaultMinEffect is the smallest relative change a regression check counts (5%).
const DefaultMinEffect = DefaultMargin // one practical margin for the pooled rule and the run-level gate

// SameDistribution checks that two samples of one quantity (ISL or OSL of two
// recordings, say AIPerf's and vLLM's) could come from the same distribution: it fails
// when the two-sample Kolmogorov–Smirnov test rejects that at level alpha (0 =
// DefaultAlpha). For integer data the test is conservative (it rejects less often than
// alpha), so a failure is real.
func SameDistribution(name string, u Unit, a, b []float64, labelA, labelB string, alpha float64) Verdict {
	const check = "same-distribution"
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if !(alpha > 0 && alpha < 1) {
		return invalid(check, "%s: alpha %v is outside (0, 1)", name, alpha)
	}
	if len(a) == 0 || len(b) == 0 {
		return invalid(check, "%s: a sample is empty (%s n=%d, %s n=%d)", name, labelA, len(a), labelB, len(b))
	}
	ks := distribution.KS2(a, b)
	v := Verdict{Check: check, Value: ks.PValue, Unit: None, Pass: !ks.Reject(alpha)}
	if v.Pass {
		v.Summary = fmt.Sprintf("%s: %s and %s are consistent with one distribution (KS D=%.3g, p=%s >= alpha=%g)",
			name, labelA, labelB, ks.Statistic, pvalue(ks.PValue), alpha)
	} else {
		v.Summary = fmt.Sprintf("%s: %s and %s differ: KS D=%.3g (n=%d, m=%d), p=%s < alpha=%g",
			name, labelA, labelB, ks.Statistic, ks.N, ks.M, pvalue(ks.PValue), alpha)
	}
	w := max(len(labelA), len(labelB))
	v.Evidence = []Line{
		{"quantiles", fmt.Sprintf("%-*s  %s   (n=%d)\n%-*s  %s   (n=%d)", w, labelA, quantileLine(a, u), len(a), w, labelB, quantileLine(b, u), len(b))},
		{"largest gap", fmt.Sprintf("at %s: ECDF %s=%.3f, %s=%.3f", u.Format(ks.At), labelA, ks.CDF1, labelB, ks.CDF2)},
	}
	return v
}

// Regression configures [NoRegression].
type Regression struct {
	// Quantile is the level compared between baseline and current (0 = the median).
	Quantile float64
	// MinEffect is the smallest relative increase that counts as a regression
	// (0 = DefaultMinEffect, 5%). Smaller shifts pass even when significant: noise
	// and harmless drift must not fail CI.
	MinEffect float64
	// Alpha is the significance level of the two-sample test (0 = DefaultAlpha).
	Alpha float64
	// HigherIsBetter flips the direction, for throughputs: a decrease regresses.
	HigherIsBetter bool
	// IgnoreWorkload names workload settings that may differ between the baseline and
	// the current run (perftest's AssertNoRegressionWith compares the two runs'
	// workloads first; see scenario.DiffWorkload), e.g. "mock" for a baseline recorded
	// against a mock of another speed. NoRegression itself does not read it.
	IgnoreWorkload []string
}

// NoRegression checks a current sample against a baseline of the same metric: it
// fails only if the change is both significant (two-sided Mann–Whitney U test, which is
// sensitive to a shift, p < Alpha) and large (the Quantile moved the wrong way by at
// least MinEffect). The two-sample Kolmogorov–Smirnov test is shown as evidence.
// A 10% slowdown over a few hundred requests fails; run-to-run noise passes.
func NoRegression(baseline, current Sample, r Regression) Verdict {
	const check = "regression"
	if r.Quantile == 0 {
		r.Quantile = 0.5
	}
	if r.MinEffect == 0 {
		r.MinEffect = DefaultMinEffect
	}
	if r.Alpha == 0 {
		r.Alpha = DefaultAlpha
	}
	b, c := baseline.clean(), current.clean()
	name := current.Name
	if !(r.Alpha > 0 && r.Alpha < 1) || r.MinEffect < 0 || !(r.Quantile > 0 && r.Quantile < 1) {
		return invalid(check, "%s regression: alpha %v, min effect %v, quantile %v out of range", name, r.Alpha, r.MinEffect, r.Quantile)
	}
	if len(b.Values) == 0 || len(c.Values) == 0 {
		return invalid(check, "%s regression: a sample is empty (baseline n=%d, current n=%d)", name, len(b.Values), len(c.Values))
	}
	qb, qc := quantile(sorted(b.Values), r.Quantile), quantile(sorted(c.Values), r.Quantile)
	effect := qc/qb - 1
	if qb == 0 {
		effect = math.Inf(int(math.Copysign(1, qc)))
		if qc == 0 {
			effect = 0
		}
	}
	worse := effect
	if r.HigherIsBetter {
		worse = -effect
	}
	ks := distribution.KS2(b.Values, c.Values)
	mw := distribution.MannWhitney(c.Values, b.Values)
	sig := mw.Reject(r.Alpha)
	big := worse >= r.MinEffect
	u := current.Unit
	pn := pname(r.Quantile)
	v := Verdict{Check: check, Value: effect, Unit: Fraction, Pass: !(sig && big)}
	change := fmt.Sprintf("%s %s vs baseline %s (%+.1f%%)", pn, u.Format(qc), u.Format(qb), effect*100)
	test := fmt.Sprintf("Mann-Whitney p=%s", pvalue(mw.PValue))
	switch {
	case !v.Pass:
		v.Summary = fmt.Sprintf("%s regressed: %s, want a change under %s; %s < alpha=%g", name, change, pct(r.MinEffect), test, r.Alpha)
	case sig && -worse >= r.MinEffect:
		v.Summary = fmt.Sprintf("%s improved by %s: %s; %s < alpha=%g", name, pct(math.Abs(effect)), change, test, r.Alpha)
	case big:
		v.Summary = fmt.Sprintf("%s: no significant regression: %s, but %s >= alpha=%g", name, change, test, r.Alpha)
	default:
		v.Summary = fmt.Sprintf("%s: no regression: %s, within %s", name, change, pct(r.MinEffect))
	}
	v.Evidence = []Line{
		{"baseline", fmt.Sprintf("%s   (n=%d)", quantileLine(b.Values, u), len(b.Values))},
		{"current", fmt.Sprintf("%s   (n=%d)", quantileLine(c.Values, u), len(c.Values))},
		{"test", fmt.Sprintf("Mann-Whitney U=%.0f, p=%s (%s), P(current > baseline)=%.2f; KS D=%.3g, p=%s, largest ECDF gap at %s: baseline %.3f, current %.3f",
			mw.U, pvalue(mw.PValue), mw.Method, mw.Effect, ks.Statistic, pvalue(ks.PValue), u.Format(ks.At), ks.CDF1, ks.CDF2)},
		{"rule", fmt.Sprintf("fail when Mann-Whitney p < %g and %s moves the wrong way by >= %s", r.Alpha, pn, pct(r.MinEffect))},
	}
	if !v.Pass {
		v.Evidence = append(v.Evidence, Line{"histogram", histogram2(b.Values, c.Values, u, "baseline", "current")})
	}
	return v
}

// histogram2 draws two samples' histograms over shared bins, side by side:
//
//	[80ms, 90ms)   baseline ████████ 40   current ██ 10
func histogram2(a, b []float64, u Unit, la, lb string) string {
	const bins, width = 8, 20
	lo := math.Min(quantile(sorted(a), 0.02), quantile(sorted(b), 0.02))
	hi := math.Max(quantile(sorted(a), 0.98), quantile(sorted(b), 0.98))
	if !(hi > lo) {
		return "(all values equal)"
	}
	step := (hi - lo) / bins
	count := func(xs []float64) []int {
		c := make([]int, bins)
		for _, x := range xs {
			i := min(max(int((x-lo)/step), 0), bins-1) // the edge bins take the tails
			c[i]++
		}
		return c
	}
	ca, cb := count(a), count(b)
	peak := 0.0
	for i := range bins {
		peak = math.Max(peak, math.Max(float64(ca[i])/float64(len(a)), float64(cb[i])/float64(len(b))))
	}
	if peak == 0 {
		peak = 1
	}
	bar := func(c, n int) string {
		w := int(math.Round(float64(c) / float64(n) / peak * width))
		return strings.Repeat("█", w) + strings.Repeat(" ", width-w)
	}
	var rows []string
	for i := range bins {
		rows = append(rows, fmt.Sprintf("%8s  %s %s %4d | %s %s %4d", u.Format(lo+float64(i)*step), la, bar(ca[i], len(a)), ca[i], lb, bar(cb[i], len(b)), cb[i]))
	}
	return strings.Join(rows, "\n") + "\n(bins start at the value shown and span p2–p98 of both samples; the edge bins include the tails)"
}
