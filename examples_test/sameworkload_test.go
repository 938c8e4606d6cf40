package examples_test

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
)

// workload is a run whose latency does not matter: only what the mock received.
func workload(name, corpus, isl, osl string, seed uint64) perftest.Scenario {
	return perftest.Scenario{
		Name: name,
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API: loadgen.EndpointCompletions,
			},
			Workload: loadgen.Workload{
				Corpus: corpus,
				ISL:    distribution.MustSpec(isl),
				OSL:    distribution.MustSpec(osl),
				Seed:   seed,
			},
			Load: loadgen.Load{
				Concurrency: 8,
			},
			Stop: loadgen.Stop{
				Requests: 200,
			},
		},
	}
}

// TestSameWorkload asks whether two tools sent the same workload, judged on what the
// server received (its recording), not on what each tool says it sent. vLLM's random
// dataset with range ratio 0.3 draws lengths uniformly from [89, 167]; a second tool
// configured with that uniform range and another seed sends different prompts but the
// same length distributions, and the check passes. A tool configured with normal:128,10
// sends the same mean with another shape, and the check fails on ISL and OSL.
func TestSameWorkload(t *testing.T) {
	vllm := perftest.Run(t, workload("vllm", loadgen.CorpusVLLM, "vllm-range:128,0.3", "vllm-range:128,0.3", 0))
	other := perftest.Run(t, workload("other-tool", loadgen.CorpusRandom, "uniformint:89,167", "uniformint:89,167", 42))
	vllm.AssertSameWorkload(t, other)

	c := perftest.Capture(t, func(t testing.TB) {
		normal := perftest.Run(t, workload("normal", loadgen.CorpusRandom, "normal:128,10", "normal:128,10", 42))
		vllm.AssertSameWorkload(t, normal)
	})
	msgs := c.Messages()
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0], "perftest: ISL: vllm and normal differ: KS D=") ||
		!strings.HasPrefix(msgs[1], "perftest: OSL: vllm and normal differ: KS D=") {
		t.Errorf("comparing uniform with normal lengths: got %d failures, want ISL and OSL:\n%s", len(msgs), c.Text())
	}
}
