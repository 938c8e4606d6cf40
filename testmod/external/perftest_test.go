package external

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/record"
)

// The test API as a user's module sees it: perftest.Run with OnRecord, rules, a saved
// baseline and a regression gate that refuses a baseline of another workload.
func TestPerftestFromAnotherModule(t *testing.T) {
	sc := perftest.Scenario{
		Name: "external",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:  distribution.MustSpec("fixed:32"),
				OSL:  distribution.MustSpec("fixed:4"),
				Seed: 1,
			},
			Load: loadgen.Load{
				Concurrency: 2,
			},
			Stop: loadgen.Stop{
				Requests: 40,
			},
		},
	}
	var seen atomic.Int64
	res := perftest.Run(t, sc, run.OnRecord(func(c record.Client) {
		if c.OK() {
			seen.Add(1)
		}
	}))
	if seen.Load() != 40 {
		t.Errorf("OnRecord saw %d successful requests; want 40", seen.Load())
	}
	res.Assert(t, "error_rate <= 0", "osl_p50 >= 4", "isl_p50 >= 32", "tokenizer_match")

	dir := filepath.Join(t.TempDir(), "baseline")
	perftest.SaveBaseline(t, res, dir)
	baseline := perftest.Load(t, dir)

	// Another run of the same seeded workload passes the gate.
	perftest.Run(t, sc).AssertNoRegression(t, baseline, perftest.OSL)

	sc.ISL = distribution.MustSpec("fixed:64") // another workload is refused
	c := perftest.Capture(t, func(t testing.TB) {
		perftest.Run(t, sc).AssertNoRegression(t, baseline, perftest.OSL)
	})
	if !c.Failed() || !strings.HasPrefix(c.Text(), "perftest: regression gate: the baseline is another workload (isl differ)") {
		t.Errorf("a baseline of another workload was not refused:\n%s", c.Text())
	}

	// A rule with a typo is a mistake in the test, reported with its column.
	c = perftest.Capture(t, func(t testing.TB) { res.Assert(t, "ttft_p99 <= 25Oms") })
	if !c.Stopped() || !strings.Contains(c.Text(), `rule "ttft_p99 <= 25Oms", column 13`) {
		t.Errorf("a bad rule: %s", c.Text())
	}
}
