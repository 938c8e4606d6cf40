package validity

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest/check"
)

// Point is one measured request on the time axis, as the steady-state check reads it.
type Point struct {
	Sent      time.Duration // its send time, from the run's start
	TTFT, ITL float64       // seconds; NaN when the request has none
}

// Series are the per-window medians the steady-state check tests.
type Series struct {
	Window  time.Duration // each window's length
	Start   time.Duration // the first window's start (run time)
	Metric  string        // "TTFT" or "ITL"
	Medians []float64     // seconds, one per window with enough requests (NaN: too few)
}

// Windows cuts pts (sorted by send time) into up to SteadyWindows equal windows of
// at least SteadyMinPerWindow requests each, and returns each metric's medians.
func Windows(pts []Point) []Series {
	k := min(SteadyWindows, len(pts)/SteadyMinPerWindow)
	if k < SteadyMinWindows {
		return nil
	}
	start, end := pts[0].Sent, pts[len(pts)-1].Sent
	w := (end - start) / time.Duration(k)
	if w <= 0 {
		return nil
	}
	var out []Series
	for _, m := range []string{"TTFT", "ITL"} {
		s := Series{Window: w, Start: start, Metric: m}
		buckets := make([][]float64, k)
		for _, p := range pts {
			i := min(int((p.Sent-start)/w), k-1)
			x := p.TTFT
			if m == "ITL" {
				x = p.ITL
			}
			if !math.IsNaN(x) {
				buckets[i] = append(buckets[i], x)
			}
		}
		for _, b := range buckets {
			if len(b) < SteadyMinPerWindow {
				s.Medians = append(s.Medians, math.NaN())
				continue
			}
			s.Medians = append(s.Medians, distribution.Percentile(b, 0.5))
		}
		out = append(out, s)
	}
	return out
}

// Steady tests whether the latency of a run (its measured requests, sorted by send
// time) is steady: per-window medians of TTFT and of ITL must show no trend that is
// both significant (Mann–Kendall, Hamed–Rao-corrected, at SteadyAlpha) and at least
// maxDrift of the median over the measured window (Sen's slope × the window span).
func Steady(pts []Point, maxDrift float64) check.Verdict {
	v := check.Verdict{Check: CheckSteady, Pass: true}
	series := Windows(pts)
	if series == nil {
		v.Summary = fmt.Sprintf("steady state not checked: %d requests give fewer than %d windows of %d", len(pts), SteadyMinWindows, SteadyMinPerWindow)
		return v
	}
	var bad []string
	for _, s := range series {
		var xs []float64
		for _, m := range s.Medians {
			if !math.IsNaN(m) {
				xs = append(xs, m)
			}
		}
		if len(xs) < SteadyMinWindows {
			continue
		}
		tr := distribution.MannKendall(xs, distribution.TrendOptions{Alpha: SteadyAlpha, MaxLag: len(xs) / 4, Conservative: true})
		med := distribution.Percentile(xs, 0.5)
		drift := 0.0
		if med > 0 {
			drift = tr.Slope * float64(len(xs)-1) / med
		}
		line := fmt.Sprintf("%d windows of %v from %v: median %s, drift %+.1f%% (Sen slope %s per window = %s/s), Mann–Kendall p=%.3g (Hamed–Rao factor %.2f)",
			len(xs), s.Window.Round(time.Millisecond), s.Start.Round(time.Millisecond), check.Seconds.Format(med), 100*drift,
			check.Seconds.Format(tr.Slope), check.Seconds.Format(tr.Slope/s.Window.Seconds()), tr.P, tr.Factor)
		v.Evidence = append(v.Evidence, check.Line{Label: s.Metric, Text: line})
		if tr.P < SteadyAlpha && math.Abs(drift) >= maxDrift {
			bad = append(bad, fmt.Sprintf("%s median drifted %+.1f%%", s.Metric, 100*drift))
			v.Value = max(v.Value, math.Abs(drift))
		}
	}
	v.Unit = check.Fraction
	if len(bad) == 0 {
		v.Summary = fmt.Sprintf("steady: no significant drift of %.0f%% or more", 100*maxDrift)
		return v
	}
	v.Pass, v.Status = false, check.Invalid
	v.Summary = "not steady: " + strings.Join(bad, ", ") + " over the measured window"
	v.Evidence = append(v.Evidence, check.Line{Label: "fix", Text: "warm up longer (--warmup-request-count, --warmup-duration), run at a load the server can sustain, or check the server for throttling"})
	return v
}
