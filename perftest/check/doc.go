// Package check holds perfgate's pass/fail decisions as pure functions, without the
// testing package. Given what a run recorded (latencies, token counts, per-request
// outcomes), each check returns a [Verdict] whose first line stands alone and whose
// remaining lines are labelled evidence (statistic, p-value, alpha, n, quantiles, worst
// requests).
//
// The package does not import "testing": package perftest turns a failing verdict into
// t.Errorf, and cmd/perfgate turns the same verdict into an exit code.
//
//	v := check.QuantileAtMost(check.Sample{Name: "TTFT", Unit: check.Seconds, Values: ttfts}, 0.99, 0.200)
//	if !v.Pass {
//		fmt.Fprintln(os.Stderr, v.With(check.Context{Scenario: "chat", Seed: 1}))
//	}
//
// Units: durations are float64 seconds everywhere (as in package distribution) and are
// printed as milliseconds or seconds. Quantiles use numpy's default (linear) definition,
// computed by [distribution.Percentile], with p in [0, 1].
//
// A check never panics on data: an empty sample or an invalid parameter gives a failing
// verdict that says so, since a gate that cannot decide must not pass.
package check
