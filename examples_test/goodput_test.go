package examples_test

import (
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
)

// loadSensitive is a mock whose latency grows with load, like a real server's: each
// other request in flight adds 40 ms to TTFT and each other stream 1 ms to ITL.
func loadSensitive(concurrency, requests int) perftest.Scenario {
	return perftest.Scenario{
		Name: "goodput",
		Mock: mockserver.Config{
			TTFT: distribution.MustSpec("fixed:10"), ITL: distribution.MustSpec("fixed:2"),
			TTFTConcurrencyLin: 40 * time.Millisecond, ITLConcurrencyLin: time.Millisecond,
		},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:  distribution.MustSpec("fixed:64"),
				OSL:  distribution.MustSpec("fixed:16"),
				Seed: 3,
			},
			Load: loadgen.Load{
				Concurrency: concurrency,
			},
			Stop: loadgen.Stop{
				Requests: requests,
			},
		},
	}
}

// slo is the per-request objective of the goodput gate: at concurrency 2 a request
// sees TTFT ≈ 50 ms and gaps of ≈ 3 ms, at 16 TTFT ≈ 610 ms and gaps of ≈ 17 ms. A
// busy machine only adds latency, so the passing side is the one it can break: the SLO
// leaves it 250 ms of TTFT, and it bounds each request's median gap between chunks
// (ITLPercentile 0.5), which a stall in the decode moves only if it holds up most of
// the request's 15 gaps; a stall holds up 2 requests at a time (5 misses in 100 fail
// the gate). The failing side stays 310 ms and 7 ms over.
var slo = perftest.SLO{TTFT: 300 * time.Millisecond, ITL: 10 * time.Millisecond, ITLPercentile: 0.5}

// TestGoodputGate gates on goodput: at least 90% of requests must meet the SLO, shown
// with 95% confidence (Wilson lower bound), so 100 requests all good pass (lower bound
// 96.3%) but a lucky 20 would not (83.9%). At concurrency 2 the server keeps up; at 16
// its TTFT grows past the SLO and the same gate fails (48 requests show it: none good
// is an upper bound of 7.4%). The failing run goes through
// perftest.Capture, so the suite stays green while proving that the gate fails, and
// with which message.
func TestGoodputGate(t *testing.T) {
	t.Run("low load passes", func(t *testing.T) {
		res := perftest.Run(t, loadSensitive(2, 100))
		res.AssertGoodput(t, slo, 0.9)
	})
	t.Run("high load fails", func(t *testing.T) {
		c := perftest.Capture(t, func(t testing.TB) {
			res := perftest.Run(t, loadSensitive(16, 48))
			res.AssertGoodput(t, slo, 0.9)
		})
		if !c.Failed() {
			t.Fatal("the goodput gate passed at concurrency 16; want it to fail")
		}
		msg := c.Text()
		for _, want := range []string{"perftest: goodput = ", "want >= 90%", "slo:", "TTFT <= 300ms, ITL(p50) <= 10ms", "worst:", "seed:"} {
			if !strings.Contains(msg, want) {
				t.Errorf("failure message lacks %q:\n%s", want, msg)
			}
		}
		t.Logf("the gate's failure at concurrency 16:\n%s", msg)
	})
}
