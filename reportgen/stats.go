package reportgen

import "github.com/perfgate/perfgate/metric"

// summary is the descriptive statistics of a sample, as the reports show them.
// Percentiles interpolate linearly between order statistics (numpy's default method),
// the standard deviation is the population one (numpy's ddof=0, as AIPerf reports).
type summary struct {
	N                                         int
	Mean, Std, Min, Max                       float64
	P1, P5, P10, P25, P50, P75, P90, P95, P99 float64
}

// summarize computes the summary of v with [metric.Summarize], ignoring NaNs. The zero
// summary (N=0) is returned for an empty sample.
func summarize(v []float64) summary {
	st := metric.Summarize(v, "")
	if st.Count == 0 {
		return summary{}
	}
	return summary{
		N: st.Count, Mean: st.Avg, Std: st.Std, Min: st.Min, Max: st.Max,
		P1: st.P1, P5: st.P5, P10: st.P10, P25: st.P25, P50: st.P50,
		P75: st.P75, P90: st.P90, P95: st.P95, P99: st.P99,
	}
}

func ints(v []int) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
