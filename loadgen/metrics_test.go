package loadgen

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

const msec = time.Millisecond

// stream builds a successful streamed record sent at sent with text chunks at ts
// (one token each) after a role-only chunk at role.
func stream(sent, role time.Duration, ts ...time.Duration) record.Client {
	r := record.Client{Stream: true, Sent: sent, Status: 200, ISL: 10, OSL: len(ts), UsageCompletionTokens: -1}
	r.Chunks = append(r.Chunks, record.Chunk{T: role, Choices: true})
	for _, t := range ts {
		r.Chunks = append(r.Chunks, record.Chunk{T: t, Tokens: 1, Choices: true})
	}
	r.Done = ts[len(ts)-1] + msec
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestComputeMetricsDefinitions(t *testing.T) {
	recs := []record.Client{
		// sent 0, role chunk 5ms, tokens at 10, 20, 40; done 41ms.
		stream(0, 5*msec, 10*msec, 20*msec, 40*msec),
		// sent 100ms, tokens at 130, 150; done 151ms.
		stream(100*msec, 120*msec, 130*msec, 150*msec),
		{Warmup: true, Sent: 0, Done: 10 * time.Second},
		{Sent: 50 * msec, Done: 60 * msec, ErrorKind: record.ErrHTTPStatus, Status: 500},
	}
	m := ComputeMetrics(recs, MetricsOptions{SLO: metric.SLO{TTFT: 15 * msec}})
	check := func(name string, got, want float64) {
		t.Helper()
		if !near(got, want) {
			t.Errorf("%s = %v; want %v", name, got, want)
		}
	}
	ttft, _ := m.Stat(record.MetricTTFT)
	check("TTFT min (first text chunk)", ttft.Min, 10)
	check("TTFT max", ttft.Max, 30)
	vttft, _ := m.Stat(record.MetricTTFTVLLM)
	check("vLLM TTFT min (first choices chunk)", vttft.Min, 5)
	itl, _ := m.Stat(record.MetricITL)
	// (41-10)/(3-1) = 15.5 and (51-30)/(2-1) = 21.
	check("ITL min", itl.Min, 15.5)
	check("ITL max", itl.Max, 21)
	icl, _ := m.Stat(record.MetricICL)
	check("ICL count", float64(icl.Count), 3) // 10, 20 and 20
	check("ICL max", icl.Max, 20)
	vitl, _ := m.Stat(record.MetricITLVLLM)
	check("vLLM ITL count", float64(vitl.Count), 5) // 5,10,20 and 10,20
	ttst, _ := m.Stat(record.MetricTTST)
	check("TTST min", ttst.Min, 10)
	check("request_count", m.Value(record.MetricRequestCount), 2)
	check("error_request_count", m.Value(record.MetricErrorCount), 1)
	check("benchmark_duration", m.Value(record.MetricBenchmarkDuration), 0.151)
	check("output_token_throughput", m.Value(record.MetricOutputTokenThroughput), 5/0.151)
	check("goodput (one request has TTFT <= 15ms)", m.Value(record.MetricGoodput), 1/0.151)
	if m.Warmup != 1 || m.Errors[record.ErrHTTPStatus] != 1 {
		t.Errorf("warmup=%d errors=%v; want 1 warmup and 1 http_status error", m.Warmup, m.Errors)
	}
}

// TestRunTotalsOnly: with Recording.TotalsOnly a run's Outcome.Metrics holds exactly
// the run-level metrics that ComputeMetrics derives from its record file, and no
// distribution; the file holds every record as it would without it.
func TestRunTotalsOnly(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens = 4 })
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	cfg := Config{Target: Target{URLs: []string{g.URL}, Model: "ok"}, Workload: Workload{ISL: fixed(16), OSL: fixed(4), Seed: 3},
		Load: Load{Concurrency: 3}, Stop: Stop{Requests: 30},
		Recording: Recording{RecordFile: path, DiscardRecords: true, TotalsOnly: true, SLO: metric.SLO{TTFT: time.Minute}}}
	out, err := Run(context.Background(), cfg, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := record.ReadClient(f)
	if err != nil || len(recs) != 30 {
		t.Fatalf("record file: %d records, %v; want 30", len(recs), err)
	}
	want := ComputeMetrics(recs, MetricsOptions{SLO: cfg.SLO})
	if len(want.Stats) == 0 || want.Value(record.MetricRequestCount) != 30 || want.Value(record.MetricGoodRequestCount) != 30 {
		t.Fatalf("the file's metrics are not those of 30 good requests: %v", want)
	}
	if len(out.Metrics.Stats) != 0 {
		t.Errorf("Outcome.Metrics has %d distributions; want none", len(out.Metrics.Stats))
	}
	if !reflect.DeepEqual(out.Metrics.Scalars, want.Scalars) || !reflect.DeepEqual(out.Metrics.Errors, want.Errors) {
		t.Errorf("run-level metrics\n%v %v\nwant (from the file)\n%v %v", out.Metrics.Scalars, out.Metrics.Errors, want.Scalars, want.Errors)
	}
}
