package record

import (
	"fmt"
	"sort"
	"strings"
)

// Metric names. The unprefixed names follow AIPerf's metric tags and definitions; the
// *_vllm names follow `vllm bench serve` where its definition differs, so a report can
// say which one it shows.
const (
	// TTFT: first chunk with generated text − request sent (AIPerf: empty initial
	// responses are ignored). Unit ms.
	MetricTTFT = "time_to_first_token"
	// TTFTVLLM: first chunk with "choices" (text or not) − sent (vLLM). Unit ms.
	MetricTTFTVLLM = "time_to_first_token_vllm"
	// TTST: second text chunk − first text chunk (AIPerf). Unit ms.
	MetricTTST = "time_to_second_token"
	// ITL: per request, (request latency − TTFT) / (OSL − 1), requests with OSL ≥ 2 (AIPerf). Unit ms.
	MetricITL = "inter_token_latency"
	// ICL: every gap between consecutive text chunks, pooled over requests (AIPerf inter_chunk_latency). Unit ms.
	MetricICL = "inter_chunk_latency"
	// ITLVLLM: every gap between consecutive "choices" chunks after the first, pooled (vLLM's ITL). Unit ms.
	MetricITLVLLM = "inter_token_latency_vllm"
	// TPOTVLLM: per request, (latency − TTFT_vllm)/(output tokens − 1) with vLLM's
	// TTFT (vLLM's TPOT). Unit ms.
	MetricTPOTVLLM = "time_per_output_token_vllm"
	// Request latency: last byte − sent. Unit ms.
	MetricRequestLatency = "request_latency"
	// Client queueing time: sent − scheduled (open-loop with a concurrency ceiling). Unit ms.
	MetricQueueTime = "client_queue_time"
	// Per-user output token throughput: 1000 / ITL per request. Unit tokens/sec/user.
	MetricOutputTokenThroughputPerUser = "output_token_throughput_per_user"
	// Prefill throughput per user: ISL / TTFT. Unit tokens/sec/user.
	MetricPrefillThroughputPerUser = "prefill_throughput_per_user"
	// Output sequence length (client count, or usage when chosen). Unit tokens.
	MetricOSL = "output_sequence_length"
	// Input sequence length (client tokenizer). Unit tokens.
	MetricISL = "input_sequence_length"
	// Usage-reported completion tokens. Unit tokens.
	MetricUsageOSL = "usage_completion_tokens"
	// TTFO: first chunk with non-reasoning output text − sent (AIPerf
	// time_to_first_output_token; equals TTFT without reasoning). Unit ms.
	MetricTTFO = "time_to_first_output_token"
	// Reasoning tokens of a request (AIPerf reasoning_token_count: the client
	// tokenizer's count of reasoning_content, or usage's reasoning_tokens when OSL comes
	// from usage). Unit tokens.
	MetricReasoningTokens = "reasoning_token_count"
	// Output tokens of a request without reasoning (AIPerf output_token_count):
	// OSL − reasoning. Unit tokens.
	MetricOutputTokens = "output_token_count"

	// Scalars.
	MetricRequestThroughput     = "request_throughput"       // successful requests / benchmark duration, req/s
	MetricOutputTokenThroughput = "output_token_throughput"  // output tokens / benchmark duration, tokens/s
	MetricTotalTokenThroughput  = "total_token_throughput"   // (input+output tokens) / duration, tokens/s
	MetricGoodput               = "goodput"                  // requests meeting every SLO / duration, req/s
	MetricBenchmarkDuration     = "benchmark_duration"       // first sent → last done, s
	MetricRequestCount          = "request_count"            // successful non-warmup requests
	MetricErrorCount            = "error_request_count"      // failed non-warmup requests
	MetricErrorRate             = "error_rate"               // errors / (errors + successes)
	MetricTotalOSL              = "total_output_tokens"      // sum of OSL
	MetricTotalISL              = "total_input_tokens"       // sum of ISL
	MetricTotalReasoning        = "total_reasoning_tokens"   // sum of reasoning_token_count
	MetricTotalOutputTokens     = "total_output_token_count" // sum of output_token_count (OSL without reasoning)
	MetricGoodRequestCount      = "good_request_count"       // requests meeting every SLO
)

