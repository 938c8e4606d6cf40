package check

import (
	"math"
	"slices"
)

// quantile returns the p-quantile of xs by numpy's default (linear) definition.
// TODO(P): use distribution.Percentile once it lands, so the definition lives in one place.
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := xs
	if !slices.IsSorted(s) {
		s = slices.Clone(xs)
		slices.Sort(s)
	}
	h := p * float64(len(s)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// wilson returns the Wilson score interval of k successes in n trials at the given
// two-sided confidence.
// TODO(P): use distribution.Wilson once it lands.
func wilson(k, n int, confidence float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	z := normQuantile(1 - (1-confidence)/2)
	p := float64(k) / float64(n)
	nf := float64(n)
	d := 1 + z*z/nf
	c := (p + z*z/(2*nf)) / d
	h := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / d
	return max(0, c-h), min(1, c+h)
}

// normQuantile is the standard normal quantile.
func normQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }
