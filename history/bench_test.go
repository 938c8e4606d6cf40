package history

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
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
// failing when it is worse by more than the margin. It returns the first failing night.
func perMerge(x []float64, margin float64) int {
	for n := 20; n <= len(x); n++ {
		if x[n-1]/x[n-2]-1 > margin {
			return n
		}
	}
	return -1
}

type simulation struct {
	name                 string
	falseAlarms, series  int
	caught, delaySum     int
	delays               []int
	pmCaught, pmDelaySum int
}

// BenchmarkCheck measures `history check` (default detection, 5% margin) on synthetic
// nightly series at run-to-run CV 2%, beside the per-merge rule (newest vs previous,
// 5% margin): the share of 100-night flat series on which it ever fails (false alarm),
// and for a 5% and a 10% step at night 60, and a slow ramp (+0.25% a night from night
// 60), how often it fails by night 100 and how many nights after the change it first
// does (detection delay).
func BenchmarkCheck(b *testing.B) {
	const seeds = 200
	var sims []simulation
	for b.Loop() {
		sims = sims[:0]
		for _, sc := range []struct {
			name string
			gen  func(rng *rand.Rand) []float64
		}{
			{"flat", func(rng *rand.Rand) []float64 { return noisy(rng, 100, 100, 0.02) }},
			{"step 5%", func(rng *rand.Rand) []float64 {
				return append(noisy(rng, 60, 100, 0.02), noisy(rng, 40, 105, 0.02)...)
			}},
			{"step 10%", func(rng *rand.Rand) []float64 {
				return append(noisy(rng, 60, 100, 0.02), noisy(rng, 40, 110, 0.02)...)
			}},
			{"ramp 0.25%/night", func(rng *rand.Rand) []float64 {
				x := noisy(rng, 60, 100, 0.02)
				for i := range 40 {
					x = append(x, 100*(1+0.0025*float64(i+1))*(1+0.02*rng.NormFloat64()))
				}
				return x
			}},
		} {
			s := simulation{name: sc.name, series: seeds}
			for seed := range uint64(seeds) {
				x := sc.gen(rand.New(rand.NewPCG(seed, 42)))
				night, _ := nightly(x, "ttft_p50", Check{})
				pm := perMerge(x, DefaultMargin)
				if sc.name == "flat" {
					if night >= 0 {
						s.falseAlarms++
					}
					if pm >= 0 {
						s.pmCaught++
					}
					continue
				}
				if night > 60 {
					s.caught++
					s.delays = append(s.delays, night-60)
					s.delaySum += night - 60
				} else if night >= 0 {
					s.falseAlarms++ // failed before the change
				}
				if pm > 60 {
					s.pmCaught++
					s.pmDelaySum += pm - 60
				}
			}
			sims = append(sims, s)
		}
	}
	for _, s := range sims {
		if s.name == "flat" {
			b.ReportMetric(float64(s.falseAlarms)/float64(s.series), "flat-false-alarm/series")
			b.ReportMetric(float64(s.pmCaught)/float64(s.series), "flat-per-merge-false-alarm/series")
			b.Logf("%-17s history check: false alarm in %d of %d 100-night series (%.1f%%); per-merge rule: %d (%.1f%%)",
				s.name, s.falseAlarms, s.series, 100*float64(s.falseAlarms)/float64(s.series), s.pmCaught, 100*float64(s.pmCaught)/float64(s.series))
			continue
		}
		slices.Sort(s.delays)
		p90 := 0
		if len(s.delays) > 0 {
			p90 = s.delays[(len(s.delays)*9)/10-min(1, len(s.delays)*9/10)]
		}
		key := map[string]string{"step 5%": "step5", "step 10%": "step10", "ramp 0.25%/night": "ramp"}[s.name]
		b.ReportMetric(float64(s.caught)/float64(s.series), key+"-detected")
		b.ReportMetric(float64(s.delaySum)/float64(max(s.caught, 1)), key+"-delay-nights")
		b.Logf("%-17s history check: detected %d of %d by night 100 (%.0f%%), delay mean %.1f nights (p90 %d), %d failed before the change; per-merge rule: detected %d (%.0f%%)",
			s.name, s.caught, s.series, 100*float64(s.caught)/float64(s.series), float64(s.delaySum)/float64(max(s.caught, 1)), p90, s.falseAlarms,
			s.pmCaught, 100*float64(s.pmCaught)/float64(s.series))
	}
}

// BenchmarkDetect compares adding one result to a 1,000-result series incrementally
// (the saved state: a few windows are split again) with computing it all again.
func BenchmarkDetect(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	var x []float64
	for i := range 20 {
		x = append(x, noisy(rng, 50, 100*(1+0.03*float64(i%3)), 0.02)...)
	}
	_, st := DetectIncremental(x[:len(x)-1], Detection{}, State{})
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			Detect(x, Detection{})
		}
	})
	b.Run("incremental", func(b *testing.B) {
		for b.Loop() {
			DetectIncremental(x, Detection{}, st)
		}
	})
}

func ExampleDetect() {
	x := []float64{100, 101, 99, 100, 102, 98, 100, 101, 99, 100, 110, 111, 109, 110, 112, 108, 110, 111}
	for _, c := range Detect(x, Detection{}) {
		fmt.Printf("change at %d: %.0f → %.0f (%+.0f%%)\n", c.Index, c.Before, c.After, 100*c.Change())
	}
	// Output: change at 10: 100 → 110 (+10%)
}
