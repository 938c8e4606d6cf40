package validity

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
)

// arSeries builds n requests over 20 s whose TTFT follows an AR(1) process (phi, 5%
// noise; a slow spell persists, as on a real server) around 100 ms, times a linear
// drift of drift over the window.
func arSeries(rng *rand.Rand, n int, phi, drift float64) []Point {
	pts := make([]Point, n)
	e := 0.0
	for i := range pts {
		e = phi*e + 0.05*rng.NormFloat64()
		f := float64(i) / float64(n)
		v := 0.1 * (1 + drift*f) * (1 + e)
		pts[i] = Point{Sent: time.Duration(20 * f * float64(time.Second)), TTFT: v, ITL: v / 10}
	}
	return pts
}

// BenchmarkSteadyFalseAlarmAndPower measures the steady-state rule (Mann–Kendall with
// Hamed–Rao's correction and the 5% drift floor) beside the rule it replaces (plain
// Mann–Kendall at 5%, no correction, no floor) on seeded simulated runs of 400
// requests: false alarms on steady runs with independent 5% noise, and with
// autocorrelated noise (AR(1), phi 0.9 per request: slow spells that last), and power on
// autocorrelated runs that drift by 10% and 20%.
//
//	go test ./perftest/validity -run '^$' -bench SteadyFalseAlarm -benchtime 1x
func BenchmarkSteadyFalseAlarmAndPower(b *testing.B) {
	const trials = 400
	plain := func(pts []Point) bool { // the replaced rule: any significant trend
		s := Windows(pts)
		return distribution.MannKendall(s[0].Medians, distribution.TrendOptions{MaxLag: -1}).P < SteadyAlpha
	}
	for b.Loop() {
		rng := rand.New(rand.NewPCG(42, 7))
		var fa, faPlain, pow10, pow20, faIID, faIIDPlain int
		for range trials {
			iid := arSeries(rng, 400, 0, 0)
			if !Steady(iid, DefaultMaxDrift).Pass {
				faIID++
			}
			if plain(iid) {
				faIIDPlain++
			}
			steady := arSeries(rng, 400, 0.9, 0)
			if !Steady(steady, DefaultMaxDrift).Pass {
				fa++
			}
			if plain(steady) {
				faPlain++
			}
			if !Steady(arSeries(rng, 400, 0.9, 0.10), DefaultMaxDrift).Pass {
				pow10++
			}
			if !Steady(arSeries(rng, 400, 0.9, 0.20), DefaultMaxDrift).Pass {
				pow20++
			}
		}
		b.ReportMetric(float64(faIID)/trials, "false-alarm-iid")
		b.ReportMetric(float64(faIIDPlain)/trials, "false-alarm-iid-plain-MK")
		b.ReportMetric(float64(fa)/trials, "false-alarm")
		b.ReportMetric(float64(faPlain)/trials, "false-alarm-plain-MK")
		b.ReportMetric(float64(pow10)/trials, "power-10%")
		b.ReportMetric(float64(pow20)/trials, "power-20%")
	}
}
