package reportgen

import (
	"bytes"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// overviewTileRE matches one number of the overview: metric, statistic, exact value, text.
var overviewTileRE = regexp.MustCompile(`<div class="num" data-metric="([^"]+)"(?: data-stat="([^"]+)")?(?: data-value="([^"]+)")?><span class="k">[^<]*</span><span class="v">([^<]*)</span>`)

type tile struct{ metric, stat, value, text string }

func overviewTilesOf(page string) []tile {
	var out []tile
	for _, m := range overviewTileRE.FindAllStringSubmatch(page, -1) {
		out = append(out, tile{m[1], m[2], m[3], html.UnescapeString(m[4])})
	}
	return out
}

// TestOverviewNumbers: the overview shows the five numbers in order, each the metrics'
// own value (p99 of the three latencies, the output token throughput, the error rate as a
// percentage) with its exact value in data-value, the answer with its mark first, and
// the charts over time inside it; a run without streams shows N/A for the token
// latencies and gives no value.
func TestOverviewNumbers(t *testing.T) {
	recs := syntheticRun(120, 2)
	m := metric.Compute(recs, metric.Options{}, nil) // as metrics.json has them
	s := m.Stats[record.MetricTTFT]
	s.P99 = 12345.678 // a value only the metrics carry
	m.Stats[record.MetricTTFT] = s
	var b bytes.Buffer
	if err := WriteRunReport(&b, recs, nil, RunReportOptions{Metrics: &m, Mark: "FAIL", Headline: "FAIL: 1 of 2 assertion(s)"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	want := []struct {
		metric, stat string
		v            float64
		text         string
	}{
		{record.MetricTTFT, "p99", 12345.678, "12,345.68"},
		{record.MetricITL, "p99", m.Stats[record.MetricITL].P99, num(m.Stats[record.MetricITL].P99)},
		{record.MetricRequestLatency, "p99", m.Stats[record.MetricRequestLatency].P99, num(m.Stats[record.MetricRequestLatency].P99)},
		{record.MetricOutputTokenThroughput, "", m.Value(record.MetricOutputTokenThroughput), num(m.Value(record.MetricOutputTokenThroughput))},
		{record.MetricErrorRate, "", m.Value(record.MetricErrorRate), num(100 * m.Value(record.MetricErrorRate))},
	}
	got := overviewTilesOf(page)
	if len(got) != len(want) {
		t.Fatalf("overview has %d numbers, want %d: %+v", len(got), len(want), got)
	}
	if m.Value(record.MetricErrorRate) == 0 {
		t.Fatal("the fixture has no failed request: the error rate's tile would not show the percentage")
	}
	for i, w := range want {
		g := got[i]
		v, err := strconv.ParseFloat(g.value, 64)
		if g.metric != w.metric || g.stat != w.stat || err != nil || v != w.v || g.text != w.text {
			t.Errorf("number %d = %s %s value %q text %q, want %s %s value %v text %q", i, g.metric, g.stat, g.value, g.text, w.metric, w.stat, w.v, w.text)
		}
	}
	if !strings.Contains(page, `<p id="answer" class="answer fail-a"><b class="fail">FAIL</b> 1 of 2 assertion(s)</p>`) {
		t.Error("overview lacks the answer line FAIL 1 of 2 assertion(s)")
	}
	ov := page[strings.Index(page, `<section id="overview"`):strings.Index(page, `</section>`)]
	for _, id := range []string{"ttft-time", "itl-time", "token-throughput", "request-throughput"} {
		if !strings.Contains(ov, `id="`+id+`"`) || strings.Count(page, `id="`+id+`"`) != 1 {
			t.Errorf("chart %s is not in the overview once", id)
		}
	}
	if i, j := strings.Index(page, `id="overview"`), strings.Index(page, `id="summary"`); i < 0 || j < i {
		t.Error("the overview does not come before the summary table")
	}

	// No streams: no TTFT or ITL, shown N/A without a value; no answer given, no line.
	for i := range recs {
		recs[i].Stream, recs[i].Chunks = false, nil
	}
	m = metric.Compute(recs, metric.Options{}, nil)
	b.Reset()
	if err := WriteRunReport(&b, recs, nil, RunReportOptions{Metrics: &m}); err != nil {
		t.Fatal(err)
	}
	got = overviewTilesOf(b.String())
	if len(got) != 5 || got[0].text != "N/A" || got[0].value != "" || got[1].text != "N/A" || got[2].value == "" {
		t.Errorf("a run without streams: numbers %+v, want TTFT and ITL N/A without a value, latency given", got)
	}
	if strings.Contains(b.String(), `id="answer"`) {
		t.Error("a report given no answer has an answer line")
	}
}

// TestGPUSection: a run with GPU telemetry has a "GPU telemetry" section with each
// GPU's energy, power, utilisation and memory and the run's GPU metrics (tokens per
// joule first); a run without has none.
func TestGPUSection(t *testing.T) {
	recs := syntheticRun(60, 4)
	m := metricsOf(recs)
	m.Scalars[record.MetricTokensPerJoule] = record.Scalar{Unit: "tokens/J", Value: 2.75}
	m.Scalars[record.MetricGPUUtilization] = record.Scalar{Unit: "ratio", Value: 0.7}
	var b bytes.Buffer
	if err := WriteRunReport(&b, recs, nil, RunReportOptions{Metrics: &m, GPU: gpuFixture()}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	i := strings.Index(page, `<div id="gpu-telemetry">`)
	if i < 0 {
		t.Fatal("a run with GPU telemetry has no GPU section")
	}
	sec := page[i : i+strings.Index(page[i:], "</div>")]
	for _, want := range []string{
		"2 GPU(s) over the measured window (15.00 s), 34 scrape(s), 0 failed",
		`<th class="l">Tokens per Joule`, "<td>2.75</td>", "<td>70.00 %</td>",
		`<td class="l">0 NVIDIA H100 80GB HBM3</td>`, "<td>4,500.00</td>", "<td>300.00</td>", "<td>330.00</td>", "<td>80.00</td>", "<td>40,000.00</td>", "<td>81,559.00</td>",
		`<td class="l">1 NVIDIA H100 80GB HBM3</td>`, "<td>2,250.00</td>", "<td>60.00</td>",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("GPU section lacks %q:\n%s", want, sec)
		}
	}
	if strings.Index(sec, "Tokens per Joule") > strings.Index(sec, "GPU Energy") && strings.Contains(sec, "GPU Energy") {
		t.Error("the efficiencies do not come first")
	}
	b.Reset()
	if err := WriteRunReport(&b, recs, nil, RunReportOptions{Metrics: &m}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "gpu-telemetry") {
		t.Error("a run without GPU telemetry has a GPU section")
	}
}
