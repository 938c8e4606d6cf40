package distribution

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a two-sided confidence interval.
type Interval struct {
	Lo, Hi     float64
	Estimate   float64 // the point estimate the interval is around
	Confidence float64 // e.g. 0.95
	N          int     // sample size (or trials)
	Method     string
}

// Contains reports whether x lies in [Lo, Hi].
func (iv Interval) Contains(x float64) bool { return x >= iv.Lo && x <= iv.Hi }

// String prints e.g. "0.912 [0.897, 0.925] (95% Wilson, n=1200)".
func (iv Interval) String() string {
	return fmt.Sprintf("%.4g [%.4g, %.4g] (%g%% %s, n=%d)", iv.Estimate, iv.Lo, iv.Hi, iv.Confidence*100, iv.Method, iv.N)
}

func checkConfidence(c float64) {
	if !(c > 0 && c < 1) {
		panic(fmt.Sprintf("distribution: confidence %v out of (0, 1)", c))
	}
}

// Wilson returns the two-sided Wilson score interval for a proportion of k successes
// in n trials (goodput: requests that met their SLO), as
// scipy.stats.binomtest(k, n).proportion_ci(confidence, method="wilson"): with
// z = Φ⁻¹((1+confidence)/2), centre (k + z²/2)/(n + z²) and half-width
// z sqrt(k(n-k)/n + z²/4)/(n + z²); Lo is 0 when k = 0 and Hi is 1 when k = n.
// It panics unless 0 <= k <= n, n >= 1 and confidence is in (0, 1).
func Wilson(k, n int, confidence float64) (lo, hi float64) {
	iv := WilsonInterval(k, n, confidence)
	return iv.Lo, iv.Hi
}

// WilsonInterval is [Wilson] returning an [Interval] with a String for messages.
func WilsonInterval(k, n int, confidence float64) Interval {
	if n < 1 || k < 0 || k > n {
		panic(fmt.Sprintf("distribution: Wilson(%d, %d): want 0 <= k <= n, n >= 1", k, n))
	}
	checkConfidence(confidence)
	nf := float64(n)
	p := float64(k) / nf
	z := stdNormalQuantile(0.5 + 0.5*confidence)
	denom := 2 * (nf + z*z)
	center := (2*nf*p + z*z) / denom
	delta := z / denom * math.Sqrt(4*nf*p*(1-p)+z*z)
	lo, hi := center-delta, center+delta
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return Interval{Lo: lo, Hi: hi, Estimate: p, Confidence: confidence, N: n, Method: "Wilson"}
}

// StudentTCI returns the two-sided Student-t confidence interval for the mean of xs
// (e.g. one throughput per repeated run): mean ± t_{n-1,(1+c)/2} s/√n with s the sample
// standard deviation (divisor n-1), as scipy.stats.t.interval(c, n-1, loc=mean,
// scale=sem). It returns an error if fewer than two values are given.
func StudentTCI(xs []float64, confidence float64) (Interval, error) {
	checkConfidence(confidence)
	n := len(xs)
	if n < 2 {
		return Interval{}, fmt.Errorf("distribution: StudentTCI needs >= 2 values, got %d", n)
	}
	m, s := meanStd(xs)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.5 + 0.5*confidence)
	half := t * s / math.Sqrt(float64(n))
	return Interval{Lo: m - half, Hi: m + half, Estimate: m, Confidence: confidence, N: n, Method: "Student t"}, nil
}

// meanStd returns the mean and the sample standard deviation (divisor n-1).
func meanStd(xs []float64) (float64, float64) {
	n := float64(len(xs))
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= n
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	if len(xs) < 2 {
		return m, 0
	}
	return m, math.Sqrt(ss / (n - 1))
}

// DefaultBootstrapResamples is the number of resamples BootstrapQuantileCI uses when
// given 0.
const DefaultBootstrapResamples = 2000

// BootstrapQuantileCI returns a percentile-bootstrap confidence interval for the
// p-quantile ([Percentile]) of xs: it draws `resamples` resamples with replacement
// (0 = [DefaultBootstrapResamples]) from src (nil = the package default source, see
// [DefaultSeed]), computes each one's quantile, and returns the (1-c)/2 and (1+c)/2
// percentiles of those. Deterministic for a given src state. It returns an error for
// an empty sample.
func BootstrapQuantileCI(xs []float64, p, confidence float64, resamples int, src rand.Source) (Interval, error) {
	checkProb(p)
	checkConfidence(confidence)
	n := len(xs)
	if n == 0 {
		return Interval{}, fmt.Errorf("distribution: BootstrapQuantileCI of an empty sample")
	}
	if resamples <= 0 {
		resamples = DefaultBootstrapResamples
	}
	sorted := slices.Clone(xs)
	sortFloats(sorted)
	r := rng(src)
	qs := make([]float64, resamples)
	// Resampling indices into the sorted data and sorting the indices gives a sorted
	// resample without comparing floats.
	idx := make([]int, n)
	buf := make([]float64, n)
	for b := range qs {
		for i := range idx {
			idx[i] = r.IntN(n)
		}
		slices.Sort(idx)
		for i, j := range idx {
			buf[i] = sorted[j]
		}
		qs[b] = PercentileSorted(buf, p)
	}
	sortFloats(qs)
	a := (1 - confidence) / 2
	return Interval{
		Lo: PercentileSorted(qs, a), Hi: PercentileSorted(qs, 1-a),
		Estimate: PercentileSorted(sorted, p), Confidence: confidence, N: n,
		Method: fmt.Sprintf("bootstrap %s, %d resamples", FormatP(p), resamples),
	}, nil
}
