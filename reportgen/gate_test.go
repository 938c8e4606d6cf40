package reportgen

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// The gate report has a section per metric with a dot per run, the interval and the
// δ band; a metric without an interval says so.
func TestWriteGateReport(t *testing.T) {
	r := GateReport{Title: "gate", Headline: "regression gate: regressed: TTFT p50 +12.0%", Where: []string{"baseline: base: 3 runs against http://127.0.0.1:1"},
		Metrics: []GateMetric{
			{Name: "TTFT p50", Unit: "s", Verdict: "TTFT p50 regressed: +12%", Change: "regressed", Gating: true,
				Baseline: []float64{0.050, 0.051, 0.049}, Current: []float64{0.056, 0.057, 0.055}, Ratio: 1.12, Low: 1.08, High: 1.16, Margin: 0.05},
			{Name: "request throughput", Unit: "req/s", Verdict: "request throughput: inconclusive", Pass: true, Change: "inconclusive",
				Baseline: []float64{10}, Current: []float64{9}, Ratio: 0.9, Low: math.NaN(), High: math.NaN(), Margin: 0.05, HigherIsBetter: true},
		}}
	var b bytes.Buffer
	if err := WriteGateReport(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`<h2 id="TTFT p50">TTFT p50</h2>`, `<p class="fail">TTFT p50 regressed:`,
		`baseline run 2: 51 ms`, `current run 3: 55 ms`, `class="band"`, `interval 8% to 16%`,
		`request throughput <span class="unit">(reported only)</span>`, `no interval (between-run noise not measured)`,
		`lower is worse`, `baseline: base: 3 runs against http://127.0.0.1:1`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("gate report lacks %q", want)
		}
	}
	if n := strings.Count(html, "<circle"); n != 3+3+1+1+1+1 { // runs, and one ratio dot per metric
		t.Errorf("%d circles, want 10", n)
	}
}
