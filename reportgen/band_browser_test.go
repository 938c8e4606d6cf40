package reportgen

import (
	"io"
	"testing"
)

// TestTimeSeriesShadesWarmupInBrowser renders a run whose first 60 requests are
// warm-up in headless Chromium and checks, from the laid-out page, that every chart
// over time shades the warm-up window and the measured window: the warm-up band
// starts at the chart's left edge, the measured band starts where the first measured
// request was sent and ends at the right edge, neither is empty, and the warm-up is
// left of the measured start. A run without warm-up has no bands.
func TestTimeSeriesShadesWarmupInBrowser(t *testing.T) {
	b := sharedBrowser(t)
	dir := t.ArtifactDir()
	run := testRun()
	warm := run.Records
	for i := range 60 {
		warm[i].Warmup = true
	}
	type box struct{ X, W float64 }
	type chart struct {
		ID               string
		Warmup, Measured []box
		PlotLeft         float64
		PlotRight        float64
	}
	js := `(() => [...document.querySelectorAll("figure.chart")].filter(f => f.querySelector("svg.timeseries")).map(f => {
		const svg = f.querySelector("svg.timeseries");
		const box = r => { const b = r.getBoundingClientRect(); return {X: b.x, W: b.width}; };
		const axes = [...svg.querySelectorAll("line.axis")];
		const xAxis = axes.find(l => l.getAttribute("y1") === l.getAttribute("y2") && Number(l.getAttribute("x2")) - Number(l.getAttribute("x1")) > 100);
		const ax = xAxis.getBoundingClientRect();
		return {
			ID: f.id || (f.querySelector("[id]") || {}).id || "",
			Warmup: [...svg.querySelectorAll("g.band.warmup rect")].map(box),
			Measured: [...svg.querySelectorAll("g.band.measured rect")].map(box),
			PlotLeft: ax.x, PlotRight: ax.x + ax.width,
		};
	}))()`
	for _, c := range []struct {
		name  string
		write func(io.Writer) error
		bands bool
	}{
		{"run_report_warmup", func(w io.Writer) error { return WriteRunReport(w, warm, &run.Manifest, RunReportOptions{}) }, true},
		{"run_report_no_warmup", func(w io.Writer) error {
			return WriteRunReport(w, syntheticRun(300, 1), &run.Manifest, RunReportOptions{})
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, p := openReport(t, b, dir, c.name, c.write)
			var charts []chart
			if err := b.eval(ctx, p, js, &charts); err != nil {
				t.Fatal(err)
			}
			if len(charts) < 4 {
				t.Fatalf("%d charts over time, want at least 4 (TTFT, ITL, token and request throughput)", len(charts))
			}
			for i, ch := range charts {
				if !c.bands {
					if len(ch.Warmup)+len(ch.Measured) > 0 {
						t.Errorf("chart %d: %d warm-up and %d measured bands in a run without warm-up", i, len(ch.Warmup), len(ch.Measured))
					}
					continue
				}
				if len(ch.Warmup) != 1 || len(ch.Measured) != 1 {
					t.Errorf("chart %d: %d warm-up and %d measured bands, want one each", i, len(ch.Warmup), len(ch.Measured))
					continue
				}
				w, m := ch.Warmup[0], ch.Measured[0]
				const px = 1.5 // layout rounding
				switch {
				case w.W < 20 || m.W < 100:
					t.Errorf("chart %d: warm-up band %.0f px, measured %.0f px wide: want both visible, measured the wider", i, w.W, m.W)
				case abs(w.X-ch.PlotLeft) > px:
					t.Errorf("chart %d: warm-up band starts at %.1f, the plot at %.1f: want the first request at the left edge", i, w.X, ch.PlotLeft)
				case abs(m.X+m.W-ch.PlotRight) > px:
					t.Errorf("chart %d: measured band ends at %.1f, the plot at %.1f: want the last request at the right edge", i, m.X+m.W, ch.PlotRight)
				case !(w.X < m.X) || m.X < w.X+w.W-px-20:
					t.Errorf("chart %d: warm-up [%.0f, %.0f], measured from %.0f: want the measured window to start after the warm-up started, near its end", i, w.X, w.X+w.W, m.X)
				}
			}
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
