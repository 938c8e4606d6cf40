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
	b.Requests, b.Name, b.Validity.CacheBust = 500, "other", true // the sample's size and the salt, not the workload
	b.Mock = mockserver.Config{ITLJitterCV: 0.1, Seed: 9}         // what answered, not what was sent
	if ds := DiffWorkload(a, b); len(ds) != 0 {
		t.Errorf("requests, name, salt and mock: DiffWorkload = %v, want none", ds)
	}
	if got := fmt.Sprint(DiffTarget(a, b)); got != "[mock.itl_jitter_cv: baseline (unset), current 0.1 mock.seed: baseline 1, current 9]" {
		t.Errorf("DiffTarget = %s; want the mock's jitter and seed", got)
	}
	b.ISL, b.Rate, b.Seed = distribution.MustSpec("fixed:256"), 5, 2
	got := fmt.Sprint(DiffWorkload(a, b))
	want := "[isl: baseline fixed:64, current fixed:256 seed: baseline 1, current 2 rate: baseline (unset), current 5 arrival: baseline (unset), current poisson]"
	if got != want {
		t.Errorf("DiffWorkload =\n%s\nwant\n%s", got, want)
	}
	if ds := DiffWorkload(a, b, "isl", "rate", "arrival", "seed"); len(ds) != 0 {
		t.Errorf("all ignored: DiffWorkload = %v, want none", ds)
	}
}

// Where the requests went is not the workload: the same server on another port is the
// same workload, and the URLs are shown as the target's difference.
func TestWorkloadIsNotTarget(t *testing.T) {
	a := Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{"http://127.0.0.1:18030"}}}}
	b := a
	b.URLs = []string{"http://127.0.0.1:18031"}
	if ds := DiffWorkload(a, b); len(ds) != 0 {
		t.Errorf("another port: DiffWorkload = %v, want none", ds)
	}
	if got := fmt.Sprint(DiffTarget(a, b)); got != "[urls: baseline http://127.0.0.1:18030, current http://127.0.0.1:18031]" {
		t.Errorf("DiffTarget = %s", got)
	}
	b.API = loadgen.EndpointCompletions
	if got := fmt.Sprint(DiffWorkload(a, b)); got != "[endpoint_type: baseline chat, current completions]" {
		t.Errorf("another endpoint kind: DiffWorkload = %s", got)
	}
}
