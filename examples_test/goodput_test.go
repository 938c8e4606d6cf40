package examples_test

import (
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
)

// loadSensitive is a mock whose latency grows with load, like a real server's: each
// other request in flight adds 3 ms to TTFT and each other stream 0.25 ms to ITL.
func loadSensitive(concurrency int) perftest.Scenario {
	return perftest.Scenario{
		Name:        "goodput",
		ISL:         spec("fixed:64"),
		OSL:         spec("fixed:16"),
		Concurrency: concurrency,
		Requests:    120,
		Seed:        3,
		Mock: mockserver.Config{
			TTFT: spec("fixed:5"), ITL: spec("fixed:1"),
			TTFTConcurrencyLinMs: 3, ITLConcurrencyLinMs: 0.25,
		},
	}
}

// slo is the per-request objective of the goodput gate.
var slo = perftest.SLO{TTFT: 30 * time.Millisecond, ITL: 3 * time.Millisecond}

// TestGoodputGate gates on goodput: at least 95% of requests must meet the SLO, shown
// with 95% confidence (Wilson lower bound), so 120 requests all good pass (lower bound
// 96.9%) but a lucky 20 would not. At concurrency 2 the server keeps up; at 16 its TTFT
// grows past the SLO and the same gate fails. The failing run goes through
// perftest.Capture, so the suite stays green while proving that the gate fails, and
// with which message.
func TestGoodputGate(t *testing.T) {
	t.Run("low load passes", func(t *testing.T) {
		res := perftest.Run(t, loadSensitive(2))
		res.AssertGoodput(t, slo, 0.95)
	})
	t.Run("high load fails", func(t *testing.T) {
		c := perftest.Capture(t, func(t testing.TB) {
			res := perftest.Run(t, loadSensitive(16))
			res.AssertGoodput(t, slo, 0.95)
		})
		if !c.Failed() {
			t.Fatal("the goodput gate passed at concurrency 16; want it to fail")
		}
		msg := c.Text()
		for _, want := range []string{"perftest: goodput = ", "want >= 95%", "slo:", "TTFT <= 30ms, ITL(mean) <= 3ms", "worst:", "seed:"} {
			if !strings.Contains(msg, want) {
				t.Errorf("failure message lacks %q:\n%s", want, msg)
			}
		}
		t.Logf("the gate's failure at concurrency 16:\n%s", msg)
	})
}
