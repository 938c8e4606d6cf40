package reportgen

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/record"
)

// chartBox is one chart as the browser laid it out.
type chartBox struct {
	ID, Section                 string
	X, Y, W, H                  float64
	Bars, Lines, Dots, KS, SLOs int
	Frontier                    int
}

type pageLayout struct {
	Charts      []chartBox
	ScrollWidth float64
	Wide        []string // elements wider than the viewport
}

// layoutJS returns every chart's id, the h2 section it is under, its box and what its
// SVG holds, the page's scroll width, and any block wider than the viewport.
const layoutJS = `(() => {
	const out = {Charts: [], ScrollWidth: document.documentElement.scrollWidth, Wide: []};
	let section = "";
	for (const el of document.querySelectorAll("h2, section[data-section], figure.chart")) {
		if (el.tagName === "H2") { section = el.textContent.trim(); continue; }
		if (el.tagName === "SECTION") { section = el.dataset.section; continue; }
		const r = el.getBoundingClientRect();
		const q = s => el.querySelectorAll(s).length;
		out.Charts.push({ID: el.id, Section: section, X: r.left + scrollX, Y: r.top + scrollY, W: r.width, H: r.height,
			Bars: q("rect.bar"), Lines: q("path.line"), Dots: q("circle"), KS: q("g.ks-d"), SLOs: q("g.slo"), Frontier: q("circle.on-frontier")});
	}
	for (const el of document.querySelectorAll("pre, table, p, figure, div.card")) {
		const sideways = el.tagName === "PRE" && el.scrollWidth > el.clientWidth + 1; // text cut, behind a scrollbar
		if (el.getBoundingClientRect().right > innerWidth + 1 || sideways) out.Wide.push(el.tagName + (el.id ? "#" + el.id : "") + " " + el.textContent.slice(0, 40));
	}
	return out;
})()`

// want is one chart a report must draw: its id, the section it belongs under, and
// what its SVG must hold.
type want struct {
	id, section          string
	bars, lines, ks, slo int // at least
	frontier             int
}

