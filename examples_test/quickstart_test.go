package examples_test

import (
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
)

// TestQuickStart is the README's quick start (which testmod/external/quickstart runs
// as written, outside this module): the in-process mock server with
// the gpt2 tokenizer, vLLM's random dataset (range ratio 0.3 around 128 input and 128
// output tokens, reproduced from seed 0), ten concurrent clients. It checks that the
// server received the configured input lengths and generated the configured output
// lengths, and that client and server counted every prompt alike.
func TestQuickStart(t *testing.T) {
	res := perftest.Run(t, perftest.Scenario{
		Name:      "quickstart",
		Tokenizer: "gpt2",
		Mock:      mockserver.Config{TTFT: distribution.MustSpec("fixed:2"), ITL: distribution.MustSpec("fixed:0.2")},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API: loadgen.EndpointCompletions,
			},
			Workload: loadgen.Workload{
				Corpus: loadgen.CorpusVLLM,
				ISL:    distribution.MustSpec("vllm-range:128,0.3"),
				OSL:    distribution.MustSpec("vllm-range:128,0.3"),
				Seed:   0,
			},
			Load: loadgen.Load{
				Concurrency: 10,
			},
			Stop: loadgen.Stop{
				Requests: 200,
			},
		},
	})
	res.AssertISL(t, distribution.VLLMRange{Len: 128, Ratio: 0.3})
	res.AssertOSL(t, distribution.VLLMRange{Len: 128, Ratio: 0.3})
	res.Assert(t, "tokenizer_match", "error_rate <= 0", "ttft_p99 <= 1s")
}
