package loadgen

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// BenchmarkServerDataCost is what the server's per-request data costs the collector:
// for each server's format, the same whole chat answer, without and with that server's
// object (vLLM's metrics, llama.cpp's timings, SGLang's meta_info, as the mock writes
// them), is parsed (openai.ChunkParser), made into a record (serverData, usageCached)
// and added to an exact metric.Accumulator, which derives the catalogue's 8 raw server
// metrics (server_ttft … server_inter_token_latency, spec_decode_acceptance_rate and
// _length) from every record. Each of b.N iterations runs one answer of each variant,
// the variants in two loops of their own, timed and their allocations counted apart,
// and the two are reported side by side with their ratios (with/without): ns/op and
// allocs/op of one answer. The benchmark's own ns/op is the two together. It is for a
// quiet machine; `-benchtime=1x` checks that it runs.
func BenchmarkServerDataCost(b *testing.B) {
	plain := []byte(`{"id":"chatcmpl-33","object":"chat.completion","created":1767000000,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":0}}}`)
	const recv = int64(1_767_000_000_000_000_000)
	times := openai.ServerTimes{Recv: recv, Scheduled: recv + 2e6, FirstToken: recv + 20e6, LastToken: recv + 26e6,
		PromptTokens: 8, CachedTokens: 0, OutputTokens: 2}
	for _, src := range record.ServerSources {
		with := openai.AppendServerData(slices.Clone(plain), src, &times)
		b.Run(src, func(b *testing.B) {
			nsWithout, allocsWithout := collectAnswers(b, plain, false)
			nsWith, allocsWith := collectAnswers(b, with, true)
			b.ReportMetric(nsWithout, "without-ns/op")
			b.ReportMetric(nsWith, "with-ns/op")
			if nsWithout > 0 {
				b.ReportMetric(nsWith/nsWithout, "ratio-ns")
			}
			b.ReportMetric(allocsWithout, "without-allocs/op")
			b.ReportMetric(allocsWith, "with-allocs/op")
			if allocsWithout > 0 {
				b.ReportMetric(allocsWith/allocsWithout, "ratio-allocs")
			}
		})
	}
}

// mallocs is the process's heap allocations so far.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// collectAnswers runs the collector's path for one whole answer, body, b.N times:
// parse it, make its record, add the record to an exact accumulator; it returns the
// loop's ns and heap allocations per answer. server says whether body carries server
// data, which the records must then have (else the benchmark would not measure what
// it says).
func collectAnswers(b *testing.B, body []byte, server bool) (ns, allocs float64) {
	var p openai.ChunkParser
	var c openai.StreamChunk
	var res result
	a := metric.NewAccumulator(metric.Options{})
	base := record.Client{
		Index: 33, RequestID: "req-33", URL: "http://127.0.0.1:18290/v1/chat/completions", Endpoint: "chat", Model: "m",
		RunStartUnixNano: 1767000000000000000, Scheduled: 1841774, Sent: 24474150, FirstByte: 26482281,
		FirstOutput: 26500924, Done: 26500924, Chunks: []record.Chunk{{T: 26500924, Tokens: 2, Choices: true}},
		Blocked: 10978, Written: 24482675, ConnReused: true, Status: 200, ISL: 8, ISLTemplate: 35,
		TokenizationMode: "chat_template_fallback", ISLExact: true, RequestedISL: 8, OSL: 2,
		UsagePromptTokens: 8, UsageCompletionTokens: 2, FinishReason: "stop", ResponseBytes: len(body),
	}
	// b.N, not b.Loop: the benchmark runs two such loops, timed apart, per call.
	m0, t0 := mallocs(), time.Now()
	for i := range b.N {
		if err := p.Parse(body, &c); err != nil {
			b.Fatal(err)
		}
		r := base
		// Vary the times a little, as a run's do, so the sketches see many values.
		r.Done += time.Duration(i%977) * 1000
		usageCached(&c, &r, &res)
		serverData(&c, &r, &res)
		a.Add(&r)
	}
	d, m := time.Since(t0), mallocs()-m0
	if _, has := a.Metrics().Stats[record.MetricServerTTFT]; has != server || res.badServer != "" {
		b.Fatalf("server data in the answer %v, server_ttft in the metrics %v (bad field %q)", server, has, res.badServer)
	}
	n := float64(max(b.N, 1))
	return float64(d.Nanoseconds()) / n, float64(m) / n
}
