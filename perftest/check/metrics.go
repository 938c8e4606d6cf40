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
	// HTTPBlocked is http_req_blocked: Start of the connection step → request sent, less DNS lookup and connecting: taking a connection from the pool and arming it (k6's http_req_blocked, HAR's blocked).
	HTTPBlocked Metric = "http_req_blocked"
	// HTTPDNSLookup is http_req_dns_lookup: Resolving the host name of a new connection; 0 for an IP address or a reused connection (k6's http_req_looking_up, HAR's dns).
	HTTPDNSLookup Metric = "http_req_dns_lookup"
	// HTTPConnecting is http_req_connecting: Opening a new connection: TCP connect plus the TLS handshake, as HAR's connect and AIPerf count it; 0 on a reused connection.
	HTTPConnecting Metric = "http_req_connecting"
	// HTTPTLSHandshaking is http_req_tls_handshaking: The TLS handshake's part of http_req_connecting (k6's http_req_tls_handshaking, HAR's ssl); 0 for plain HTTP or a reused connection.
	HTTPTLSHandshaking Metric = "http_req_tls_handshaking"
	// HTTPSending is http_req_sending: Request sent → its last byte written (k6's http_req_sending, HAR's send).
	HTTPSending Metric = "http_req_sending"
	// HTTPWaiting is http_req_waiting: Last request byte written → first response byte: time to first byte (k6's http_req_waiting, HAR's wait).
	HTTPWaiting Metric = "http_req_waiting"
	// HTTPReceiving is http_req_receiving: First response byte → last (k6's http_req_receiving, HAR's receive): request_latency − sending − waiting.
	HTTPReceiving Metric = "http_req_receiving"
)
