package distribution

import (
	"fmt"
	"math"
	"slices"
)

// Percentile returns the p-quantile of data, p in [0, 1], by numpy's default method
// ("linear", Hyndman & Fan type 7; what np.percentile(data, 100*p), vLLM and AIPerf
// report): with the data sorted as x[0..n-1] and h = (n-1)p, it interpolates linearly
// between x[floor(h)] and x[floor(h)+1], in the same floating-point steps as numpy, so
// results match it bit for bit. This is perfgate's one percentile definition.
//
// data need not be sorted and is not modified (it is copied; sort once and call
// [PercentileSorted] in loops). It returns NaN for empty data and panics if p is outside
// [0, 1].
func Percentile(data []float64, p float64) float64 {
	checkProb(p)
	if len(data) == 0 {
		return math.NaN()
	}
	s := slices.Clone(data)
	sortFloats(s)
	return PercentileSorted(s, p)
}

// PercentileSorted is [Percentile] for data already sorted ascending.
func PercentileSorted(sorted []float64, p float64) float64 {
	checkProb(p)
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i >= n-1 {
		return sorted[n-1]
	}
	t := h - lo
	a, b := sorted[i], sorted[i+1]
	diff := b - a
	// numpy's _lerp: a + diff*t, but b - diff*(1-t) when t >= 0.5
	if t >= 0.5 {
		return b - diff*(1-t)
	}
	return a + diff*t
}

// Quantiles returns Percentile(data, p) for each p, sorting data (a copy) once.
func Quantiles(data []float64, ps ...float64) []float64 {
	s := slices.Clone(data)
	sortFloats(s)
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = PercentileSorted(s, p)
	}
	return out
}

// FormatP formats a probability as a short percentile label: 0.99 → "p99",
// 0.999 → "p99.9", 0.5 → "p50".
func FormatP(p float64) string {
	return "p" + fmt.Sprintf("%g", math.Round(p*100*1e6)/1e6)
}
