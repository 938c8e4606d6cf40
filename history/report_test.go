package history

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

// reportTrends builds two metrics of one series: ttft_p50 with a 15% slowdown at
// result 30 of 36 (a regression), output_tps flat.
func reportTrends(t *testing.T) []*Trend {
	rng := rand.New(rand.NewPCG(8, 8))
	var rs []Result
	for i := range 36 {
		level := 0.1
		if i >= 30 {
			level = 0.115
		}
		r := Result{ID: int64(i + 1), Fingerprint: "fp", Scenario: "nightly <chat>", Commit: fmt.Sprintf("%07d", i), Created: t0.Add(time.Duration(i) * time.Hour)}
		for k := range 3 {
			r.Runs = append(r.Runs, Run{Run: k + 1, Stats: map[string]float64{"ttft_p50": level * (1 + 0.02*rng.NormFloat64()), "output_tps": 800 * (1 + 0.02*rng.NormFloat64())}})
		}
		if i == 33 {
			r.Verdicts = []Verdict{{Check: "quantile", Pass: false, Summary: "ttft p99 too slow"}}
		}
		rs = append(rs, r)
	}
	var out []*Trend
	for _, m := range []string{"ttft_p50", "output_tps"} {
		tr := NewTrend(rs, m)
		tr.Detect(Detection{}, State{})
		out = append(out, tr)
	}
	return out
}

func writeReport(t *testing.T) (string, string) {
	var b bytes.Buffer
	if err := WriteReport(&b, reportTrends(t), ReportOptions{Source: "history.db", Now: t0}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "history.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b.String()
}

func TestReportContents(t *testing.T) {
	_, page := writeReport(t)
	for _, want := range []string{
		`<h2 class="series">nightly &lt;chat&gt;`,                           // names are escaped
		`id="regressions">1 regression(s)`,                                  // the check's verdict at the top
		"ttft_p50 regressed by 1",                                           // its sentence
		`between commit 0000029 (result 30) and commit 0000030 (result 31)`, // the commit range
		`class="baseline"`, "Baseline 114ms since result 31",                // the current level since the change
		`fill="#d62728"`, // the result whose verdict failed
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(page, `class="change-point"`); n != 1 {
		t.Errorf("%d change points drawn, want 1 (ttft_p50's step; output_tps is flat)", n)
	}
	if n := strings.Count(page, `<g class="result">`); n != 72 {
		t.Errorf("%d result marks, want 36 × 2 metrics", n)
	}
	if strings.Contains(page, "<script") {
		t.Error("the report has a script: it must be static")
	}
}

// TestReportInChromium renders the report in headless Chromium: the DOM it builds
// has every chart, and the screenshot shows the regression's red change-point line
// and the blue result points (the SVG is drawn, not just present).
func TestReportInChromium(t *testing.T) {
	bin := testutil.Chromium(t)
	path, _ := writeReport(t)
	dir := t.TempDir()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(dir, "profile")}
	run := func(extra ...string) []byte {
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append(flags, extra...), "file://"+path)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
		}
		return out
	}
	dom := string(run("--dump-dom"))
	if n := strings.Count(dom, "<svg"); n != 2 {
		t.Errorf("the rendered DOM has %d charts, want 2", n)
	}
	if !strings.Contains(dom, "1 regression(s)") {
		t.Error("the rendered DOM lacks the regression summary")
	}
	shot := filepath.Join(dir, "shot.png")
	if p := os.Getenv("HISTORY_SHOT"); p != "" {
		shot = p
	}
	run("--screenshot="+shot, "--window-size=1280,1400")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	red, blue := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			switch {
			case near8(r, 0xc6) && near8(g, 0x28) && near8(bl, 0x28):
				red++
			case near8(r, 0x1f) && near8(g, 0x77) && near8(bl, 0xb4):
				blue++
			}
		}
	}
	if red < 50 || blue < 200 {
		t.Errorf("screenshot: %d red (change point) and %d blue (result) pixels; the charts did not render", red, blue)
	}
}

func near8(a, b uint32) bool { return a+12 >= b && a <= b+12 }