// TestChartPlacementInBrowser renders the run report (ISL/OSL with a target and a
// failed verdict with a long line), the comparison, the sweep report and the capture
// diff in headless Chromium at 1280 px and checks from the DOM that each chart is
// there, under its section, in order, laid out at a readable size without overlapping
// another, that the KS gaps, frontiers and SLO lines are drawn where expected, and that
// nothing is wider than the window. Screenshots go to the test's artifact directory.
func TestChartPlacementInBrowser(t *testing.T) {
	b := sharedBrowser(t)
	dir := t.ArtifactDir()
	recs, sisl, sosl := chatRun(300)
	target := distribution.Length{Dist: distribution.MustSpec("normal:100,10").Distribution}
	checked := make([]int, len(sisl))
	for i := range sisl {
		checked[i] = sisl[i] - 27
	}
	long := "ISL does not fit normal:100,10: " + strings.Repeat("evidence-without-spaces-", 30)
	runOpts := RunReportOptions{Verdicts: []Verdict{{Pass: false, Text: long}},
		Lengths: &RunLengths{ServerISL: sisl, ServerOSL: sosl, ServerModes: map[string]int{record.ModeChatTemplateFallback: len(sisl)},
			ISL: LengthFit{Source: "server count", Lengths: checked, Target: target}}}
	a, bb := compareFixture()
	sweepPts := sweepPoints()
	for i := range sweepPts {
		sweepPts[i].Metrics.SLO = map[string]float64{record.MetricTTFT: 60}
	}
	diff := DiffPrompts(prompts("user: a", "user: b", "user: c d"), prompts("user: c e", "user: a", "user: x"), "A", "B")

	lengths := "Input and output lengths"
	reports := []struct {
		name   string
		write  func(io.Writer) error
		charts []want
	}{
		{"run_report", func(w io.Writer) error { return WriteRunReport(w, recs, nil, runOpts) }, []want{
			{id: "ttft-time", section: "Overview", lines: 2}, {id: "itl-time", section: "Overview", lines: 2},
			{id: "token-throughput", section: "Overview", lines: 1}, {id: "request-throughput", section: "Overview", lines: 1},
			{id: "isl-hist", section: lengths, bars: 10}, {id: "isl-ecdf", section: lengths, lines: 2, ks: 1}, {id: "isl-template", section: lengths, bars: 1},
			{id: "osl-hist", section: lengths, bars: 10}, {id: "osl-ecdf", section: lengths, lines: 1},
			{id: "latency-hist", section: "Latency distributions", bars: 10}, {id: "latency-ecdf", section: "Latency distributions", lines: 1},
			{id: "ttft-hist", section: "Latency distributions", bars: 10}, {id: "ttft-ecdf", section: "Latency distributions", lines: 1},
			{id: "itl-hist", section: "Latency distributions", bars: 10}, {id: "itl-ecdf", section: "Latency distributions", lines: 1},
			{id: "error-timeline", section: "Errors", bars: 1},
		}},
		{"compare_report", func(w io.Writer) error { return WriteCompareReport(w, a, bb, CompareOptions{}) }, []want{
			{id: "isl-hist", section: lengths, bars: 20, lines: 0}, {id: "isl-ecdf", section: lengths, lines: 2, ks: 1},
			{id: "osl-hist", section: lengths, bars: 20}, {id: "osl-ecdf", section: lengths, lines: 2, ks: 1},
		}},
		{"sweep_report", func(w io.Writer) error { return WriteSweepReport(w, dir, "sweep", "concurrency", sweepPts) }, []want{
			{id: "sweep-throughput", lines: 1}, {id: "sweep-tokens", lines: 1}, {id: "sweep-ttft", lines: 2}, {id: "sweep-itl", lines: 2},
			{id: "pareto-ttft-tokens", lines: 1, slo: 1, frontier: 1}, {id: "pareto-ttft-requests", lines: 1, slo: 1, frontier: 1},
			{id: "pareto-itl-tokens", lines: 1, frontier: 1}, {id: "pareto-itl-requests", lines: 1, frontier: 1},
		}},
		{"capture_diff", func(w io.Writer) error { return WritePromptDiffReport(w, diff, 5) }, nil},
	}
	for _, r := range reports {
		t.Run(r.name, func(t *testing.T) {
			ctx, p := openReport(t, b, dir, r.name, r.write)
			var l pageLayout
			if err := b.eval(ctx, p, layoutJS, &l); err != nil {
				t.Fatal(err)
			}
			if l.ScrollWidth > 1280 || len(l.Wide) > 0 {
				t.Errorf("page is %v px wide (window 1280); wider than the window: %q", l.ScrollWidth, l.Wide)
			}
			for _, msg := range checkPlacement(l.Charts, r.charts) {
				t.Error(msg)
			}
			if r.name == "capture_diff" {
				var n struct{ Cards, Marks int }
				if err := b.eval(ctx, p, `({Cards: document.querySelectorAll("#diffs .card.diff").length, Marks: document.querySelectorAll("#diffs mark").length})`, &n); err != nil {
					t.Fatal(err)
				}
				if n.Cards != 2 || n.Marks != 4 {
					t.Errorf("capture diff shows %d differences with %d highlights, want 2 differing pairs, each side highlighted", n.Cards, n.Marks)
				}
			}
			png, err := b.screenshot(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, r.name+"_placement.png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checkPlacement compares the laid-out charts with the wanted ones: each present once,
// under its section, in document order, at least 300×150 px, inside the window, none
// overlapping another, with the elements its SVG must hold.
func checkPlacement(got []chartBox, wants []want) []string {
	var errs []string
	byID := map[string]chartBox{}
	pos := map[string]int{}
	for i, c := range got {
		if _, dup := byID[c.ID]; dup {
			errs = append(errs, "chart "+c.ID+" appears twice")
		}
		byID[c.ID], pos[c.ID] = c, i
		if c.W < 300 || c.H < 150 || c.X < 0 || c.X+c.W > 1280 {
			errs = append(errs, fmt.Sprintf("chart %s laid out at %.0f,%.0f size %.0fx%.0f (want at least 300x150 inside the 1280 px window)", c.ID, c.X, c.Y, c.W, c.H))
		}
		for _, d := range got[:i] {
			if c.X < d.X+d.W-1 && d.X < c.X+c.W-1 && c.Y < d.Y+d.H-1 && d.Y < c.Y+c.H-1 {
				errs = append(errs, fmt.Sprintf("charts %s and %s overlap", d.ID, c.ID))
			}
		}
	}
	last := -1
	for _, w := range wants {
		c, ok := byID[w.id]
		if !ok {
			errs = append(errs, "no chart "+w.id)
			continue
		}
		if pos[w.id] < last {
			errs = append(errs, "chart "+w.id+" is out of order")
		}
		last = pos[w.id]
		if w.section != "" && c.Section != w.section {
			errs = append(errs, fmt.Sprintf("chart %s is under %q, want %q", w.id, c.Section, w.section))
		}
		if c.Bars < w.bars || c.Lines < w.lines || c.KS < w.ks || c.SLOs < w.slo || c.Frontier < w.frontier {
			errs = append(errs, fmt.Sprintf("chart %s holds %d bars, %d lines, %d KS marks, %d SLO lines, %d frontier dots; want at least %d, %d, %d, %d, %d",
				w.id, c.Bars, c.Lines, c.KS, c.SLOs, c.Frontier, w.bars, w.lines, w.ks, w.slo, w.frontier))
		}
	}
	return errs
}

// TestCheckPlacementFails is the failure path of the placement check: a missing chart,
// one out of order, one under the wrong section, one too small and two overlapping are
// each reported.
func TestCheckPlacementFails(t *testing.T) {
	got := []chartBox{
		{ID: "b", Section: "S", X: 0, Y: 0, W: 600, H: 300, Lines: 1},
		{ID: "a", Section: "T", X: 300, Y: 100, W: 600, H: 300, Lines: 1},
		{ID: "c", Section: "S", X: 0, Y: 900, W: 100, H: 50},
	}
	errs := strings.Join(checkPlacement(got, []want{{id: "a", section: "S"}, {id: "b", section: "S"}, {id: "c", lines: 1}, {id: "d"}}), "\n")
	for _, w := range []string{"no chart d", "chart b is out of order", `chart a is under "T"`, "chart c laid out", "charts b and a overlap", "chart c holds 0 bars, 0 lines"} {
		if !strings.Contains(errs, w) {
			t.Errorf("placement errors lack %q:\n%s", w, errs)
		}
	}
}
