package check

import (
	"slices"

	"github.com/perfgate/perfgate/distribution"
)

// quantile returns the p-quantile of xs by numpy's default (linear) definition.
func quantile(xs []float64, p float64) float64 {
	if slices.IsSorted(xs) {
		return distribution.PercentileSorted(xs, p)
	}
	return distribution.Percentile(xs, p)
}

func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// wilson returns the Wilson score interval of k successes in n trials at the given
// two-sided confidence.
func wilson(k, n int, confidence float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	return distribution.Wilson(k, n, confidence)
}
