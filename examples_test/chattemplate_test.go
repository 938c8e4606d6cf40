package examples_test

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
	"github.com/perfgate/perfgate/perftest/check"
)

// TestChatTemplateOverhead runs chat requests with Llama-3-8B-Instruct's real tokenizer
// and chat template. The client builds 256-token message contents; the server counts
// the rendered template (<|begin_of_text|><|start_header_id|>user<|end_header_id|> …
// <|eot_id|><|start_header_id|>assistant<|end_header_id|>), so it sees
// about 10 extra tokens per request. The test makes that overhead visible, shows that
// ignoring it fails the tokenizer check, and accounts for it.
func TestChatTemplateOverhead(t *testing.T) {
	dir := testutil.Fixture(t, "daulet/meta-llama-3-8b-instruct")
	res := perftest.Run(t, perftest.Scenario{
		Name:        "llama3-chat",
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
	t.Logf("Llama 3's chat template adds %d tokens to every single-turn request", overhead)

	// Visible: ignoring the template, client and server disagree on every request.
	raw := res.Requests()
	for i := range raw {
		raw[i].Overhead = 0
	}
	if v := check.TokenizerMatch(raw, 0); v.Pass || !strings.Contains(v.Summary, "40 of 40 requests") {
		t.Errorf("without the overhead, TokenizerMatch = %s; want all 40 requests to differ", v.Summary)
	}

	// Accounted for. Llama 3's template trims each message's content, and the
	// pre-tokenizer splits differently where the content meets the template, so a
	// request's real overhead can differ from the probe's by a token at each edge: with
	// the overhead added, client and server agree within 2 tokens. (Exact per-request
	// agreement needs the client to count the rendered template itself.)
	res.AssertTokenizerMatchWithin(t, 2)
	// The client built exactly the configured contents…
	res.AssertBound(t, perftest.Bound{Metric: perftest.ISL, P: 0, Min: 256})
	res.AssertBound(t, perftest.Bound{Metric: perftest.ISL, P: 1, Max: 256})
	// …and the server received the contents plus the template.
	src, isl := res.Lengths(perftest.ISL)
	for _, n := range isl {
		if n < 256+overhead-2 || n > 256+overhead+2 {
			t.Errorf("%s ISL = %d, want 256 + %d template tokens ± 2", src, n, overhead)
		}
	}
}
