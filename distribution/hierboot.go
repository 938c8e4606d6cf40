package distribution

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/perfgate/perfgate/metric"
)

// HierarchicalBootstrap configures [HierarchicalBootstrapRatio].
type HierarchicalBootstrap struct {
	// Stat is the run statistic computed from one run's per-request values in request
	// order, e.g. the median; it must be positive. nil = the median by [metric.Quantile].
	Stat func(values []float64) float64
	// Block is the length of the blocks of consecutive requests resampled within a run
	// (0 = ceil(n^(1/3)) for a run of n requests, the usual order of a block bootstrap's
	// block length). Requests served together share the server's state, so neighbours
	// are correlated; resampling blocks keeps that correlation. 1 = requests resampled
	// independently.
	Block int
	// Resamples is the number of bootstrap resamples (0 = DefaultBootstrapResamples).
	Resamples int
	// Confidence of the percentile interval (0 = 0.99).
	Confidence float64
	// Src draws the resamples (nil = the package default source, see [DefaultSeed]).
	Src rand.Source
}

// HierarchicalBootstrapRatio is the documented cross-check of the run-level regression
// gate's Welch interval: a two-level percentile bootstrap of the ratio of geometric means
// current/baseline of a run statistic. baseline and current hold, per run, the
// per-request values in request order. Each resample
//
//  1. draws, for each side separately, as many runs as the side has, with replacement
//     (level 1: between-run noise);
//  2. rebuilds each drawn run of n requests from moving blocks of Block consecutive
//     requests, each starting uniformly in [0, n-Block], concatenated and cut to n
//     (level 2: within-run noise, keeping the correlation of neighbouring requests);
//  3. computes Stat of each rebuilt run, and the ratio exp(mean log Stat(current) -
//     mean log Stat(baseline)).
//
// The interval is the (1-c)/2 and (1+c)/2 quantiles ([metric.Quantile]) of the resampled
// ratios; Estimate is the ratio on the data as recorded. The uniform draws are consumed
// in a fixed order (per resample: baseline then current; per drawn run: the run index,
// then the block starts), index = floor(u·k) for u uniform in [0, 1), so a numpy
// implementation fed the same uniforms reproduces it exactly (runs_scipy_test.go).
//
// With few runs the first level sees few distinct values, so the interval is
// anti-conservative for K < 10 or so; it is a cross-check of the t interval's width and
// of the log-normal assumption, not the gate's rule. It returns an error for a side with
// no runs, a run with no requests, or a statistic that is not positive and finite.
func HierarchicalBootstrapRatio(baseline, current [][]float64, h HierarchicalBootstrap) (Interval, error) {
	r := rng(h.Src)
	return hierBootstrap(baseline, current, h, r.Float64)
}

func hierBootstrap(baseline, current [][]float64, h HierarchicalBootstrap, uniform func() float64) (Interval, error) {
	if h.Stat == nil {
		h.Stat = func(v []float64) float64 { return metric.Quantile(v, 0.5) }
	}
	if h.Resamples <= 0 {
		h.Resamples = DefaultBootstrapResamples
	}
	if h.Confidence == 0 {
		h.Confidence = 0.99
	}
	checkConfidence(h.Confidence)
	for _, side := range []struct {
		name string
		runs [][]float64
	}{{"baseline", baseline}, {"current", current}} {
		if len(side.runs) == 0 {
			return Interval{}, fmt.Errorf("distribution: hierarchical bootstrap: the %s has no runs", side.name)
		}
		for i, run := range side.runs {
			if len(run) == 0 {
				return Interval{}, fmt.Errorf("distribution: hierarchical bootstrap: %s run %d has no requests", side.name, i+1)
			}
		}
	}
	logStat := func(v []float64) (float64, error) {
		s := h.Stat(v)
		if !(s > 0) || math.IsInf(s, 0) {
			return 0, fmt.Errorf("distribution: hierarchical bootstrap: run statistic %v, want a positive finite number", s)
		}
		return math.Log(s), nil
	}
	meanLog := func(runs [][]float64) (float64, error) {
		sum := 0.0
		for _, run := range runs {
			l, err := logStat(run)
			if err != nil {
				return 0, err
			}
			sum += l
		}
		return sum / float64(len(runs)), nil
	}
	mb, err := meanLog(baseline)
	if err != nil {
		return Interval{}, err
	}
	mc, err := meanLog(current)
	if err != nil {
		return Interval{}, err
	}
	var buf []float64
	side := func(runs [][]float64) (float64, error) {
		sum := 0.0
		for range runs {
			run := runs[int(uniform()*float64(len(runs)))]
			n := len(run)
			L := h.Block
			if L <= 0 {
				L = int(math.Ceil(math.Cbrt(float64(n))))
			}
			L = min(L, n)
			buf = buf[:0]
			for len(buf) < n {
				s := int(uniform() * float64(n-L+1))
				buf = append(buf, run[s:s+L]...)
			}
			l, err := logStat(buf[:n])
			if err != nil {
				return 0, err
			}
			sum += l
		}
		return sum / float64(len(runs)), nil
	}
	ratios := make([]float64, h.Resamples)
	for b := range ratios {
		lb, err := side(baseline)
		if err != nil {
			return Interval{}, err
		}
		lc, err := side(current)
		if err != nil {
			return Interval{}, err
		}
		ratios[b] = math.Exp(lc - lb)
	}
	slices.Sort(ratios)
	a := (1 - h.Confidence) / 2
	return Interval{
		Lo: metric.QuantileSorted(ratios, a), Hi: metric.QuantileSorted(ratios, 1-a),
		Estimate: math.Exp(mc - mb), Confidence: h.Confidence, N: len(baseline) + len(current),
		Method: fmt.Sprintf("hierarchical bootstrap (runs, then blocks of requests), %d resamples", h.Resamples),
	}, nil
}
