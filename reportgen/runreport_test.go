package reportgen

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

func TestRunReportGolden(t *testing.T) {
	var b bytes.Buffer
	m := &Manifest{Version: "test", Scenario: "synthetic", Seed: 7, Tokenizer: &TokenizerInfo{Name: "gpt2", Fingerprint: "sha256:abc"},
		Host: Host{Hostname: "h", OS: "linux", Arch: "amd64", CPUs: 2, GoVersion: "go1.26"}}
	vs := []Verdict{{Pass: true, Text: "error rate = 2.7% <= 5%"}, {Pass: false, Text: "TTFT p99 = 61ms, want <= 50ms\n    quantiles:  p50=28ms"}}
	if err := WriteRunReport(&b, syntheticRun(300, 1), m, RunReportOptions{Verdicts: vs}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`id="ttft-hist"`, `id="ttft-ecdf"`, `id="itl-time"`, `id="token-throughput"`, `id="error-timeline"`, "http_status 500", "1 failed", `<b class="fail">FAIL</b> TTFT p99`} {
		if !strings.Contains(out, want) {
			t.Errorf("run report lacks %s", want)
		}
	}
	golden(t, "run_report.html", b.Bytes())
}

// TestRunReportWithMetrics: given the run's metrics, the report's tables show them (the
// same numbers as the console table), not a recomputation.
func TestRunReportWithMetrics(t *testing.T) {
	recs := syntheticRun(120, 2)
	m := metricsOf(recs)
	s := m.Stats["time_to_first_token"]
	s.P99 = 12345.678 // a value only the metrics carry
	m.Stats["time_to_first_token"] = s
	var b bytes.Buffer
	if err := WriteRunReport(&b, recs, nil, RunReportOptions{Metrics: &m}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"12,345.68", "Benchmark Duration (sec)", "Request Throughput (requests/sec)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestRunReportPerModel: a model mix's report has a "Per model" table with each
// model's request count and TTFT from metrics.json's models section; a run of one
// model has none.
func TestRunReportPerModel(t *testing.T) {
	recs := syntheticRun(90, 3)
	for i := range recs {
		recs[i].Model = []string{"base", "lora-a", "lora-b"}[i%3]
	}
	m := metric.Compute(recs, metric.Options{ByModel: true}, nil)
	ttft := m.Models["lora-b"].Stats[record.MetricTTFT]
	ttft.P50 = 4321.5 // a value only lora-b's section carries
	m.Models["lora-b"].Stats[record.MetricTTFT] = ttft
	var b bytes.Buffer
	if err := WriteRunReport(&b, recs, nil, RunReportOptions{Metrics: &m}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i := strings.Index(out, `<table id="models">`)
	if i < 0 {
		t.Fatal("the report of a model mix lacks the per-model table")
	}
	table := out[i : i+strings.Index(out[i:], "</table>")]
	for _, want := range []string{`<td class="l">base</td><td>`, `<td class="l">lora-a</td>`, `<td class="l">lora-b</td>`, "4,321.5"} {
		if !strings.Contains(table, want) {
			t.Errorf("per-model table lacks %q:\n%s", want, table)
		}
	}
	if n := m.Models["base"].Value(record.MetricRequestCount); !strings.Contains(table, `<td class="l">base</td><td>`+fmt.Sprint(int64(n))+`</td>`) || n == 0 {
		t.Errorf("base's request count %v not in the table:\n%s", n, table)
	}
	b.Reset()
	one := metric.Compute(recs, metric.Options{}, nil)
	if err := WriteRunReport(&b, recs, nil, RunReportOptions{Metrics: &one}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="models"`) {
		t.Error("a report without a per-model breakdown has a per-model table")
	}
}
