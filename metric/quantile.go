package metric

import (
	"math"
	"slices"

	"github.com/perfgate/perfgate/record"
)

// Quantile returns the p-quantile of data, p in [0, 1], by numpy's default method
// ("linear", Hyndman & Fan type 7; what np.percentile(data, 100*p), vLLM and AIPerf
// report): with the data sorted as x[0..n-1] and h = (n-1)p, it interpolates linearly
// between x[floor(h)] and x[floor(h)+1], in the same floating-point steps as numpy, so
// results match it bit for bit. This is perfgate's one quantile definition.
//
// data need not be sorted and is not modified (it is copied; sort once and call
// [QuantileSorted] in loops). It returns NaN for empty data and panics if p is outside
// [0, 1].
func Quantile(data []float64, p float64) float64 {
	checkProb(p)
	if len(data) == 0 {
		return math.NaN()
	}
	if slices.IsSorted(data) {
		return QuantileSorted(data, p)
	}
	s := slices.Clone(data)
	slices.Sort(s)
	return QuantileSorted(s, p)
}

// QuantileSorted is [Quantile] for data already sorted ascending.
func QuantileSorted(sorted []float64, p float64) float64 {
	checkProb(p)
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	lo, t := rank(n, p)
	if lo >= n-1 {
		return sorted[n-1]
	}
	return lerp(sorted[lo], sorted[lo+1], t)
}

// rank returns numpy's interpolation position for the p-quantile of n values:
// the lower order statistic's index floor((n-1)p) and the fraction t towards the next.
func rank(n int, p float64) (lo int, t float64) {
	h := float64(n-1) * p
	f := math.Floor(h)
	return int(f), h - f
}

// lerp is numpy's _lerp: a + (b-a)t, computed from b when t >= 0.5.
func lerp(a, b, t float64) float64 {
	diff := b - a
	if t >= 0.5 {
		return b - diff*(1-t)
	}
	return a + diff*t
}

func checkProb(p float64) {
	if !(p >= 0 && p <= 1) {
		panic("metric: quantile probability outside [0, 1]")
	}
}

// Mean returns the arithmetic mean of xs (NaN if empty).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Std returns the population standard deviation of xs (numpy's std with ddof=0, as
// AIPerf reports it): sqrt(Σ(x-mean)²/n), two-pass. NaN if xs is empty.
func Std(xs []float64) float64 {
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)))
}

// Summarize returns xs's count, mean, population std ([Std]), min, max and the
// [record.StatPercentiles] ([Quantile]), labelled with unit. NaNs are left out; an
// empty xs gives a Stat with only Unit set. xs is not modified.
func Summarize(xs []float64, unit string) record.Stat {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	return summarizeOwned(s, unit)
}

// summarizeOwned is Summarize for a NaN-free slice the caller gives up (it is sorted).
func summarizeOwned(s []float64, unit string) record.Stat {
	st := record.Stat{Unit: unit, Count: len(s)}
	if len(s) == 0 {
		return st
	}
	slices.Sort(s)
	st.Avg, st.Std = Mean(s), Std(s)
	st.Min, st.Max = s[0], s[len(s)-1]
	setPercentiles(&st, func(p float64) float64 { return QuantileSorted(s, p) })
	return st
}

func setPercentiles(st *record.Stat, q func(float64) float64) {
	st.P1, st.P5, st.P10, st.P25, st.P50 = q(0.01), q(0.05), q(0.10), q(0.25), q(0.50)
	st.P75, st.P90, st.P95, st.P99 = q(0.75), q(0.90), q(0.95), q(0.99)
}
