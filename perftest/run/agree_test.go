package run

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

// TestEveryReportAgrees runs one streamed scenario against a mock with latency and
// checks that every number shown agrees exactly with metrics.json: the metrics
// recomputed from client.jsonl, profile_export_aiperf.json (bit for bit),
// profile_export_aiperf.csv, the console table and the HTML report (as formatted with
// two decimals), and the verdicts' quantiles and goodput (relative 1e-12: they are in
// seconds, metrics.json in ms).
func TestEveryReportAgrees(t *testing.T) {
	dir := t.TempDir()
	slo := metric.SLO{TTFT: 40 * time.Millisecond, ITL: 4 * time.Millisecond}
	sc := scenario.Scenario{
		Mock: mockserver.Config{
			TTFT: distribution.Spec{Distribution: distribution.MustParse("lognormal:mean=25,stddev=8")},
			ITL:  distribution.Spec{Distribution: distribution.MustParse("lognormal:mean=3,stddev=0.6")},
		},
		//lint:ignore SA1019 the deprecated structured objectives must still agree with the reports, as the rules they mean
		Objectives: scenario.Objectives{SLO: slo, Goodput: 0.01, Bounds: []check.Bound{
			{Metric: check.TTFT, P: 0.99, MaxTime: 10 * time.Second}, {Metric: check.ITL, P: 0.5, MaxTime: 10 * time.Second}, {Metric: check.Latency, P: 0.9, MaxTime: 10 * time.Second},
		}},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:       fixed(64),
				OSL:       distribution.Spec{Distribution: distribution.Uniform{Min: 4, Max: 40}},
				IgnoreEOS: true,
				Seed:      3,
			},
			Load: loadgen.Load{
				Concurrency: 16,
			},
			Stop: loadgen.Stop{
				Requests: 300,
			},
		},
	}
	sc.SLO = slo
	out, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	var m record.Metrics
	readJSON(t, filepath.Join(dir, MetricsFile), &m)
	if len(m.Stats) < 10 || m.Value(record.MetricRequestCount) != 300 {
		t.Fatalf("metrics.json has %d stats, %v requests; want the streamed metric set over 300", len(m.Stats), m.Value(record.MetricRequestCount))
	}

	// The recording, recomputed by the one definition, gives metrics.json exactly.
	f, err := os.Open(filepath.Join(dir, ClientFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := record.ReadClient(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	again := metric.Compute(recs, metric.Options{}, &slo)
	if !reflect.DeepEqual(again.Stats, m.Stats) || !reflect.DeepEqual(again.Scalars, m.Scalars) {
		t.Errorf("metrics recomputed from %s differ from %s:\n%v\nvs\n%v", ClientFile, MetricsFile, again, m)
	}

	// profile_export_aiperf.json: the same float64s.
	var agg map[string]json.RawMessage
	readJSON(t, filepath.Join(dir, reportgen.AIPerfJSONFile), &agg)
	stats := 0
	for name, s := range m.Stats {
		tag := reportgen.Tag(name)
		var j struct{ Avg, Min, Max, Std, P1, P5, P10, P25, P50, P75, P90, P95, P99 float64 }
		raw, ok := agg[tag]
		if !ok {
			continue // not every metric is exported under an AIPerf tag
		}
		stats++
		if err := json.Unmarshal(raw, &j); err != nil {
			t.Fatal(err)
		}
		got := []float64{j.Avg, j.Min, j.Max, j.Std, j.P1, j.P5, j.P10, j.P25, j.P50, j.P75, j.P90, j.P95, j.P99}
		want := []float64{s.Avg, s.Min, s.Max, s.Std, s.P1, s.P5, s.P10, s.P25, s.P50, s.P75, s.P90, s.P95, s.P99}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s = %v, metrics.json %v", reportgen.AIPerfJSONFile, tag, got, want)
		}
	}
	if stats < 10 {
		t.Errorf("%s carries %d of the %d stats", reportgen.AIPerfJSONFile, stats, len(m.Stats))
	}

	// The CSV, the console table and the HTML, at their two decimals.
	want := map[string][]string{} // row label → avg, min, max, p99, p90, p50, std
	for name, s := range m.Stats {
		want[reportgen.Label(name, s.Unit)] = []string{reportgen.FormatNumber(s.Avg), reportgen.FormatNumber(s.Min), reportgen.FormatNumber(s.Max), reportgen.FormatNumber(s.P99), reportgen.FormatNumber(s.P90), reportgen.FormatNumber(s.P50), reportgen.FormatNumber(s.Std)}
	}
	csvb, err := os.ReadFile(filepath.Join(dir, reportgen.AIPerfCSVFile))
	if err != nil {
		t.Fatal(err)
	}
	section, _, _ := bytes.Cut(csvb, []byte("\n\n"))
	rows, err := csv.NewReader(bytes.NewReader(section)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] { // Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std
		w, ok := want[r[0]]
		if !ok {
			t.Errorf("CSV row %q is not in metrics.json", r[0])
			continue
		}
		noSep := func(s string) string { return strings.ReplaceAll(s, ",", "") }
		if got := []string{r[1], r[2], r[3], r[12], r[10], r[8], r[13]}; !reflect.DeepEqual(got, mapStr(w, noSep)) {
			t.Errorf("CSV %s = %v, metrics.json %v", r[0], got, mapStr(w, noSep))
		}
	}
	var tb bytes.Buffer
	if err := reportgen.WriteTable(&tb, out.Metrics, reportgen.TableOptions{All: true, ASCII: true}); err != nil {
		t.Fatal(err)
	}
	checkRows(t, "console table", tb.String(), want, regexp.MustCompile(`\|\s*([^|]+?)\s*\|\s*([-\d,.N/A]+)\s*\|\s*([-\d,.N/A]+)\s*\|\s*([-\d,.N/A]+)\s*\|\s*([-\d,.N/A]+)\s*\|\s*([-\d,.N/A]+)\s*\|\s*([-\d,.N/A]+)\s*\|\s*([-\d,.N/A]+)\s*\|`))
	html, err := os.ReadFile(filepath.Join(dir, reportgen.RunReportFile))
	if err != nil {
		t.Fatal(err)
	}
	// HTML rows: name, n (and what it counts), avg, min, max, p99, p90, p50, std (the console order).
	re := regexp.MustCompile(`<tr><td class="l">([^<]+)</td><td>\d+(?: <span class="unit">[^<]*</span>)?</td><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td></tr>`)
	n := 0
	for _, g := range re.FindAllStringSubmatch(string(html), -1) {
		w, ok := want[unescape(g[1])]
		if !ok {
			continue
		}
		n++
		if got := g[2:9]; !reflect.DeepEqual(got, w) {
			t.Errorf("HTML %s = %v, metrics.json %v", g[1], got, w)
		}
	}
	if n < len(m.Stats) {
		t.Errorf("HTML shows %d of the %d stats", n, len(m.Stats))
	}

	// Verdicts: the same quantiles (in seconds) and the same goodput.
	vs := out.Verdicts()
	q := map[string]float64{
		"TTFT p99":            m.Stats[record.MetricTTFT].P99 / 1e3,
		"ITL p50":             m.Stats[record.MetricITL].P50 / 1e3,
		"request latency p90": m.Stats[record.MetricRequestLatency].P90 / 1e3,
		"goodput":             m.Value(record.MetricGoodRequestCount) / m.Value(record.MetricRequestCount),
	}
	seen := 0
	for _, v := range vs {
		for k, w := range q {
			if strings.HasPrefix(v.Summary, k+" ") {
				seen++
				if math.Abs(v.Value-w) > 1e-12*math.Abs(w) {
					t.Errorf("verdict %q: value %v, metrics.json gives %v", v.Summary, v.Value, w)
				}
			}
		}
	}
	if seen != len(q) {
		t.Errorf("matched %d of %d verdicts: %v", seen, len(q), vs)
	}
}

func mapStr(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func unescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#39;", "'", "&#34;", `"`).Replace(s)
}

func checkRows(t *testing.T, what, text string, want map[string][]string, re *regexp.Regexp) {
	t.Helper()
	n := 0
	for _, g := range re.FindAllStringSubmatch(text, -1) {
		w, ok := want[g[1]]
		if !ok {
			continue
		}
		n++
		if got := g[2:9]; !reflect.DeepEqual(got, w) {
			t.Errorf("%s %s = %v, metrics.json %v", what, g[1], got, w)
		}
	}
	if n < len(want)/2 {
		t.Errorf("%s: matched %d rows of %d metrics:\n%s", what, n, len(want), text)
	}
}
