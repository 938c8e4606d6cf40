package run

import (
	"context"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/servermetrics"
)

// TestRunServerMetrics: a Scenario with ServerMetrics scrapes the mock (a path
// resolves against it) and its Outcome carries deltas equal to what the mock served,
// with no artifact directory too (the perftest path). Load reads them back.
func TestRunServerMetrics(t *testing.T) {
	sc := scenario.Scenario{
		Mock:          mockserver.Config{Fast: true},
		ServerMetrics: servermetrics.Config{URLs: []string{"/metrics"}},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				IgnoreEOS: true,
				OSL:       distribution.Spec{Distribution: distribution.Fixed{Value: 5}},
			},
			Load: loadgen.Load{
				Concurrency: 2,
			},
			Stop: loadgen.Stop{
				Requests: 6,
			},
		},
	}
	for _, dir := range []string{"", t.TempDir()} {
		out, err := Run(context.Background(), sc, dir)
		if err != nil {
			t.Fatal(err)
		}
		var osl int
		_, ss := records(t, out) // on disk when dir is set
		for _, r := range ss {
			osl += r.OSL
		}
		if out.ServerMetrics == nil || len(out.ServerMetrics.Endpoints) != 1 {
			t.Fatalf("dir %q: ServerMetrics = %+v, want one endpoint", dir, out.ServerMetrics)
		}
		g := out.ServerMetrics.Endpoints[0].Derived.GenerationTokens
		if g == nil || *g != float64(osl) || osl != 30 {
			t.Errorf("dir %q: generation tokens delta = %v, want the mock's OSL sum %d (= 30)", dir, g, osl)
		}
		if dir == "" {
			continue
		}
		back, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if back.ServerMetrics == nil || *back.ServerMetrics.Endpoints[0].Derived.GenerationTokens != float64(osl) {
			t.Errorf("Load: ServerMetrics = %+v, want the same deltas", back.ServerMetrics)
		}
	}
}
