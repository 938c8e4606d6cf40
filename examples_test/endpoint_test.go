package examples_test

import (
	"os"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest"
)

// TestRealEndpoint benchmarks a real OpenAI-compatible server when PERFGATE_URL names
// one (e.g. http://127.0.0.1:8000 for `vllm serve`), with PERFGATE_MODEL as the model
// and PERFGATE_TOKENIZER as the tokenizer that counts like it (a Hugging Face id, a
// tokenizer.json, a directory or a built-in name; default gpt2), and PERFGATE_API_KEY
// as its key if it needs one. It skips otherwise. Lengths and the tokenizer match are
// checked on what the client sent and on the server's usage.prompt_tokens.
func TestRealEndpoint(t *testing.T) {
	url := os.Getenv("PERFGATE_URL")
	if url == "" {
		t.Skip("PERFGATE_URL is not set: set it (and PERFGATE_MODEL, PERFGATE_TOKENIZER) to benchmark a real server, " +
			"e.g. PERFGATE_URL=http://127.0.0.1:8000 PERFGATE_MODEL=Qwen/Qwen3-0.6B PERFGATE_TOKENIZER=Qwen/Qwen3-0.6B go test -run TestRealEndpoint ./examples_test")
	}
	res := perftest.Run(t, perftest.Scenario{
		Name:      "real-endpoint",
		Tokenizer: os.Getenv("PERFGATE_TOKENIZER"),
		Config: loadgen.Config{
			Target: loadgen.Target{
				URLs:   []string{url},
				APIKey: loadgen.Secret(os.Getenv("PERFGATE_API_KEY")),
				Model:  os.Getenv("PERFGATE_MODEL"),
			},
			Workload: loadgen.Workload{
				ISL:       distribution.MustSpec("normal:256,32"),
				OSL:       distribution.MustSpec("fixed:64"),
				IgnoreEOS: true,
				Seed:      1,
			},
			Load: loadgen.Load{
				Concurrency: 4,
			},
			Stop: loadgen.Stop{
				Requests: 64,
			},
		},
	})
	res.AssertErrorRate(t, 0)
	res.AssertTokenizerMatchWithin(t, 1)
	res.AssertBound(t, perftest.Bound{Metric: perftest.OSL, P: 0.5, Min: 60, Max: 68}) // re-tokenized output: ±4
	res.AssertGoodput(t, perftest.SLO{TTFT: 2 * time.Second}, 0.9)
}
