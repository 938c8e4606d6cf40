package reportgen

import (
	"flag"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), got, *update)
}

// syntheticRun builds n deterministic client records: streaming chat requests at
// about 20 req/s with log-normal TTFT and ITL, and every 37th request failing.
func syntheticRun(n int, seed uint64) []record.Client {
	rng := rand.New(rand.NewPCG(seed, 1))
	recs := make([]record.Client, 0, n)
	for i := range n {
		sent := time.Duration(float64(i)*50e6 + rng.Float64()*10e6)
		r := record.Client{
			Index: i, RequestID: "req-" + itoa(i), URL: "http://127.0.0.1:8000/v1/chat/completions",
			Endpoint: "chat", Model: "mock", Stream: true, RunStartUnixNano: 1_760_000_000_000_000_000,
			Scheduled: sent, Sent: sent, Status: 200,
			ISL: 100 + int(rng.NormFloat64()*10), ISLExact: true, RequestedOSL: 40,
			UsagePromptTokens: -1, UsageCompletionTokens: -1,
		}
		if i%37 == 36 {
			r.Status = 500
			r.ErrorKind = record.ErrHTTPStatus
			r.Error = "server said 500"
			r.Done = sent + 3*time.Millisecond
			recs = append(recs, r)
			continue
		}
		ttft := time.Duration(math.Exp(3.0+0.4*rng.NormFloat64()) * 1e6)
		if i > n/2 { // slower second half, visible over time
			ttft += 15 * time.Millisecond
		}
		t := sent + ttft
		r.FirstByte = t - time.Millisecond
		osl := 20 + rng.IntN(21)
		for k := 0; k < osl; k++ {
			if k > 0 {
				t += time.Duration(math.Exp(1.5+0.3*rng.NormFloat64()) * 1e6)
			}
			r.Chunks = append(r.Chunks, record.Chunk{T: t, Tokens: 1, Choices: true})
		}
		r.OSL = osl
		r.Done = t + 200*time.Microsecond
		r.FinishReason = "length"
		recs = append(recs, r)
	}
	return recs
}

func itoa(i int) string {
	return string(appendInt(nil, i))
}

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

// metricsOf summarises records the way loadgen does for the fields the reports use
// (enough for golden tests; loadgen.ComputeMetrics is the real implementation).
func metricsOf(recs []record.Client) record.Metrics {
	p := collect(sliceEach(recs), metric.Options{})
	st := func(unit string, v []float64) record.Stat {
		s := summarize(v)
		return record.Stat{Unit: unit, Count: s.N, Avg: s.Mean, Min: s.Min, Max: s.Max, Std: s.Std,
			P1: s.P1, P5: s.P5, P10: s.P10, P25: s.P25, P50: s.P50, P75: s.P75, P90: s.P90, P95: s.P95, P99: s.P99}
	}
	dur := (p.end - p.start).Seconds()
	return record.Metrics{
		Stats: map[string]record.Stat{
			record.MetricTTFT:           st("ms", p.ttft),
			record.MetricRequestLatency: st("ms", p.latency),
			record.MetricITL:            st("ms", p.itl),
			record.MetricISL:            st("tokens", p.isl),
			record.MetricOSL:            st("tokens", p.osl),
		},
		Scalars: map[string]record.Scalar{
			record.MetricRequestThroughput:     {Unit: "req/s", Value: float64(p.ok) / dur},
			record.MetricOutputTokenThroughput: {Unit: "tokens/s", Value: sumOf(p.osl) / dur},
			record.MetricRequestCount:          {Unit: "requests", Value: float64(p.ok)},
			record.MetricErrorCount:            {Unit: "requests", Value: float64(p.failures)},
			record.MetricBenchmarkDuration:     {Unit: "s", Value: dur},
			record.MetricTotalOSL:              {Unit: "tokens", Value: sumOf(p.osl)},
		},
		Errors: map[string]int{record.ErrHTTPStatus: p.failures},
	}
}
