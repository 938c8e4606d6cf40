// Code generated from package metric's catalogue by `go test ./metric -run TestMetricsDocCurrent -update`. DO NOT EDIT.

package perftest

import "github.com/perfgate/perfgate/perftest/check"

// Per-request metrics for [Bound] and [Result.AssertBound] (see docs/metrics.md).
const (
	TTFT      = check.TTFT      // time_to_first_token
	TTFO      = check.TTFO      // time_to_first_output_token
	Latency   = check.Latency   // request_latency
	ITL       = check.ITL       // inter_token_latency
	OutputTPS = check.OutputTPS // output_token_throughput_per_user
	OSL       = check.OSL       // output_sequence_length
	ISL       = check.ISL       // input_sequence_length
)
