package reportgen

import (
	"math"
	"slices"
)

// summary is the descriptive statistics of a sample, as the reports show them.
// Percentiles interpolate linearly between order statistics (numpy's default method),
// the standard deviation is the population one (numpy's ddof=0, as AIPerf reports).
type summary struct {
	N                                         int
	Mean, Std, Min, Max                       float64
	P1, P5, P10, P25, P50, P75, P90, P95, P99 float64
}

// summarize computes the summary of v, ignoring NaNs. The zero summary (N=0) is
// returned for an empty sample.
func summarize(v []float64) summary {
	s := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return summary{}
	}
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	mean := sum / float64(len(s))
	var ss float64
	for _, x := range s {
		ss += (x - mean) * (x - mean)
	}
	return summary{
		N: len(s), Mean: mean, Std: math.Sqrt(ss / float64(len(s))), Min: s[0], Max: s[len(s)-1],
		P1: pct(s, 0.01), P5: pct(s, 0.05), P10: pct(s, 0.10), P25: pct(s, 0.25), P50: pct(s, 0.50),
		P75: pct(s, 0.75), P90: pct(s, 0.90), P95: pct(s, 0.95), P99: pct(s, 0.99),
	}
}

// pct is numpy's linear-interpolation percentile of sorted data, p in [0,1].
func pct(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := p * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

func ints(v []int) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
