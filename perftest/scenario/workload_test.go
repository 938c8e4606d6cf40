package scenario

import (
	"fmt"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
)

func TestDiffWorkload(t *testing.T) {
	a := Scenario{Config: loadgen.Config{Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:64"), Seed: 1}, Load: loadgen.Load{Concurrency: 2}, Stop: loadgen.Stop{Requests: 10}}}
	b := a
	b.Seed, b.Requests, b.Name = 2, 500, "other" // the sample, not the workload
	b.Mock.Seed = 9
	if ds := DiffWorkload(a, b); len(ds) != 0 {
		t.Errorf("seed, requests and name: DiffWorkload = %v, want none", ds)
	}
	b.ISL, b.Rate, b.Mock = distribution.MustSpec("fixed:256"), 5, mockserver.Config{ITLJitterCV: 0.1}
	got := fmt.Sprint(DiffWorkload(a, b))
	want := "[isl: baseline fixed:64, current fixed:256 rate: baseline (unset), current 5 arrival: baseline (unset), current poisson mock.itl_jitter_cv: baseline (unset), current 0.1]"
	if got != want {
		t.Errorf("DiffWorkload =\n%s\nwant\n%s", got, want)
	}
	if ds := DiffWorkload(a, b, "isl", "rate", "arrival", "mock"); len(ds) != 0 {
		t.Errorf("all ignored: DiffWorkload = %v, want none", ds)
	}
}
