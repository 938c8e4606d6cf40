package distribution

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Trend is the result of [MannKendall]: a test for a monotonic trend in a series (a
// time series of per-window medians), with Sen's slope as the trend's size.
type Trend struct {
	N int // series length
	// S is the Mann–Kendall statistic: the sum over pairs i < j of sign(x[j] - x[i]).
	S float64
	// VarS is S's variance under no trend, corrected for ties and (when the series is
	// autocorrelated) by Hamed and Rao's factor; VarS0 is the uncorrected variance.
	VarS, VarS0 float64
	// Factor is Hamed and Rao's variance correction n/n* (1 = no significant
	// autocorrelation).
	Factor float64
	// Z is the continuity-corrected normal score of S and P its two-sided p-value.
	Z, P float64
	// Slope is Sen's slope: the median of (x[j]-x[i])/(j-i) over pairs i < j, in the
	// series' unit per step; Intercept is median(x) - Slope·median(0..n-1).
	Slope, Intercept float64
}

// TrendOptions tune [MannKendall]'s autocorrelation correction.
type TrendOptions struct {
	// Alpha is the level at which a lag's autocorrelation counts as significant; 0 = 0.05.
	Alpha float64
	// MaxLag limits the lags considered (0 = all, n-1, as Hamed and Rao do; negative =
	// none: the plain Mann–Kendall test). On short series the far lags rest on a few
	// pairs each and swing the factor.
	MaxLag int
	// Conservative keeps the factor at 1 or more: negative autocorrelation never makes
	// the test more eager to find a trend.
	Conservative bool
}

// MannKendall tests xs for a monotonic trend with the Mann–Kendall test, its variance
// corrected for autocorrelation as Hamed and Rao (1998) do: the series is detrended by
// Sen's slope, its ranks' autocorrelations at lags 1..n-1 that are significant at
// o.Alpha (|ρk| > z(1-α/2)/√n) scale the variance by
// 1 + 2/(n(n-1)(n-2))·Σ (n-k)(n-k-1)(n-k-2)·ρk. Per-window medians of a latency are
// autocorrelated (a slow spell spans windows); without the correction the test finds
// "trends" in plain persistence. The zero TrendOptions is the paper's test (every lag,
// the factor as computed); a series shorter than 3 gives P = 1.
func MannKendall(xs []float64, o TrendOptions) Trend {
	alpha := o.Alpha
	if alpha == 0 {
		alpha = 0.05
	}
	n := len(xs)
	t := Trend{N: n, P: 1, Factor: 1}
	if n < 3 {
		return t
	}
	t.Slope, t.Intercept = SenSlope(xs)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			switch d := xs[j] - xs[i]; {
			case d > 0:
				t.S++
			case d < 0:
				t.S--
			}
		}
	}
	fn := float64(n)
	v := fn * (fn - 1) * (2*fn + 5)
	s := slices.Clone(xs)
	slices.Sort(s)
	for i := 0; i < n; {
		j := i
		for j < n && s[j] == s[i] {
			j++
		}
		if g := float64(j - i); g > 1 {
			v -= g * (g - 1) * (2*g + 5)
		}
		i = j
	}
	t.VarS0 = v / 18
	// Hamed–Rao: the ranks of the detrended series, their significant autocorrelations.
	det := make([]float64, n)
	for i, x := range xs {
		det[i] = x - t.Slope*float64(i+1)
	}
	r := ranks(det)
	bound := distuv.UnitNormal.Quantile(1-alpha/2) / math.Sqrt(fn)
	sum := 0.0
	for k, rho := range acf(r) {
		if o.MaxLag < 0 || o.MaxLag > 0 && k > o.MaxLag {
			break
		}
		if k == 0 || math.Abs(rho) <= bound {
			continue
		}
		m := fn - float64(k)
		sum += m * (m - 1) * (m - 2) * rho
	}
	t.Factor = 1 + 2/(fn*(fn-1)*(fn-2))*sum
	if o.Conservative && t.Factor < 1 {
		t.Factor = 1
	}
	t.VarS = t.VarS0 * t.Factor
	if t.VarS > 0 {
		switch {
		case t.S > 0:
			t.Z = (t.S - 1) / math.Sqrt(t.VarS)
		case t.S < 0:
			t.Z = (t.S + 1) / math.Sqrt(t.VarS)
		}
		t.P = 2 * distuv.UnitNormal.Survival(math.Abs(t.Z))
	}
	return t
}

// SenSlope returns Sen's (Theil–Sen) slope of xs against 0..n-1, the median of the
// pairwise slopes, and the intercept median(x) - slope·median(0..n-1).
func SenSlope(xs []float64) (slope, intercept float64) {
	n := len(xs)
	if n < 2 {
		if n == 1 {
			return 0, xs[0]
		}
		return 0, 0
	}
	d := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d = append(d, (xs[j]-xs[i])/float64(j-i))
		}
	}
	slope = Percentile(d, 0.5)
	return slope, Percentile(xs, 0.5) - slope*float64(n-1)/2
}

// ranks returns the average ranks (1-based, ties averaged) of xs, as
// scipy.stats.rankdata does.
func ranks(xs []float64) []float64 {
	n := len(xs)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case xs[a] < xs[b]:
			return -1
		case xs[a] > xs[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, n)
	for i := 0; i < n; {
		j := i
		for j < n && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1..j averaged
		for k := i; k < j; k++ {
			r[idx[k]] = avg
		}
		i = j
	}
	return r
}

// acf returns the sample autocorrelations of xs at lags 0..n-1 (the biased estimator:
// each lag's sum divided by n, normalised by lag 0).
func acf(xs []float64) []float64 {
	n := len(xs)
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	out := make([]float64, n)
	var c0 float64
	for k := 0; k < n; k++ {
		c := 0.0
		for i := 0; i+k < n; i++ {
			c += (xs[i] - mean) * (xs[i+k] - mean)
		}
		if k == 0 {
			c0 = c
		}
		if c0 == 0 {
			return out
		}
		out[k] = c / c0
	}
	return out
}
