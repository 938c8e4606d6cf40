package reportgen

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/servermetrics"
)

// overviewLayout is the overview as the browser laid it out in a window of W×H.
type overviewLayout struct {
	Top, Bottom, Left, Right float64 // the overview's box, in page coordinates
	W, H                     float64 // the window
	ScrollWidth              float64 // the page's
	Wide                     []string
	Charts, Numbers          int
	Answer                   bool
}

// overviewJS measures the overview: its box, what it holds, the page's width, and any
// element of the overview that reaches past the window's right edge.
const overviewJS = `(() => {
	const o = document.getElementById("overview");
	const r = o.getBoundingClientRect();
	const wide = [...o.querySelectorAll("*")].filter(e => e.getBoundingClientRect().right > innerWidth + 1)
		.map(e => e.tagName + (e.id ? "#" + e.id : "") + (e.className && e.className.baseVal === undefined ? "." + e.className : "")).slice(0, 8);
	return {Top: r.top + scrollY, Bottom: r.bottom + scrollY, Left: r.left, Right: r.right, W: innerWidth, H: innerHeight,
		ScrollWidth: document.documentElement.scrollWidth, Wide: wide,
		Charts: o.querySelectorAll("figure.chart svg.chart-svg").length, Numbers: o.querySelectorAll(".num").length,
		Answer: !!o.querySelector("#answer")};
})()`

// checkOverview says what is wrong with an overview laid out as l: it must hold the
// answer, the five numbers and charts charts, never reach past the window's right edge
// nor widen the page, and, when firstScreen, end within the window's height.
func checkOverview(l overviewLayout, charts int, firstScreen bool) []string {
	var errs []string
	if !l.Answer || l.Numbers != len(OverviewNumbers) || l.Charts != charts {
		errs = append(errs, fmt.Sprintf("overview holds answer=%v, %d numbers, %d charts; want the answer, %d numbers, %d charts", l.Answer, l.Numbers, l.Charts, len(OverviewNumbers), charts))
	}
	if firstScreen && l.Bottom > l.H {
		errs = append(errs, fmt.Sprintf("overview ends at %.0f px, below the first screen (%.0f px high)", l.Bottom, l.H))
	}
	if l.Left < 0 || l.Right > l.W+1 || l.ScrollWidth > l.W+1 || len(l.Wide) > 0 {
		errs = append(errs, fmt.Sprintf("overflows sideways in a %.0f px window: overview [%.0f, %.0f], page %.0f px wide, wider elements %q", l.W, l.Left, l.Right, l.ScrollWidth, l.Wide))
	}
	return errs
}

// TestCheckOverviewFails is the failure path of checkOverview: an overview that ends
// below the first screen, one that misses its numbers, and one that widens the page
// are each reported.
func TestCheckOverviewFails(t *testing.T) {
	good := overviewLayout{Top: 90, Bottom: 700, Right: 1248, W: 1280, H: 800, ScrollWidth: 1280, Charts: 4, Numbers: 5, Answer: true}
	if errs := checkOverview(good, 4, true); len(errs) > 0 {
		t.Fatalf("a fitting overview is reported: %q", errs)
	}
	for _, c := range []struct {
		name string
		edit func(*overviewLayout)
		want string
	}{
		{"below the first screen", func(l *overviewLayout) { l.Bottom = 900 }, "below the first screen"},
		{"no numbers", func(l *overviewLayout) { l.Numbers, l.Answer = 3, false }, "answer=false, 3 numbers"},
		{"sideways", func(l *overviewLayout) {
			l.W, l.Right, l.ScrollWidth, l.Wide = 390, 420, 600, []string{"TABLE#summary"}
		}, "overflows sideways in a 390 px window"},
	} {
		l := good
		c.edit(&l)
		if errs := strings.Join(checkOverview(l, 4, true), "\n"); !strings.Contains(errs, c.want) {
			t.Errorf("%s: errors %q, want %q", c.name, errs, c.want)
		}
	}
}

