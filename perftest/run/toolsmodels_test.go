package run

import (
	"context"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// TestToolsAndModelMixAtSeedSize: the seed size (5,000 requests) with tools and a
// weighted model mix against the in-process mock: every request recorded by both
// sides, each a tool call, each side naming the same model for it, and metrics.json's
// per-model sections adding up to the run.
func TestToolsAndModelMixAtSeedSize(t *testing.T) {
	const n = 5000
	sc := scenario.Scenario{Name: "tools-mix", Config: loadgen.Config{
		Target:   loadgen.Target{ModelNames: []string{"base", "lora-a", "lora-b"}, ModelSelection: loadgen.ModelWeighted, ModelWeights: []float64{2, 1, 1}},
		Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:32"), OSL: distribution.MustSpec("fixed:8"), Tools: 4, ToolChoice: "required:3,function:1", Seed: 9},
		Load:     loadgen.Load{Concurrency: 32},
		Stop:     loadgen.Stop{Requests: n},
	}, Mock: mockserver.Config{Fast: true}}
	out, err := Run(context.Background(), sc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := out.Records()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := out.ServerRecords()
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != n || len(ss) != n {
		t.Fatalf("%d client and %d server records; want %d each", len(cs), len(ss), n)
	}
	model := map[string]string{}
	for _, s := range ss {
		model[s.RequestID] = s.Model
		if s.ToolCall == "" {
			t.Fatalf("server record %s: no tool call", s.RequestID)
		}
	}
	for _, c := range cs {
		if !c.OK() || c.ToolCalls != 1 || c.ToolCallTokens != c.OSL || model[c.RequestID] != c.Model {
			t.Fatalf("client record %d: ok %v, %d calls, tool tokens %d of OSL %d, model %q (server %q)",
				c.Index, c.OK(), c.ToolCalls, c.ToolCallTokens, c.OSL, c.Model, model[c.RequestID])
		}
	}
	sum := 0.0
	for _, m := range out.Metrics.Models {
		sum += m.Value("request_count")
	}
	if len(out.Metrics.Models) != 3 || sum != n {
		t.Errorf("%d model sections totalling %v requests; want 3 totalling %d", len(out.Metrics.Models), sum, n)
	}
	if base := out.Metrics.Models["base"].Value("request_count"); base < 0.45*n || base > 0.55*n {
		t.Errorf("base (weight 2 of 4) got %v of %d requests", base, n)
	}
}
