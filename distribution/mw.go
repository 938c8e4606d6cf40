package distribution

import (
	"fmt"
	"math"
)

// MWResult is the outcome of a Mann–Whitney U test.
type MWResult struct {
	U      float64 // U of the first sample: pairs (a, b) with a > b, ties counting 1/2
	PValue float64 // two-sided
	N, M   int     // sample sizes
	Z      float64 // standardized statistic (asymptotic method), NaN for exact
	Method string  // "exact" or "asymptotic"
	// Effect is U/(N·M), the probability that a value from the first sample exceeds
	// one from the second (ties counting 1/2): 0.5 means no shift.
	Effect float64
}

// Reject reports whether the null hypothesis is rejected at level alpha (p < alpha).
func (r MWResult) Reject(alpha float64) bool { return r.PValue < alpha }

// String is a one-line verdict for a failure message.
func (r MWResult) String() string {
	return fmt.Sprintf("Mann-Whitney U=%g p=%.4g (n=%d, m=%d, %s); P(a > b)=%.3f", r.U, r.PValue, r.N, r.M, r.Method, r.Effect)
}

// MannWhitney is the two-sided Mann–Whitney U (Wilcoxon rank-sum) test that a and b
// come from the same distribution, sensitive to a shift of one against the other
// (latency of a run against a baseline). It follows scipy.stats.mannwhitneyu(a, b)
// with its defaults: the exact distribution of U when either sample has at most 8
// values and there are no ties, otherwise the normal approximation with the tie
// correction and a continuity correction of 1/2. It panics on an empty sample or NaN.
func MannWhitney(a, b []float64) MWResult {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		panic("distribution: MannWhitney of an empty sample")
	}
	x, y := sortedCopy(a), sortedCopy(b)
	if hasNaN(x) || hasNaN(y) {
		panic("distribution: MannWhitney: NaN in sample")
	}
	// Walk the merged order one distinct value at a time: the tied group gets the
	// average of its ranks.
	r1 := 0.0
	tieTerm := 0.0
	ties := false
	pos := 0
	for i, j := 0, 0; i < n1 || j < n2; {
		var v float64
		if j >= n2 || (i < n1 && x[i] <= y[j]) {
			v = x[i]
		} else {
			v = y[j]
		}
		ci, cj := 0, 0
		for i < n1 && x[i] == v {
			i++
			ci++
		}
		for j < n2 && y[j] == v {
			j++
			cj++
		}
		t := ci + cj
		rank := float64(2*pos+t+1) / 2 // average of ranks pos+1..pos+t
		r1 += float64(ci) * rank
		if t > 1 {
			ties = true
			tf := float64(t)
			tieTerm += tf*tf*tf - tf
		}
		pos += t
	}
	N := n1 + n2
	f1, f2 := float64(n1), float64(n2)
	u1 := r1 - f1*(f1+1)/2
	u2 := f1*f2 - u1
	u := math.Max(u1, u2)
	res := MWResult{U: u1, N: n1, M: n2, Effect: u1 / (f1 * f2), Z: math.NaN()}
	if (n1 <= 8 || n2 <= 8) && !ties {
		res.Method = "exact"
		res.PValue = clip01(2 * mwuSF(int(u), n1, n2))
		return res
	}
	res.Method = "asymptotic"
	nf := float64(N)
	mu := f1 * f2 / 2
	s := math.Sqrt(f1 * f2 / 12 * ((nf + 1) - tieTerm/(nf*(nf-1))))
	z := (u - mu - 0.5) / s
	res.Z = z
	res.PValue = clip01(2 * 0.5 * math.Erfc(z/math.Sqrt2))
	return res
}

// mwuSF returns P(U >= u) for the exact null distribution of U with sample sizes m, n
// (no ties): the coefficients of the Gaussian binomial [m+n choose m]_q, built as
// Π_{i=1}^{s} (1 - q^{l+i})/(1 - q^i) with s = min(m, n), l = max(m, n).
func mwuSF(u, m, n int) float64 {
	s, l := min(m, n), max(m, n)
	size := s*l + 1
	if u <= 0 {
		return 1
	}
	if u >= size {
		return 0
	}
	c := make([]float64, size)
	c[0] = 1
	deg := 0
	for i := 1; i <= s; i++ {
		// multiply by (1 - q^{l+i})
		shift := l + i
		for k := min(deg+shift, size-1); k >= shift; k-- {
			c[k] -= c[k-shift]
		}
		deg += l
		// divide by (1 - q^i): c'_k = c_k + c'_{k-i}
		for k := i; k <= deg; k++ {
			c[k] += c[k-i]
		}
		// the quotient has degree deg; drop what the product left above it
		clear(c[min(deg+1, size):])
	}
	// P(U >= u) = P(U <= mn - u) by symmetry, as SciPy computes it.
	total := 0.0
	for _, v := range c {
		total += v
	}
	k := s*l - u
	cum := 0.0
	for i := 0; i <= k; i++ {
		cum += c[i]
	}
	return cum / total
}

func hasNaN(x []float64) bool {
	for _, v := range x {
		if v != v {
			return true
		}
	}
	return false
}
