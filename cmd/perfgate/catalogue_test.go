package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

// TestCatalogueAddsAMetric adds metrics in a test-only catalogue, one entry each, and
// sees them everywhere a metric goes: the --assert help, a rule the run checks (passing
// and failing), metrics.json, the AIPerf JSON and CSV exports, the console table, the
// run statistics a regression gate compares and the history keeps.
// decode_time is derived from the built-in values; test_response_chunks is a raw
// measurement read from the record (a field no built-in metric reads), kept by the
// accumulator and the run's summary with no other code; test_tokens_per_chunk is
// derived from that raw value.
func TestCatalogueAddsAMetric(t *testing.T) {
	restore := metric.Extend(metric.Def{
		Name: "decode_time", Ident: "DecodeTime", Header: "Decode Time", Label: "decode time",
		Unit: metric.UnitMS, Better: metric.Lower, Kind: metric.PerRequest, Origin: "test",
		Help: "Request latency − TTFT: the time spent generating after the first token.",
		Value: func(q *metric.Request) (float64, bool) {
			return metric.MS(q.Latency - q.TTFT), q.HasTTFT
		},
	}, metric.Def{
		Name: "test_response_chunks", Ident: "TestResponseChunks", Header: "Test Response Chunks", Label: "response chunks",
		Unit: metric.UnitTokens, Kind: metric.PerRequest, Origin: "test",
		Help:   "Chunks of a streamed answer, as recorded.",
		Record: metric.RecordCount(func(r *record.Client) (int, bool) { return len(r.Chunks), r.Stream }),
	}, metric.Def{
		Name: "test_tokens_per_chunk", Ident: "TestTokensPerChunk", Header: "Test Tokens per Chunk", Label: "tokens per chunk",
		Unit: metric.UnitTokens, Kind: metric.PerRequest, Origin: "test",
		Help: "OSL / test_response_chunks.",
		Value: func(q *metric.Request) (float64, bool) {
			n, ok := q.Raw("test_response_chunks")
			return float64(q.OSL) / n, ok && n > 0
		},
	})
	t.Cleanup(restore)

	_, help, _ := cli(t, "profile", "--help-all") // -h shortens each usage to its first clause
	for _, name := range []string{"decode_time", "test_response_chunks", "test_tokens_per_chunk"} {
		if !strings.Contains(help, name) {
			t.Errorf("--assert help does not name %s:\n%s", name, help)
		}
	}

	art := filepath.Join(t.TempDir(), "run")
	db := filepath.Join(t.TempDir(), "history.db")
	code, out, errOut := cli(t, "profile", "--mock", "--request-count", "20", "--concurrency", "4", "--osl", "8",
		"--extra-inputs", "ignore_eos:true", "--artifact-dir", art, "--history", db, "--assert", "decode_time_p75<=1m", "--assert", "decode_time_p50>=1ns",
		"--assert", "test_response_chunks_p50>=8", "--assert", "test_tokens_per_chunk_p50<=1")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, v := range []string{"PASS decode time p75", "PASS response chunks p50", "PASS tokens per chunk p50"} {
		if !strings.Contains(out, v) {
			t.Errorf("stdout lacks %q:\n%s", v, out)
		}
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
	if err != nil || !strings.Contains(string(csv), "Decode Time (ms)") || !strings.Contains(string(csv), "Test Response Chunks (tokens)") {
		t.Errorf("%s lacks the Decode Time or Test Response Chunks row (%v)", reportgen.AIPerfCSVFile, err)
	}

	// The raw metric is the record's value, request by request: its stat equals the
	// one computed from client.jsonl, and the derived one reads it.
	var chunks, perChunk []float64
	f, err := os.Open(filepath.Join(art, "client.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := record.ReadClient(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if !r.Warmup && r.OK() {
			chunks = append(chunks, float64(len(r.Chunks)))
			perChunk = append(perChunk, float64(r.OSL)/float64(len(r.Chunks)))
		}
	}
	for name, xs := range map[string][]float64{"test_response_chunks": chunks, "test_tokens_per_chunk": perChunk} {
		want := metric.Summarize(xs, metric.UnitTokens)
		if got := m.Stats[name]; got != want {
			t.Errorf("metrics.json %s = %+v, want %+v (from client.jsonl)", name, got, want)
		}
		if _, ok := agg[name]; !ok {
			t.Errorf("%s lacks %s", reportgen.AIPerfJSONFile, name)
		}
	}

	// The regression gate and the history: each added per-request metric is a run
	// statistic (its p50, p90, p99) with no other edit, in seconds for a latency:
	// runstats.json has it, the history keeps it, and a gate compares it when named.
	rs, err := gate.ReadRunStats(art)
	if err != nil {
		t.Fatal(err)
	}
	if p50, _ := s.Quantile(0.5); rs.Stats["decode_time_p50"] != p50/1000 {
		t.Errorf("runstats.json decode_time_p50 = %v, want metrics.json's p50 in seconds, %v", rs.Stats["decode_time_p50"], p50/1000)
	}
	for _, name := range []string{"decode_time_p90", "decode_time_p99", "test_response_chunks_p50", "test_tokens_per_chunk_p99"} {
		if _, ok := rs.Stats[name]; !ok {
			t.Errorf("runstats.json lacks %s: %v", name, rs.Stats)
		}
	}
	if code, out, _ := cli(t, "history", "show", "--db", db, "1"); code != ExitOK || !strings.Contains(out, "decode_time_p99") || !strings.Contains(out, "test_response_chunks_p50") {
		t.Errorf("history show 1: exit %d, want decode_time_p99 and test_response_chunks_p50 among its statistics:\n%s", code, out)
	}
	code, out, errOut = cli(t, "profile", "--mock", "--request-count", "20", "--concurrency", "4", "--osl", "8",
		"--extra-inputs", "ignore_eos:true", "--artifact-dir", filepath.Join(t.TempDir(), "run"), "--baseline", art, "--gate-fail", "decode_time_p99")
	if !strings.Contains(out, "decode time p99") {
		t.Errorf("a gate failing on decode_time_p99: exit %d, the report does not compare decode time p99:\n%s\n%s", code, out, errOut)
	}

	// The rule fails when the metric breaches it.
	code, out, _ = cli(t, "profile", "--mock", "--request-count", "8", "--concurrency", "2", "--osl", "8", "-q",
		"--extra-inputs", "ignore_eos:true", "--artifact-dir", filepath.Join(t.TempDir(), "run"), "--assert", "decode_time_p50<="+time.Nanosecond.String(), "--assert", "test_response_chunks_p50<=1")
	if code != ExitAssertFailed || !strings.Contains(out, "FAIL decode time p50") || !strings.Contains(out, "FAIL response chunks p50") {
		t.Errorf("decode_time_p50<=1ns, test_response_chunks_p50<=1: exit %d, want %d with failed decode time and response chunks verdicts:\n%s", code, ExitAssertFailed, out)
	}

	// Without the entry, the rule is unknown.
	restore()
	code, _, errOut = cli(t, "profile", "--mock", "--request-count", "1", "--artifact-dir", filepath.Join(t.TempDir(), "run"), "--assert", "decode_time_p99<=1s")
	if code != ExitInvalidConfig || !strings.Contains(errOut, `unknown metric "decode_time"`) {
		t.Errorf("without the catalogue entry: exit %d, want %d with unknown metric:\n%s", code, ExitInvalidConfig, errOut)
	}
}