// gpuFixture is the GPU telemetry of two GPUs over a 15 s window, as
// servermetrics summarises a run with --gpu-telemetry.
func gpuFixture() *servermetrics.GPUSummary {
	f := func(v float64) *float64 { return &v }
	return &servermetrics.GPUSummary{Seconds: 15, Scrapes: 34, EnergyJ: 6750, PowerMeanW: 450, UtilMean: f(0.7), MemUsedMaxMiB: f(41000),
		GPUs: []servermetrics.GPU{
			{URL: "http://gpu-node:9400/metrics", ID: "0", UUID: "GPU-11111111-2222-3333-4444-555555555555", Model: "NVIDIA H100 80GB HBM3", Host: "gpu-node",
				Samples: 16, EnergyJ: 4500, EnergyFrom: "counter", PowerMeanW: 300, PowerMaxW: 330, UtilMean: f(0.8), MemUsedMeanMiB: f(40000), MemUsedMaxMiB: f(41000), MemTotalMiB: f(81559)},
			{URL: "http://gpu-node:9400/metrics", ID: "1", UUID: "GPU-66666666-7777-8888-9999-000000000000", Model: "NVIDIA H100 80GB HBM3", Host: "gpu-node",
				Samples: 16, EnergyJ: 2250, EnergyFrom: "counter", PowerMeanW: 150, PowerMaxW: 165, UtilMean: f(0.6), MemUsedMeanMiB: f(20000), MemUsedMaxMiB: f(21000), MemTotalMiB: f(81559)},
		}}
}

// TestOverviewFirstScreenInBrowser renders a run report (a failed assertion, errors,
// GPU telemetry) in headless Chromium and measures its overview at 1280×800, where it
// must hold the answer, the five numbers and the four charts over time and end within
// the first screen, and at a phone's 390×844, where neither it nor the page may
// scroll sideways (wide tables, the GPU table among them, scroll inside themselves).
// The GPU telemetry section lists both GPUs. A screenshot of the first
// screen at each size goes to the test's artifact directory.
func TestOverviewFirstScreenInBrowser(t *testing.T) {
	testutil.Long(t) // a browser page and two screenshots: make test keeps to its budget
	b := sharedBrowser(t)
	dir := t.ArtifactDir()
	run := testRun()
	long := "TTFT p99 = 52.1ms, want <= 40ms " + strings.Repeat("evidence-without-spaces-", 12)
	opts := RunReportOptions{Title: "perfgate: synthetic (concurrency 4)", Mark: "FAIL", Headline: "FAIL: 1 of 3 assertion(s)",
		Verdicts: []Verdict{{Pass: false, Text: long}, {Pass: true, Text: "error_rate <= 0.05"}, {Pass: true, Text: "tokenizer_match"}},
		GPU:      gpuFixture()}
	ctx, p := openReport(t, b, dir, "run_report_overview", func(w io.Writer) error {
		return WriteRunReport(w, run.Records, &run.Manifest, opts)
	})
	var gpus int
	if err := b.eval(ctx, p, `document.querySelectorAll("#gpu-telemetry #gpus tbody tr").length`, &gpus); err != nil {
		t.Fatal(err)
	}
	if gpus != 2 {
		t.Errorf("the GPU telemetry section shows %d GPUs, want 2", gpus)
	}
	for _, size := range []struct {
		name        string
		w, h        int
		mobile      bool
		firstScreen bool
	}{
		{"desktop", 1280, 800, false, true},
		{"mobile", 390, 844, true, false},
	} {
		t.Run(size.name, func(t *testing.T) {
			if err := b.viewport(ctx, p, size.w, size.h, size.mobile); err != nil {
				t.Fatal(err)
			}
			var l overviewLayout
			if err := b.eval(ctx, p, overviewJS, &l); err != nil {
				t.Fatal(err)
			}
			if l.W != float64(size.w) {
				t.Fatalf("window is %.0f px wide, want %d", l.W, size.w)
			}
			for _, msg := range checkOverview(l, 4, size.firstScreen) {
				t.Error(msg)
			}
			t.Logf("%dx%d: overview %.0f–%.0f px, page %.0f px wide", size.w, size.h, l.Top, l.Bottom, l.ScrollWidth)
			png, err := b.screenshotScreen(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			shot := filepath.Join(dir, fmt.Sprintf("run_report_overview_%dx%d.png", size.w, size.h))
			if err := os.WriteFile(shot, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", shot)
		})
	}
}
