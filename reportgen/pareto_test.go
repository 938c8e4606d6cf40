package reportgen

import (
	"regexp"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen/sweep"
)

func pt(label string, x, y float64) paretoPoint {
	return paretoPoint{Label: label, X: estimate{x, x, x}, Y: estimate{y, y, y}, Runs: 1}
}

// TestFrontier: a level beaten on both throughput and latency by another is off the
// frontier; for per-user rates higher is better on both axes.
func TestFrontier(t *testing.T) {
	pts := []paretoPoint{pt("1", 10, 5), pt("2", 20, 6), pt("3", 15, 7), pt("4", 30, 20), pt("5", 30, 25)}
	got := frontier(pts, true)
	want := []bool{true, true, false, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("lower latency: point %s on frontier = %v, want %v", pts[i].Label, got[i], want[i])
		}
	}
	got = frontier(pts, false) // higher y better: (30,25) beats everything at x <= 30
	for i, w := range []bool{false, false, false, false, true} {
		if got[i] != w {
			t.Errorf("higher is better: point %s on frontier = %v, want %v", pts[i].Label, got[i], w)
		}
	}
}

// TestParetoChartsOfRepeatedSweep: a sweep with three runs a level draws each level once
// with its run-to-run whiskers, marks the frontier, and draws the goodput SLO's TTFT
// limit as a line.
func TestParetoChartsOfRepeatedSweep(t *testing.T) {
	var pts []sweep.Point
	for rep := range 3 {
		for _, p := range sweepPoints() {
			m := p.Metrics
			m.SLO = map[string]float64{record.MetricTTFT: 120}
			sc := m.Scalars[record.MetricOutputTokenThroughput]
			sc.Value *= 1 + 0.02*float64(rep)
			m.Scalars = map[string]record.Scalar{record.MetricOutputTokenThroughput: sc, record.MetricRequestThroughput: m.Scalars[record.MetricRequestThroughput]}
			p.Metrics, p.Repeat = m, rep
			pts = append(pts, p)
		}
	}
	figs := paretoFigures("concurrency", pts)
	var ids []string
	for _, f := range figs {
		ids = append(ids, f.ID)
	}
	if strings.Join(ids, " ") != "pareto-ttft-tokens pareto-ttft-requests pareto-itl-tokens pareto-itl-requests" {
		t.Errorf("figures %v", ids)
	}
	svg := string(figs[0].SVG)
	// 5 levels × 2 series, not 15 runs × 2.
	if n := strings.Count(svg, "<circle"); n != 10 {
		t.Errorf("%d dots, want 10 (one a level a series)", n)
	}
	if n := strings.Count(svg, `class="interval"`); n != 10 {
		t.Errorf("%d interval whiskers, want 10", n)
	}
	if !regexp.MustCompile(`class="slo" data-value="120"`).MatchString(svg) || strings.Contains(string(figs[2].SVG), `class="slo"`) {
		t.Error("the TTFT SLO line is missing from the TTFT chart, or drawn on the ITL chart")
	}
	if !strings.Contains(svg, "on-frontier") || !strings.Contains(svg, `class="line frontier"`) || !strings.Contains(figs[0].Caption, "run-to-run range") {
		t.Error("no frontier marked, or no interval caption")
	}
}
