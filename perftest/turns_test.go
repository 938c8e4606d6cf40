package perftest

import (
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/mockserver"
)

// TestMultiTurnTemplateOverhead checks the per-turn template accounting on a
// three-turn chat with gpt2 (no chat template: the mock renders ChatML, whose markers
// are ordinary text to gpt2 and merge with the contents at the edges). The overhead
// grows with the messages, and since the client renders each request's conversation
// the same way, client and server agree exactly on every request.
func TestMultiTurnTemplateOverhead(t *testing.T) {
	res := Run(t, Scenario{Name: "turns", Turns: distribution.Spec{Distribution: distribution.Fixed{Value: 3}},
		ISL: distribution.Spec{Distribution: distribution.Fixed{Value: 32}}, OSL: distribution.Spec{Distribution: distribution.Fixed{Value: 8}},
		Requests: 12, Concurrency: 2, Seed: 2, Mock: mockserver.Config{Fast: true}})
	o := res.TemplateOverhead
	if len(o) != 3 || !(0 < o[0] && o[0] < o[1] && o[1] < o[2]) {
		t.Fatalf("TemplateOverhead = %v, want 3 growing overheads", o)
	}
	for _, c := range res.Client {
		if c.OK() && c.TokenizationMode != "chat_template_fallback" {
			t.Errorf("request %s: TokenizationMode = %q, want chat_template_fallback", c.RequestID, c.TokenizationMode)
		}
	}
	res.AssertTokenizerMatch(t)
}
