package reportgen

import (
	"strings"

	"github.com/perfgate/perfgate/record"
)

// metricInfo is how a metric is named and shown: AIPerf's tag in the JSON export,
// AIPerf's header in the console table and CSV, and whether the console shows it.
type metricInfo struct {
	Tag     string // export key (AIPerf's tag)
	Header  string // human-readable name
	Console bool   // shown in the console summary table by default
}

// statOrder lists the distribution metrics in AIPerf's console order, then perfgate's.
var statOrder = []string{
	record.MetricTTFT,
	record.MetricTTFO,
	record.MetricTTST,
	record.MetricRequestLatency,
	record.MetricITL,
	record.MetricOutputTokenThroughputPerUser,
	record.MetricOSL,
	record.MetricOutputTokens,
	record.MetricReasoningTokens,
	record.MetricISL,
	record.MetricICL,
	record.MetricPrefillThroughputPerUser,
	record.MetricQueueTime,
	record.MetricUsageOSL,
	record.MetricTTFTVLLM,
	record.MetricITLVLLM,
	record.MetricTPOTVLLM,
}

// scalarOrder lists the single-value metrics in AIPerf's console order.
var scalarOrder = []string{
	record.MetricOutputTokenThroughput,
	record.MetricTotalTokenThroughput,
	record.MetricRequestThroughput,
	record.MetricGoodput,
	record.MetricRequestCount,
	record.MetricGoodRequestCount,
	record.MetricErrorCount,
	record.MetricErrorRate,
	record.MetricBenchmarkDuration,
	record.MetricTotalISL,
	record.MetricTotalOSL,
	record.MetricTotalOutputTokens,
	record.MetricTotalReasoning,
}

var metricInfos = map[string]metricInfo{
	record.MetricTTFT:                         {"time_to_first_token", "Time to First Token", true},
	record.MetricTTST:                         {"time_to_second_token", "Time to Second Token", true},
	record.MetricTTFO:                         {"time_to_first_output_token", "Time to First Output Token", true},
	record.MetricOutputTokens:                 {"output_token_count", "Output Token Count", true},
	record.MetricReasoningTokens:              {"reasoning_token_count", "Reasoning Token Count", true},
	record.MetricRequestLatency:               {"request_latency", "Request Latency", true},
	record.MetricITL:                          {"inter_token_latency", "Inter Token Latency", true},
	record.MetricOutputTokenThroughputPerUser: {"output_token_throughput_per_user", "Output Token Throughput Per User", true},
	record.MetricOSL:                          {"output_sequence_length", "Output Sequence Length", true},
	record.MetricISL:                          {"input_sequence_length", "Input Sequence Length", true},
	record.MetricICL:                          {"inter_chunk_latency", "Inter Chunk Latency", false},
	record.MetricPrefillThroughputPerUser:     {"prefill_throughput_per_user", "Prefill Throughput Per User", false},
	record.MetricQueueTime:                    {"client_queue_time", "Client Queue Time", false},
	record.MetricUsageOSL:                     {"usage_completion_tokens", "Usage Completion Tokens", false},
	record.MetricTTFTVLLM:                     {"time_to_first_token_vllm", "Time to First Token (vLLM)", false},
	record.MetricITLVLLM:                      {"inter_token_latency_vllm", "Inter Token Latency (vLLM)", false},
	record.MetricTPOTVLLM:                     {"time_per_output_token_vllm", "Time per Output Token (vLLM)", false},

	record.MetricOutputTokenThroughput: {"output_token_throughput", "Output Token Throughput", true},
	record.MetricTotalTokenThroughput:  {"total_token_throughput", "Total Token Throughput", false},
	record.MetricRequestThroughput:     {"request_throughput", "Request Throughput", true},
	record.MetricGoodput:               {"goodput", "Goodput", true},
	record.MetricRequestCount:          {"request_count", "Request Count", true},
	record.MetricGoodRequestCount:      {"good_request_count", "Good Request Count", false},
	record.MetricErrorCount:            {"error_request_count", "Error Request Count", true},
	record.MetricErrorRate:             {"error_rate", "Error Rate", false},
	record.MetricBenchmarkDuration:     {"benchmark_duration", "Benchmark Duration", false},
	record.MetricTotalISL:              {"total_isl", "Total Input Sequence Length", false},
	record.MetricTotalOSL:              {"total_osl", "Total Output Sequence Length", false},
	record.MetricTotalOutputTokens:     {"total_output_tokens", "Total Output Tokens", false},
	record.MetricTotalReasoning:        {"total_reasoning_tokens", "Total Reasoning Tokens", false},
}

// info returns the naming of a metric; unknown metrics get their own name as tag and a
// title-cased header, and are left out of the console table.
func info(name string) metricInfo {
	if mi, ok := metricInfos[name]; ok {
		return mi
	}
	words := strings.Split(name, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return metricInfo{Tag: name, Header: strings.Join(words, " ")}
}

// aiperfUnit spells a unit as AIPerf does ("sec", "requests/sec", "tokens/sec").
func aiperfUnit(u string) string {
	switch u {
	case "s", "sec", "seconds":
		return "sec"
	case "req/s", "requests/s", "request/s", "requests/sec":
		return "requests/sec"
	case "tokens/s", "tok/s", "tokens/sec":
		return "tokens/sec"
	case "tokens/s/user", "tokens/sec/user":
		return "tokens/sec/user"
	case "req", "requests":
		return "requests"
	case "tok", "tokens":
		return "tokens"
	}
	return u
}

// ordered returns the names of m's stats (or scalars) in report order: the known
// order first, then any others sorted by name.
func ordered(known []string, present map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range known {
		if present[n] {
			out = append(out, n)
			seen[n] = true
		}
	}
	var rest []string
	for n := range present {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sortStrings(rest)
	return append(out, rest...)
}

func statNames(m record.Metrics) []string {
	p := map[string]bool{}
	for n := range m.Stats {
		p[n] = true
	}
	return ordered(statOrder, p)
}

func scalarNames(m record.Metrics) []string {
	p := map[string]bool{}
	for n := range m.Scalars {
		p[n] = true
	}
	return ordered(scalarOrder, p)
}

// Tag returns the AIPerf tag a metric is exported under in profile_export_aiperf.json
// (the record.Metric… name itself for metrics AIPerf lacks).
func Tag(name string) string { return info(name).Tag }

// Label returns a metric's row label in the console table, the CSV and the HTML
// report: its header with the unit in parentheses ("Request Latency (ms)").
func Label(name, unit string) string { return label(info(name).Header, unit) }
