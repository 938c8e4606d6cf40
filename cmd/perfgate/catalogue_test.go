package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

// TestCatalogueAddsAMetric adds a metric in a test-only catalogue, one entry with its
// derivation, and sees it everywhere a metric goes: the --assert help, a rule the run
// checks (passing and failing), metrics.json, the AIPerf JSON and CSV exports and the
// console table.
func TestCatalogueAddsAMetric(t *testing.T) {
	restore := metric.Extend(metric.Def{
		Name: "decode_time", Ident: "DecodeTime", Header: "Decode Time", Label: "decode time",
		Unit: metric.UnitMS, Better: metric.Lower, Kind: metric.PerRequest, Origin: "test",
		Help: "Request latency − TTFT: the time spent generating after the first token.",
		Value: func(q *metric.Request) (float64, bool) {
			return metric.MS(q.Latency - q.TTFT), q.HasTTFT
		},
	})
	t.Cleanup(restore)

	_, help, _ := cli(t, "profile", "--help-all") // -h shortens each usage to its first clause
	if !strings.Contains(help, "decode_time") {
		t.Errorf("--assert help does not name decode_time:\n%s", help)
	}

	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "--request-count", "20", "--concurrency", "4", "--osl", "8",
		"--extra-inputs", "ignore_eos:true", "--artifact-dir", art, "--assert", "decode_time_p75<=1m", "--assert", "decode_time_p50>=1ns")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "PASS decode time p75") {
		t.Errorf("stdout lacks the decode_time verdict:\n%s", out)
	}
	var m record.Metrics
	readJSON(t, filepath.Join(art, "metrics.json"), &m)
	s, ok := m.Stat("decode_time")
	if !ok || s.Count != 20 || s.Unit != "ms" || !(s.Avg > 0) {
		t.Errorf("metrics.json decode_time = %+v (present %v), want 20 values in ms", s, ok)
	}
	ttft, lat := m.Stats[record.MetricTTFT], m.Stats[record.MetricRequestLatency]
	if d := lat.Avg - ttft.Avg - s.Avg; d > 1e-9*lat.Avg || d < -1e-9*lat.Avg {
		t.Errorf("decode_time avg %v, want request_latency − TTFT = %v", s.Avg, lat.Avg-ttft.Avg)
	}
	var agg map[string]json.RawMessage
	readJSON(t, filepath.Join(art, reportgen.AIPerfJSONFile), &agg)
	var j struct{ Avg float64 }
	if err := json.Unmarshal(agg["decode_time"], &j); err != nil || j.Avg != s.Avg {
		t.Errorf("%s decode_time = %s, want avg %v", reportgen.AIPerfJSONFile, agg["decode_time"], s.Avg)
	}
	csv, err := os.ReadFile(filepath.Join(art, reportgen.AIPerfCSVFile))
	if err != nil || !strings.Contains(string(csv), "Decode Time (ms)") {
		t.Errorf("%s lacks the Decode Time row (%v)", reportgen.AIPerfCSVFile, err)
	}

	// The rule fails when the metric breaches it.
	code, out, _ = cli(t, "profile", "--mock", "--request-count", "8", "--concurrency", "2", "--osl", "8", "-q",
		"--extra-inputs", "ignore_eos:true", "--artifact-dir", filepath.Join(t.TempDir(), "run"), "--assert", "decode_time_p50<="+time.Nanosecond.String())
	if code != ExitAssertFailed || !strings.Contains(out, "FAIL decode time p50") {
		t.Errorf("decode_time_p50<=1ns: exit %d, want %d with a failed decode time verdict:\n%s", code, ExitAssertFailed, out)
	}

	// Without the entry, the rule is unknown.
	restore()
	code, _, errOut = cli(t, "profile", "--mock", "--request-count", "1", "--artifact-dir", filepath.Join(t.TempDir(), "run"), "--assert", "decode_time_p99<=1s")
	if code != ExitInvalidConfig || !strings.Contains(errOut, `unknown metric "decode_time"`) {
		t.Errorf("without the catalogue entry: exit %d, want %d with unknown metric:\n%s", code, ExitInvalidConfig, errOut)
	}
}
