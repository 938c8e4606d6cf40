package check

import (
	"fmt"
	"math"

	"github.com/perfgate/perfgate/distribution"
)

// Tail claims need samples: a quantile bound is read from the run's order statistics,
// and a tail quantile has no distribution-free bound at all until the run has enough
// requests (with fewer than 100, a "p99" is just the slowest request).

// QuantileNeed returns the requests a claim on the p-quantile needs for the order
// statistics to bound it one-sidedly at confidence (0 = [DefaultConfidence]): an upper
// bound for a "<=" claim (atMost), a lower bound for ">=". p99 <= X at 95% needs 299;
// 0 for p = 0 or 1 (the minimum and maximum are read, not estimated).
func QuantileNeed(p float64, atMost bool, confidence float64) int {
	if !(p > 0 && p < 1) {
		return 0
	}
	if confidence == 0 {
		confidence = DefaultConfidence
	}
	return distribution.QuantileMinSamples(p, confidence, atMost)
}

// Quantile returns the quantile a rule claims about and its direction; ok is false
// for rules that are not quantile bounds.
func (r Rule) Quantile() (metric Metric, p float64, atMost, ok bool) {
	return r.metric, r.p, r.atMost, r.kind == ruleQuantile
}

// Claims reports which quantile claims b makes on its P: an upper limit (MaxTime,
// Max) and a lower one (MinTime, Min).
func (b Bound) Claims() (atMost, atLeast bool) {
	return b.MaxTime > 0 || b.Max != 0, b.MinTime > 0 || b.Min != 0
}

// TailSamples is the verdict on whether n requests can support a claim on the
// p-quantile (see [QuantileNeed]): a passing [Decided] verdict when they can, else a
// failing one of [Status] Invalid ("p99 <= 250ms needs 299 requests at 95%
// one-sided; the run measured 100"). claim is the rule as written.
func TailSamples(claim string, p float64, atMost bool, n int, confidence float64) Verdict {
	if confidence == 0 {
		confidence = DefaultConfidence
	}
	need := QuantileNeed(p, atMost, confidence)
	v := Verdict{Check: "tail-samples", Value: float64(n), Unit: None, Pass: n >= need}
	side := "upper"
	if !atMost {
		side = "lower"
	}
	if v.Pass {
		v.Summary = fmt.Sprintf("%s: %d requests >= %d needed for a %g%% %s bound on %s", claim, n, need, confidence*100, side, pname(p))
		return v
	}
	v.Status = Invalid
	v.Summary = fmt.Sprintf("too few requests for %s: %d measured, %d needed", claim, n, need)
	v.Evidence = []Line{
		{"why", fmt.Sprintf("with fewer than %d values no order statistic is a %g%% %s bound on %s (distribution-free, binomial)", need, confidence*100, side, pname(p))},
		{"fix", fmt.Sprintf("run at least %d requests, or claim a lower quantile", need)},
	}
	return v
}

// quantileInterval is the evidence line of a quantile verdict: the distribution-free
// two-sided interval at [DefaultConfidence] of the p-quantile of sorted, with the
// sample size a missing side needs.
func quantileInterval(sorted []float64, p float64, u Unit) string {
	if !(p > 0 && p < 1) || len(sorted) == 0 {
		return ""
	}
	iv := distribution.QuantileCI(sorted, p, DefaultConfidence)
	f := func(x float64) string {
		if math.IsInf(x, 0) {
			return "unbounded"
		}
		return u.Format(x)
	}
	s := fmt.Sprintf("%g%% [%s, %s] (order statistics, n=%d)", DefaultConfidence*100, f(iv.Lo), f(iv.Hi), len(sorted))
	side := 1 - (1-DefaultConfidence)/2 // each side of a 95% interval is 97.5% one-sided
	if math.IsInf(iv.Hi, 1) {
		s += fmt.Sprintf("; an upper bound needs n >= %d", QuantileNeed(p, true, side))
	} else if math.IsInf(iv.Lo, -1) {
		s += fmt.Sprintf("; a lower bound needs n >= %d", QuantileNeed(p, false, side))
	}
	return s
}