// Stat summarises one metric's distribution. Percentiles use numpy's default
// ("linear") interpolation. All fields are in Unit.
type Stat struct {
	Unit  string  `json:"unit"`
	Count int     `json:"count"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Std   float64 `json:"std"` // population standard deviation (numpy std, ddof=0)
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
}

// StatPercentiles lists the percentiles a [Stat] carries, as fractions in [0,1].
var StatPercentiles = []float64{0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99}

// Quantile returns the stat's percentile for p in StatPercentiles (0.5 → P50) and
// whether p is one of them; p = 0 and 1 give Min and Max.
func (s Stat) Quantile(p float64) (float64, bool) {
	switch p {
	case 0:
		return s.Min, true
	case 0.01:
		return s.P1, true
	case 0.05:
		return s.P5, true
	case 0.10:
		return s.P10, true
	case 0.25:
		return s.P25, true
	case 0.50:
		return s.P50, true
	case 0.75:
		return s.P75, true
	case 0.90:
		return s.P90, true
	case 0.95:
		return s.P95, true
	case 0.99:
		return s.P99, true
	case 1:
		return s.Max, true
	}
	return 0, false
}

// String formats the stat on one line, e.g. "avg=12.1 p50=11.9 p99=20.3 max=25 ms (n=100)".
func (s Stat) String() string {
	return fmt.Sprintf("avg=%.4g std=%.4g min=%.4g p50=%.4g p90=%.4g p99=%.4g max=%.4g %s (n=%d)",
		s.Avg, s.Std, s.Min, s.P50, s.P90, s.P99, s.Max, s.Unit, s.Count)
}

// Scalar is an aggregate metric with one value (throughputs, counts, duration).
type Scalar struct {
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
}

// Metrics is the summary of a run: distributions per metric name and aggregate scalars,
// both keyed by the Metric… names. The zero value is empty.
type Metrics struct {
	Stats   map[string]Stat   `json:"stats"`
	Scalars map[string]Scalar `json:"scalars"`
	// Errors counts failed non-warmup requests by error kind.
	Errors map[string]int `json:"errors,omitempty"`
	// Warmup is the number of warmup records left out.
	Warmup int `json:"warmup_count"`
	// ISLInexact counts requests whose synthetic prompt could not hit the sampled length.
	ISLInexact int `json:"isl_inexact_count,omitempty"`
	// OSLSource says where OSL came from: "client" (tokenizer count) or "usage".
	OSLSource string `json:"osl_source,omitempty"`
	// ISLSource says where ISL came from: "client" (tokenizer count, the default and
	// omitted) or "usage" (usage.prompt_tokens, with --use-server-token-count).
	ISLSource string `json:"isl_source,omitempty"`
	// SLO is the goodput SLO used (metric name → max value in the metric's unit).
	SLO map[string]float64 `json:"slo,omitempty"`
}

// Stat returns the named distribution and whether it is present.
func (m Metrics) Stat(name string) (Stat, bool) {
	s, ok := m.Stats[name]
	return s, ok
}

// Value returns the named scalar's value (0 if absent).
func (m Metrics) Value(name string) float64 { return m.Scalars[name].Value }

// String renders the metrics as an aligned multi-line table, stats then scalars,
// each sorted by name.
func (m Metrics) String() string {
	var b strings.Builder
	names := make([]string, 0, len(m.Stats))
	for n := range m.Stats {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%-34s %s\n", n, m.Stats[n])
	}
	names = names[:0]
	for n := range m.Scalars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := m.Scalars[n]
		fmt.Fprintf(&b, "%-34s %.6g %s\n", n, s.Value, s.Unit)
	}
	return b.String()
}
