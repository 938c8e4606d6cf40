package distribution

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfgate/perfgate/metric"
)

// Percentile returns the p-quantile of data, p in [0, 1], by numpy's default method
// ("linear", Hyndman & Fan type 7): it is [metric.Quantile], perfgate's one quantile
// definition, which states it in full and matches np.percentile bit for bit.
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
	return metric.QuantileSorted(s, p)
}

// PercentileSorted is [Percentile] for data already sorted ascending
// ([metric.QuantileSorted]).
func PercentileSorted(sorted []float64, p float64) float64 {
	checkProb(p)
	return metric.QuantileSorted(sorted, p)
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
