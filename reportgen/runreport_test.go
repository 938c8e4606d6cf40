package reportgen

import (
	"bytes"
	"strings"
	"testing"
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
