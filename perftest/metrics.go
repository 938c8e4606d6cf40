// Code generated from package metric's catalogue by `go test ./metric -run TestMetricsDocCurrent -update`. DO NOT EDIT.

package perftest

import "github.com/perfgate/perfgate/perftest/check"

// Per-request metrics for [Bound] and [Result.AssertBound] (see docs/metrics.md).
const (
	TTFT               = check.TTFT               // time_to_first_token
	TTFO               = check.TTFO               // time_to_first_output_token
	Latency            = check.Latency            // request_latency
	ITL                = check.ITL                // inter_token_latency
	OutputTPS          = check.OutputTPS          // output_token_throughput_per_user
	OSL                = check.OSL                // output_sequence_length
	ISL                = check.ISL                // input_sequence_length
	HTTPBlocked        = check.HTTPBlocked        // http_req_blocked
	HTTPDNSLookup      = check.HTTPDNSLookup      // http_req_dns_lookup
	HTTPConnecting     = check.HTTPConnecting     // http_req_connecting
	HTTPTLSHandshaking = check.HTTPTLSHandshaking // http_req_tls_handshaking
	HTTPSending        = check.HTTPSending        // http_req_sending
	HTTPWaiting        = check.HTTPWaiting        // http_req_waiting
	HTTPReceiving      = check.HTTPReceiving      // http_req_receiving
)
