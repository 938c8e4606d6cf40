package examples_test

import (
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
)

var update = flag.Bool("update", false, "re-record testdata/baseline")

// server is a mock with the given TTFT and ITL (ms), both with 10% seeded jitter.
func server(ttftMs, itlMs float64, seed uint64) perftest.Scenario {
	return perftest.Scenario{
		Name: "regression",
		Mock: mockserver.Config{
			TTFT: distribution.MustSpec("fixed:" + ftoa(ttftMs)), ITL: distribution.MustSpec("fixed:" + ftoa(itlMs)),
			TTFTJitterCV: 0.1, ITLJitterCV: 0.1,
		},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:  distribution.MustSpec("fixed:64"),
				OSL:  distribution.MustSpec("fixed:8"),
				Seed: seed,
			},
			Load: loadgen.Load{
				Concurrency: 8,
			},
			Stop: loadgen.Stop{
				Requests: 120,
				// The first requests of a run pay for connection set-up and a cold runtime.
				WarmupRequests: 8,
			},
		},
	}
}

// The baseline server's TTFT and ITL (ms). They are long enough that a busy machine's
// scheduling delays (a few ms at a load average of 10 on 2 cores, measured in the same
// run as the baseline's quiet recording) stay well under the gate's 5% threshold, while
// the 10% slowdown below is still found.
const baseTTFT, baseITL = 300, 20

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// TestRegressionGate compares runs with a baseline recording committed in
// testdata/baseline (re-record it with `go test ./examples_test -run
// TestRegressionGate -update`; the package comes before the test binary's flags). The gate fails a metric only if its median moved by at least 5%
// and a Mann-Whitney U test says the change is real at alpha = 0.01.
func TestRegressionGate(t *testing.T) {
	if *update {
		// SaveBaseline keeps what Load reads; the reports are not worth committing.
		perftest.SaveBaseline(t, perftest.Run(t, server(baseTTFT, baseITL, 1)), "testdata/baseline")
	}
	baseline := perftest.Load(t, "testdata/baseline")

	t.Run("same server passes", func(t *testing.T) {
		// Another seed, so the jitter differs: run-to-run noise must pass.
		res := perftest.Run(t, server(baseTTFT, baseITL, 2))
		res.AssertNoRegression(t, baseline)
	})
	t.Run("10% slower fails", func(t *testing.T) {
		c := perftest.Capture(t, func(t testing.TB) {
			res := perftest.Run(t, server(1.1*baseTTFT, 1.1*baseITL, 3))
			// The mock's latencies are the "server" here: they may differ from the
			// baseline's, and the gate measures by how much.
			res.AssertNoRegressionWith(t, baseline, perftest.Regression{IgnoreWorkload: []string{"mock"}})
		})
		if !c.Failed() {
			t.Fatal("a 10% slowdown passed the regression gate")
		}
		msg := c.Text()
		for _, want := range []string{"perftest: TTFT regressed: p50 ", "perftest: ITL regressed: p50 ", "histogram:"} {
			if !strings.Contains(msg, want) {
				t.Errorf("failure message lacks %q:\n%s", want, msg)
			}
		}
		t.Logf("the gate's failure on a 10%% slowdown:\n%s", msg)
	})
	t.Run("another workload is refused", func(t *testing.T) {
		sc := server(baseTTFT, baseITL, 4)
		sc.ISL, sc.Concurrency = distribution.MustSpec("fixed:256"), 2
		c := perftest.Capture(t, func(t testing.TB) {
			perftest.Run(t, sc).AssertNoRegression(t, baseline)
		})
		if msg := c.Text(); !c.Failed() || !strings.HasPrefix(msg, "perftest: baseline is another workload: isl, concurrency differ") {
			t.Errorf("a baseline of another workload was not refused:\n%s", msg)
		}
	})
}
