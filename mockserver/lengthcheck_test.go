package mockserver

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
)

// An osl or reasoning_tokens spec that never draws a length >= 1 is refused by
// Validate instead of panicking in the first request's handler.
func TestValidateRefusesLengthsBelowOne(t *testing.T) {
	c := Config{OSL: distribution.MustSpec("fixed:0"), ReasoningTokens: distribution.MustSpec("normal:-50,1")}
	err := c.Validate()
	for _, want := range []string{"osl fixed:0: draws round to a length >= 1 with probability 0", "reasoning_tokens normal:-50,1: draws round"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v; want %q", err, want)
		}
	}
}
