// Code generated from README.md by examples_test's TestREADMEQuickStart; DO NOT EDIT.

package quickstart_test

import (
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
)

func TestQuickStart(t *testing.T) {
	res := perftest.Run(t, perftest.Scenario{
		Name:      "quickstart",
		Tokenizer: "gpt2",
		Config: loadgen.Config{
			// URLs empty = the in-process mock server on 127.0.0.1, a free port
			Target: loadgen.Target{API: loadgen.EndpointCompletions},
			Workload: loadgen.Workload{
				Corpus: loadgen.CorpusVLLM,                          // vLLM's RandomDataset, reproduced from Seed
				ISL:    distribution.MustSpec("vllm-range:128,0.3"), // --random-input-len 128 --random-range-ratio 0.3
				OSL:    distribution.MustSpec("vllm-range:128,0.3"),
				Seed:   0,
			},
			Load: loadgen.Load{Concurrency: 10},
			Stop: loadgen.Stop{Requests: 200},
		},
		Mock: mockserver.Config{TTFT: distribution.MustSpec("fixed:2"), ITL: distribution.MustSpec("fixed:0.2")},
	})
	res.AssertISL(t, distribution.VLLMRange{Len: 128, Ratio: 0.3}) // what the server received
	res.AssertOSL(t, distribution.VLLMRange{Len: 128, Ratio: 0.3}) // what it generated
	res.Assert(t,
		"tokenizer_match", // client and server counted alike
		"error_rate <= 0",
		"ttft_p99 <= 1s",
	)
}
