package history

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// nightly plays a nightly job over x: after each new result from the 20th on, the
// check runs on the series so far (incrementally, as `history add` + `history check`
// do). It returns the night (result count) the check first failed, and the index of
// the change point it named; -1 if it never failed.
func nightly(x []float64, metric string, c Check) (night, at int) {
	var rs []Result
	for i, v := range x {
		rs = append(rs, Result{ID: int64(i + 1), Runs: []Run{{Stats: map[string]float64{metric: v}}}})
	}
	var st State
	for n := 20; n <= len(x); n++ {
		tr := NewTrend(rs[:n], metric)
		st = tr.Detect(c.Detection, st)
		for _, f := range c.Findings(tr) {
			if f.Regression {
				return n, f.Point.Index
			}
		}
	}
	return -1, -1
}

// perMerge is the rule a history replaces: each result against the one before it,
// failing when it is worse by more than the margin. It returns whether night n (the
// result count) fails.
func perMerge(x []float64, n int, margin float64) bool { return x[n-1]/x[n-2]-1 > margin }

// upper95 is the Clopper–Pearson 95% upper bound of a rate of k in n.
func upper95(k, n int) float64 {
	if k >= n {
		return 1
	}
	return distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(0.975)
}

// BenchmarkCheck measures `history check` (default detection, 5% margin) on synthetic
// nightly series at run-to-run CV 2%, beside the per-merge rule it backs up (each
// result against the one before, 5% margin):
//   - flat series of 100 nights: how many series ever fail (false alarm), with the
//     Clopper–Pearson 95% upper bound, and the share of nights that fail;
//   - a 5% and a 10% step at night 60, and a ramp of +0.25% a night from night 60 (10%
//     after 40 nights): how often the check fails by night 100 and how many nights
//     after the change it first does (detection delay); for the per-merge rule, how
//     often it fails on the change's own night (a step) or on any ramp night.
func BenchmarkCheck(b *testing.B) {
	const flatSeeds, seeds = 1000, 200
	for b.Loop() {
		// Flat.
		series, nights, failedNights, pmNights := 0, 0, 0, 0
		for seed := range uint64(flatSeeds) {
			x := noisy(rand.New(rand.NewPCG(seed, 42)), 100, 100, 0.02)
			if night, _ := nightly(x, "ttft_p50", Check{}); night >= 0 {
				series++
				failedNights += len(x) - night + 1 // it fails every night from then on
			}
			for n := 20; n <= len(x); n++ {
				nights++
				if perMerge(x, n, DefaultMargin) {
					pmNights++
				}
			}
		}
		b.ReportMetric(float64(series)/flatSeeds, "false-alarm/series")
		b.Logf("%-18s history check: %d of %d 100-night series ever fail (%.1f%%, 95%% upper bound %.2f%%), %.3f%% of nights; per-merge rule: %.1f%% of nights fail",
			"flat", series, flatSeeds, 100*float64(series)/flatSeeds, 100*upper95(series, flatSeeds), 100*float64(failedNights)/float64(nights), 100*float64(pmNights)/float64(nights))
		for _, sc := range []struct {
			name, key string
			gen       func(rng *rand.Rand) []float64
		}{
			{"step 5%", "step5", func(rng *rand.Rand) []float64 {
				return append(noisy(rng, 60, 100, 0.02), noisy(rng, 40, 105, 0.02)...)
			}},
			{"step 10%", "step10", func(rng *rand.Rand) []float64 {
				return append(noisy(rng, 60, 100, 0.02), noisy(rng, 40, 110, 0.02)...)
			}},
			{"ramp 0.25%/night", "ramp", func(rng *rand.Rand) []float64 {
				x := noisy(rng, 60, 100, 0.02)
				for i := range 40 {
					x = append(x, 100*(1+0.0025*float64(i+1))*(1+0.02*rng.NormFloat64()))
				}
				return x
			}},
		} {
			caught, early, pm := 0, 0, 0
			var delays []int
			for seed := range uint64(seeds) {
				x := sc.gen(rand.New(rand.NewPCG(seed, 42)))
				night, _ := nightly(x, "ttft_p50", Check{})
				switch {
				case night > 60:
					caught++
					delays = append(delays, night-60)
				case night >= 0:
					early++
				}
				if sc.key == "ramp" {
					for n := 61; n <= 100; n++ {
						if perMerge(x, n, DefaultMargin) {
							pm++
							break
						}
					}
				} else if perMerge(x, 61, DefaultMargin) {
					pm++
				}
			}
			slices.Sort(delays)
			mean, p90 := 0.0, 0
			for _, d := range delays {
				mean += float64(d)
			}
			if len(delays) > 0 {
				mean /= float64(len(delays))
				p90 = delays[min(len(delays)-1, len(delays)*9/10)]
			}
			b.ReportMetric(float64(caught)/seeds, sc.key+"-detected")
			b.ReportMetric(mean, sc.key+"-delay-nights")
			pmWhen := "on the change's night"
			if sc.key == "ramp" {
				pmWhen = "on some ramp night (mostly noise: see flat)"
			}
			b.Logf("%-18s history check: %d of %d detected by night 100 (%.0f%%), %.1f nights after the change on average (p90 %d), %d failed before it; per-merge rule: fails %s in %.0f%%",
				sc.name, caught, seeds, 100*float64(caught)/seeds, mean, p90, early, pmWhen, 100*float64(pm)/seeds)
		}
	}
}

// BenchmarkDetect compares, in the same run, adding one result to a series of 1,000
// and of 10,000 results incrementally (the saved state: a few windows are split again)
// with computing it all again, and reports the ratio.
func BenchmarkDetect(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		rng := rand.New(rand.NewPCG(1, 1))
		var x []float64
		for i := 0; len(x) < n; i++ {
			x = append(x, noisy(rng, 50, 100*(1+0.03*float64(i%3)), 0.02)...)
		}
		x = x[:n]
		_, st := DetectIncremental(x[:n-1], Detection{}, State{})
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var full, inc time.Duration
			for b.Loop() {
				t := time.Now()
				want := Detect(x, Detection{})
				full += time.Since(t)
				t = time.Now()
				got, _ := DetectIncremental(x, Detection{}, st)
				inc += time.Since(t)
				if !slices.Equal(indices(got), indices(want)) {
					b.Fatalf("incremental %v, full %v", indices(got), indices(want))
				}
			}
			b.ReportMetric(float64(full.Nanoseconds())/float64(b.N), "full-ns/op")
			b.ReportMetric(float64(inc.Nanoseconds())/float64(b.N), "incremental-ns/op")
			b.ReportMetric(float64(full)/float64(inc), "full/incremental")
		})
	}
}

func ExampleDetect() {
	x := []float64{100, 101, 99, 100, 102, 98, 100, 101, 99, 100, 110, 111, 109, 110, 112, 108, 110, 111}
	for _, c := range Detect(x, Detection{}) {
		fmt.Printf("change at %d: %.0f → %.0f (%+.0f%%)\n", c.Index, c.Before, c.After, 100*c.Change())
	}
	// Output: change at 10: 100 → 110 (+10%)
}
