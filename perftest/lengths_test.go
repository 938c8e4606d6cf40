package perftest

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/check"
)

// TestRegressionMetricMeansOneThing: in AssertNoRegression's metrics, OutputTPS is the
// per-user throughput, as in rules and bounds (compared request by request: runs record
// no run statistic of it), and OutputThroughput the run's total output throughput, the
// gate's output_tps, which the default metrics compare as before.
func TestRegressionMetricMeansOneThing(t *testing.T) {
	for _, c := range []struct {
		m    check.Metric
		q    float64
		want string // "" = no run statistic: compared request by request
	}{
		{TTFT, 0.5, "ttft_p50"}, {ITL, 0.9, "itl_p90"}, {Latency, 0.99, "latency_p99"},
		{OutputThroughput, 0.5, "output_tps"}, {OutputThroughput, 0.99, "output_tps"},
		{OutputTPS, 0.5, ""}, {ISL, 0.5, ""}, {OSL, 0.5, ""},
	} {
		got, ok := runStatOf(c.m, c.q)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("runStatOf(%s, %v) = %q, %v; want %q", c.m, c.q, got, ok, c.want)
		}
	}
	// OutputTPS names the per-user throughput: a regression in it is found request by
	// request, and the verdict says per user.
	for _, c := range []struct {
		m         check.Metric
		want, not string
	}{{OutputTPS, "output tokens/s per user", "output token throughput"}, {OutputThroughput, "output token throughput", "per user"}} {
		l := &logTB{TB: t}
		healthy.result("current").AssertNoRegression(l, healthy.result("baseline"), c.m)
		text := strings.Join(l.logs, "\n")
		if !strings.Contains(text, c.want) || strings.Contains(text, c.not) {
			t.Errorf("AssertNoRegression(%s) does not compare %s:\n%s", c.m, c.want, text)
		}
	}
}
