package reportgen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen/sweep"
)

// sweepPoints fakes a concurrency sweep whose latency grows with load.
func sweepPoints() []sweep.Point {
	var pts []sweep.Point
	for i, c := range []float64{1, 2, 4, 8, 16} {
		m := metricsOf(syntheticRun(60, uint64(i+1)))
		for _, n := range []string{record.MetricTTFT, record.MetricITL} {
			s := m.Stats[n]
			s.P50 *= 1 + c/4
			s.P99 *= 1 + c/2
			m.Stats[n] = s
		}
		for _, n := range []string{record.MetricRequestThroughput, record.MetricOutputTokenThroughput} {
			sc := m.Scalars[n]
			sc.Value *= c / (1 + c/8)
			m.Scalars[n] = sc
		}
		pts = append(pts, sweep.Point{Load: c, Metrics: m, Pass: c <= 8, Dir: "/out/concurrency-" + itoa(int(c))})
		if c == 16 {
			pts[len(pts)-1].Note = "TTFT p99 = 500ms, want <= 250ms"
		}
	}
	return pts
}

func TestSweepReportGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSweepReport(&b, "/out", "concurrency sweep", "concurrency", sweepPoints()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`id="sweep-ttft"`, `id="pareto-ttft-tokens"`, `id="pareto-itl-requests"`, `class="line frontier"`, `href="concurrency-4/report.html"`, "4 passed", "TTFT p99 = 500ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep report lacks %q", want)
		}
	}
	golden(t, "sweep_report.html", b.Bytes())
	if err := WriteSweepReport(&b, "", "", "rate", nil); err == nil {
		t.Error("WriteSweepReport with no points = nil error, want one")
	}
}
