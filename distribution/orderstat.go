package distribution

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
)

// Distribution-free confidence intervals of quantiles, from the order statistics of a
// sample: whatever the distribution, the number of sample values below the true
// p-quantile is Binomial(n, p), so the k-th smallest value bounds the quantile with a
// probability given by the binomial CDF. No bootstrap, no normal approximation; the
// price is that a tail quantile needs enough values for a bound to exist at all
// ([QuantileMinSamples]).

// binomCDF returns P(Bin(n, p) <= k) = I_{1-p}(n-k, k+1), the regularized incomplete
// beta function (exact to rounding at any n).
func binomCDF(k, n int, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	case p <= 0:
		return 1
	case p >= 1:
		return 0
	}
	return mathext.RegIncBeta(float64(n-k), float64(k+1), 1-p)
}

// binomQuantile returns the smallest k in [0, n] with P(Bin(n, p) <= k) >= c
// (scipy.stats.binom.ppf(c, n, p)), by bisection: the CDF is monotone in k.
func binomQuantile(c float64, n int, p float64) int {
	lo, hi := 0, n // the answer is in [lo, hi]
	for lo < hi {
		m := lo + (hi-lo)/2
		if binomCDF(m, n, p) >= c {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// QuantileMinSamples returns the smallest sample size n for which the order statistics
// give a one-sided distribution-free bound on the p-quantile at the given confidence:
// an upper bound (for a "pXX <= limit" claim: the maximum bounds the quantile when
// 1 - p^n >= confidence) when upper is true, else a lower bound (1 - (1-p)^n >=
// confidence). p99 at 95% needs 299 values for an upper bound; p50 needs 5. It panics
// unless p is in (0, 1) and confidence in (0, 1).
func QuantileMinSamples(p, confidence float64, upper bool) int {
	if !(p > 0 && p < 1) {
		panic(fmt.Sprintf("distribution: QuantileMinSamples: p = %v, want (0, 1)", p))
	}
	checkConfidence(confidence)
	q := p
	if !upper {
		q = 1 - p
	}
	n := int(math.Ceil(math.Log1p(-confidence) / math.Log(q)))
	// Guard the rounding of the logarithms: the definition decides.
	for n > 1 && 1-math.Pow(q, float64(n-1)) >= confidence {
		n--
	}
	for 1-math.Pow(q, float64(n)) < confidence {
		n++
	}
	return n
}

// QuantileBounds are the order statistics that bound a quantile: 1-based ranks into
// the sorted sample (0 = no such bound with this many values), and the coverage the
// pair achieves.
type QuantileBounds struct {
	N      int     // sample size
	P      float64 // the quantile level
	Lo, Hi int     // ranks of the lower and upper bound (1..N), 0 when none exists
	// Coverage is the exact probability that the interval [x(Lo), x(Hi)] (an absent
	// side open) contains the true p-quantile: at least the confidence asked for when
	// both bounds exist.
	Coverage float64
}

// QuantileRanks returns the ranks of the distribution-free confidence interval of the
// p-quantile of n values at the given two-sided confidence, as equal-tailed as the
// binomial allows: Lo is the largest rank with P(Bin(n,p) >= Lo) >= 1-(1-c)/2 and Hi
// the smallest with P(Bin(n,p) <= Hi-1) >= 1-(1-c)/2. A side that needs more values
// than n is 0 (see [QuantileMinSamples]; one-sided at confidence c equals two-sided
// at 2c-1).
func QuantileRanks(n int, p, confidence float64) QuantileBounds {
	checkConfidence(confidence)
	b := QuantileBounds{N: n, P: p}
	if n <= 0 || !(p > 0 && p < 1) {
		return b
	}
	tail := (1 - confidence) / 2
	// Upper: X(h) >= ξp unless at least h values fall below ξp: P = P(Bin <= h-1).
	if h := binomQuantile(1-tail, n, p) + 1; h <= n {
		b.Hi = h
	}
	// Lower: X(l) <= ξp when at least l values fall below it, with probability
	// P(Bin >= l) = 1 - P(Bin <= l-1): the largest l with P(Bin <= l-1) <= tail.
	if k := binomQuantile(tail, n, p); binomCDF(k, n, p) <= tail {
		b.Lo = k + 1 // CDF(k) equals tail exactly
	} else {
		b.Lo = k // k-1 is the largest with CDF <= tail; 0 when even CDF(0) > tail
	}
	if b.Lo > n {
		b.Lo = 0
	}
	lo, hi := 0.0, 1.0
	if b.Lo > 0 {
		lo = binomCDF(b.Lo-1, n, p)
	}
	if b.Hi > 0 {
		hi = binomCDF(b.Hi-1, n, p)
	}
	b.Coverage = hi - lo
	return b
}

// QuantileCI returns the distribution-free confidence interval of the p-quantile of
// sorted (ascending) at the given two-sided confidence: the order statistics of
// [QuantileRanks]. A side without a bound is -Inf or +Inf: with too few values, a
// tail quantile's upper end is not bounded by the data at all.
func QuantileCI(sorted []float64, p, confidence float64) Interval {
	b := QuantileRanks(len(sorted), p, confidence)
	iv := Interval{Lo: math.Inf(-1), Hi: math.Inf(1), Confidence: confidence, N: len(sorted), Method: "order statistics"}
	if b.Lo > 0 {
		iv.Lo = sorted[b.Lo-1]
	}
	if b.Hi > 0 {
		iv.Hi = sorted[b.Hi-1]
	}
	return iv
}
