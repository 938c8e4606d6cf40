package check

import (
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/record"
)

// The OSL-fit failure's evidence from a recording: stop against length (Anthropic's
// reasons mapped), client against usage counts, and the hints, pinned in a golden file.
func TestOSLEvidenceGolden(t *testing.T) {
	var cs []record.Client
	var lengths []int
	for i := range 12 {
		c := record.Client{OSL: 64 + i%3 - 1, UsageCompletionTokens: 64, FinishReason: "length"}
		switch {
		case i < 3:
			c.FinishReason, c.UsageCompletionTokens, c.OSL = "stop", 20+i, 20+i
		case i == 3:
			c.FinishReason = "max_tokens"
		case i == 4:
			c.FinishReason = "end_turn"
		}
		cs = append(cs, c)
		lengths = append(lengths, c.OSL)
	}
	cs = append(cs, record.Client{Warmup: true, FinishReason: "stop"}, record.Client{ErrorKind: record.ErrTimeout})
	v := LengthFit("OSL (client count)", lengths, distribution.Length{Dist: distribution.Fixed{Value: 64}}, 0)
	v.Evidence = append(v.Evidence, OSLEvidence(cs, false)...)
	if v.Pass {
		t.Fatal("the fit passed")
	}
	testutil.Golden(t, "testdata/osl_evidence.golden", []byte(v.String()+"\n"), *update)
	if got := OSLEvidence(nil, false); got != nil {
		t.Errorf("OSLEvidence(nil) = %v, want nil", got)
	}
}
