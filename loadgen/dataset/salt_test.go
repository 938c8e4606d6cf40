package dataset

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
)

// A salt starts every prompt, is counted in the ISL, and gives each salted run of one
// seeded workload prompts of its own.
func TestSyntheticSalt(t *testing.T) {
	tok := gpt2(t)
	first := func(salt string) Turn {
		s, err := NewSynthetic(Synthetic{Tok: tok, ISL: distribution.Length{Dist: distribution.Fixed{Value: 64}}, PrefixTokens: 8, Seed: 3, Salt: salt})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := s.Next()
		return c.Turns[0]
	}
	plain, a, b := first(""), first("run 1 5f3a"), first("run 2 5f3a")
	for _, tr := range []Turn{plain, a, b} {
		if tr.ISL != 64 || tok.Count(tr.Prompt, false) != 64 {
			t.Errorf("prompt of %d tokens (ISL %d), want 64 with the salt counted: %q", tok.Count(tr.Prompt, false), tr.ISL, tr.Prompt)
		}
	}
	if !strings.HasPrefix(a.Prompt, "run 1 5f3a\n") || a.Prompt == b.Prompt || strings.HasPrefix(plain.Prompt, "run") {
		t.Errorf("salted prompts %q and %q, unsalted %q: want each salted prompt to start with its salt", a.Prompt, b.Prompt, plain.Prompt)
	}
}
