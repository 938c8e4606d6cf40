// Code generated from package metric's catalogue by `go test ./metric -run TestMetricsDocCurrent -update`. DO NOT EDIT.

package check

// Per-request metrics that [Bound], [Metric.Sample] and the rules read, by their rule
// names. Every per-request metric of package metric's catalogue is a [Metric] (its
// name, e.g. Metric("time_to_second_token")); these have a short name. Latencies
// are in seconds here, lengths in tokens.
const (
	// TTFT is time_to_first_token: First chunk with generated text − request sent; chunks without text (a role-only first chunk) are skipped. Streams only.
	TTFT Metric = "ttft"
	// TTFO is time_to_first_output_token: First chunk with non-reasoning output text − request sent; equals TTFT without reasoning. Streams only.
	TTFO Metric = "ttfo"
	// Latency is request_latency: Last byte of the answer − request sent.
	Latency Metric = "latency"
	// ITL is inter_token_latency: Per request, (request latency − TTFT) / (OSL − 1), for streamed requests with OSL ≥ 2.
	ITL Metric = "itl"
	// OutputTPS is output_token_throughput_per_user: Per request, 1000 / ITL: output tokens per second after the first token.
	OutputTPS Metric = "output_tps_per_user"
	// OSL is output_sequence_length: Output tokens of a request, reasoning included: the client tokenizer's count of the received text, or usage.completion_tokens with --use-server-token-count.
	OSL Metric = "osl"
	// ISL is input_sequence_length: Input tokens of a request: the client tokenizer's count, or usage.prompt_tokens with --use-server-token-count.
	ISL Metric = "isl"
)
