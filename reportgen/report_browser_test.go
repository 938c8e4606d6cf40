package reportgen

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

// TestReportsInBrowser loads each HTML report from disk in headless Chromium, checks
// that its charts rendered (SVG elements with bars and lines, with a real layout
// size), that the page logged no console errors, threw nothing and made no network
// request, and keeps a screenshot of each in the test's artifact directory
// (go test -artifacts -outputdir=DIR keeps them).
func TestReportsInBrowser(t *testing.T) {
	b := sharedBrowser(t)
	dir := t.ArtifactDir()
	run := testRun()
	a, bb := compareFixture()
	prefix, ideal := prefixRun()
	reports := []struct {
		name         string
		write        func(w io.Writer) error
		charts, bars int // at least
		lines        int // at least
		tables       []string
		long         bool // under make test-long only
	}{
		{"run_report", func(w io.Writer) error { return WriteRunReport(w, run.Records, &run.Manifest, RunReportOptions{}) }, 11, 20, 5, []string{"#summary", "#errors"}, false},
		{"run_report_prefix", func(w io.Writer) error {
			return WriteRunReport(w, prefix.Records, &prefix.Manifest, RunReportOptions{PrefixCache: ideal})
		}, 13, 20, 9, []string{"#summary", "#prefix-cache", "#prefix-ranks"}, true},
		{"compare_report", func(w io.Writer) error { return WriteCompareReport(w, a, bb, CompareOptions{}) }, 2, 20, 0, []string{"#tests", "#modes", "#vocab"}, false},
		{"sweep_report", func(w io.Writer) error { return WriteSweepReport(w, dir, "sweep", "concurrency", sweepPoints()) }, 5, 0, 7, []string{"#sweep"}, false},
	}
	for _, r := range reports {
		t.Run(r.name, func(t *testing.T) {
			if r.long {
				testutil.Long(t) // a second page and screenshot: make test keeps to its budget
			}
			ctx, p := openReport(t, b, dir, r.name, r.write)
			var dom struct {
				Charts, Bars, Lines, Sized int
				Tables                     map[string]bool
			}
			js := `(() => {
				const svgs = [...document.querySelectorAll("figure.chart svg.chart-svg")];
				const tables = {};
				for (const sel of ` + jsList(r.tables) + `) tables[sel] = !!document.querySelector(sel);
				return {
					Charts: svgs.length,
					Bars: document.querySelectorAll("svg.chart-svg rect.bar").length,
					Lines: document.querySelectorAll("svg.chart-svg path.line").length,
					Sized: svgs.filter(s => { const r = s.getBoundingClientRect(); return r.width > 200 && r.height > 100; }).length,
					Tables: tables,
				};
			})()`
			if err := b.eval(ctx, p, js, &dom); err != nil {
				t.Fatal(err)
			}
			if dom.Charts < r.charts || dom.Sized != dom.Charts {
				t.Errorf("%s: %d charts (%d laid out larger than 200x100), want at least %d, all laid out", r.name, dom.Charts, dom.Sized, r.charts)
			}
			if dom.Bars < r.bars || dom.Lines < r.lines {
				t.Errorf("%s: %d bars and %d lines, want at least %d and %d", r.name, dom.Bars, dom.Lines, r.bars, r.lines)
			}
			for _, sel := range r.tables {
				if !dom.Tables[sel] {
					t.Errorf("%s: no %s element", r.name, sel)
				}
			}
			png, err := b.screenshot(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(png) < 8 || string(png[1:4]) != "PNG" {
				t.Fatalf("screenshot is not a PNG (%d bytes)", len(png))
			}
			shot := filepath.Join(dir, r.name+".png")
			if err := os.WriteFile(shot, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", shot)
		})
	}
}

// TestBrowserHarnessSeesErrors is the failure path of the browser checks: a page that
// logs an error, throws, and requests something over the network is reported with all
// three (the request goes to a port browsers refuse, so nothing leaves the machine).
func TestBrowserHarnessSeesErrors(t *testing.T) {
	b := sharedBrowser(t)
	page := filepath.Join(t.TempDir(), "bad.html")
	html := `<!doctype html><html><body><svg class="chart-svg"><rect class="bar" width="5" height="5"/></svg>
<img src="http://127.0.0.1:9/x.png"><script>console.error("boom"); throw new Error("kaput");</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := b.open(ctx, fileURL(t, page))
	if err != nil {
		t.Fatal(err)
	}
	defer b.closePage(p)
	var n int
	if err := b.eval(ctx, p, `document.querySelectorAll("svg.chart-svg rect.bar").length`, &n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("bars = %d, want 1", n)
	}
	var console, exception, network bool
	for _, e := range p.Errors {
		switch {
		case len(e) > 8 && e[:8] == "console.":
			console = true
		case len(e) > 10 && e[:10] == "exception:":
			exception = true
		case len(e) > 8 && e[:8] == "network ":
			network = true
		}
	}
	if !console || !exception || !network {
		t.Errorf("errors = %q, want a console error, an exception and a network request", p.Errors)
	}
}

func jsList(v []string) string {
	s := "["
	for i, x := range v {
		if i > 0 {
			s += ","
		}
		s += `"` + x + `"`
	}
	return s + "]"
}
