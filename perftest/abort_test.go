package perftest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// errTB records Errorf instead of failing the test, and passes the rest on.
type errTB struct {
	testing.TB
	errs []string
}

func (e *errTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestRunReportsAbort: a run an abort rule stopped (the mock failing 80% of its requests
// for two minutes unless stopped) fails the Go test in Run, the reason first, whatever
// the test asserts after; AssertObjectives does not report it twice but says it
// failed. A threshold's stop is an INVALID measurement in Run.
func TestRunReportsAbort(t *testing.T) {
	storm := func(a scenario.Abort) Scenario {
		return Scenario{
			Name: "storm",
			Config: loadgen.Config{
				Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:16"), OSL: distribution.MustSpec("fixed:4"), Seed: 1},
				Load:     loadgen.Load{Concurrency: 4},
				Stop:     loadgen.Stop{Duration: 2 * time.Minute},
			},
			Mock:       mockserver.Config{Fast: true, Faults: mockserver.Faults{ErrorRate: 0.8}},
			Objectives: scenario.Objectives{Rules: []string{"error_rate<=1"}},
			Abort:      a,
		}
	}
	e := &errTB{TB: t}
	res := Run(e, storm(scenario.Abort{Rules: []string{"error_rate>0.5"}}))
	if len(e.errs) != 1 || !strings.HasPrefix(e.errs[0], "perftest: ABORTED: abort rule error_rate>0.5 held at ") {
		t.Fatalf("Run reported %q", e.errs)
	}
	if res.AssertObjectives(e) || len(e.errs) != 1 {
		t.Errorf("AssertObjectives passed, or reported the abort again: %q", e.errs)
	}
	e = &errTB{TB: t}
	Run(e, storm(scenario.Abort{FailedRequestThreshold: 0.5}))
	if len(e.errs) != 1 || !strings.Contains(e.errs[0], "perftest: INVALID measurement: aborted: failed-request threshold: ") {
		t.Errorf("Run reported %q", e.errs)
	}
}
