package examples_test

import (
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
)

var update = flag.Bool("update", false, "re-record testdata/baseline")

// server is a mock with the given TTFT and ITL (ms), both with 10% seeded jitter.
func server(ttftMs, itlMs float64) perftest.Scenario {
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
				Seed: 1,
			},
			Load: loadgen.Load{
				Concurrency: 8,
			},
			Stop: loadgen.Stop{
				Requests: 48,
				// The first requests of a run pay for connection set-up and a cold runtime.
				WarmupRequests: 8,
			},
		},
	}
}

// The baseline server's TTFT and ITL (ms). They are long enough that a busy machine's
// scheduling delays (a few ms at a load average of 10 on 2 cores) stay well under the
// gate's 5% margin, while the 15% slowdown below is still found.
const baseTTFT, baseITL = 100, 10

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// TestRegressionGate gates runs on a regression: each statistic's ratio
// current/baseline gets an interval from the runs' spread (Welch's t on the logs), and
// a metric regresses only when the interval excludes no change and the ratio is worse
// by at least 5%. The baseline of 5 runs is committed in testdata/baseline (re-record
// it with `go test ./examples_test -run TestRegressionGate -update`; the package comes
// before the test binary's flags).
//
// A machine busier than the one that recorded the baseline makes every run slower: the
// gate rightly calls that a regression, so "the same server passes" cannot be asked of
// a committed baseline on a loaded CI machine. It is asked of an interleaved A/B gate
// (A B A B …, AssertABNoRegression), where the machine's load touches both sides
// alike. A 15% slower server is gated against the committed baseline: a busy machine
// only widens that gap, and when its noise leaves a statistic inconclusive the gate
// adds runs (3, 6, then 12) before it answers.
func TestRegressionGate(t *testing.T) {
	testutil.Long(t) // 7–16 s: make test stays under 10 minutes on a fresh 2-core machine
	if *update {
		// SaveBaseline keeps what LoadBaseline reads; the reports are not worth committing.
		perftest.SaveBaseline(t, perftest.RunRuns(t, server(baseTTFT, baseITL), 5), "testdata/baseline")
	}
	baseline := perftest.LoadBaseline(t, "testdata/baseline")
	gate := perftest.Gate{Runs: 3, MaxRuns: 12}

	t.Run("same server passes", func(t *testing.T) {
		// The mock's jitter and the machine's load differ run to run: that noise must
		// pass. Three runs a side: an inconclusive statistic passes, and no more runs
		// are needed to show that nothing regressed at the family alpha.
		perftest.AssertABNoRegression(t, server(baseTTFT, baseITL), server(baseTTFT, baseITL), perftest.Gate{Runs: 3, MaxRuns: 3})
	})
	t.Run("15% slower fails", func(t *testing.T) {
		c := perftest.Capture(t, func(t testing.TB) {
			// The mock's latencies are the server here: not the workload, so the
			// baseline is compared, and the gate says by how much they moved.
			// FailInconclusive: a 15% slowdown is never "no regression", so the gate fails
			// even when a machine's noise leaves it undecided after 12 runs.
			g := gate
			g.FailInconclusive = true
			perftest.AssertNoRegression(t, server(1.15*baseTTFT, 1.15*baseITL), baseline, g)
		})
		if !c.Failed() {
			t.Fatal("a 15% slowdown passed the regression gate")
		}
		msg := c.Text()
		// Which primary metrics cross the line first depends on the machine's own noise
		// (under CI load the gate may stop at its first look with ITL and latency
		// regressed and TTFT still inconclusive, or end inconclusive after 12 runs);
		// what must hold is the headline, each metric's change, and where each side ran.
		if !strings.HasPrefix(msg, "perftest: regression gate: regressed: ") && !strings.HasPrefix(msg, "perftest: regression gate: inconclusive: ") {
			t.Errorf("failure message does not start with the gate's verdict:\n%s", msg)
		}
		for _, want := range []string{"target differs:", "% vs baseline"} {
			if !strings.Contains(msg, want) {
				t.Errorf("failure message lacks %q:\n%s", want, msg)
			}
		}
		t.Logf("the gate's failure on a 15%% slowdown:\n%s", msg)
	})
	t.Run("another workload is refused", func(t *testing.T) {
		sc := server(baseTTFT, baseITL)
		sc.ISL, sc.Concurrency = distribution.MustSpec("fixed:256"), 2
		c := perftest.Capture(t, func(t testing.TB) {
			perftest.AssertNoRegression(t, sc, baseline, gate)
		})
		if msg := c.Text(); !c.Failed() || !strings.HasPrefix(msg, "perftest: regression gate: the baseline is another workload (isl, concurrency differ)") {
			t.Errorf("a baseline of another workload was not refused:\n%s", msg)
		}
	})
}
