package scenario

import (
	"fmt"
	"slices"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/validity"
)

// TailClaim is one quantile claim of the objectives: the validity check of tail
// samples (run's, after a run; [Scenario.Validate]'s, before one) asks whether enough
// requests were measured to support it.
type TailClaim struct {
	Text   string      // the claim as the verdict names it: the rule, or "TTFT p99 <= limit"
	P      float64     // the quantile, in [0, 1]
	AtMost bool        // the claim bounds the quantile from above
	Scope  check.Scope // a rule scoped to one model of a mix or one class: its requests alone count
}

// TailClaims lists the objectives' quantile claims (bounds and rules).
func (o Objectives) TailClaims() []TailClaim {
	var cs []TailClaim
	for _, b := range o.Bounds {
		atMost, atLeast := b.Claims()
		name := fmt.Sprintf("%s %s", b.Metric.Label(), distribution.FormatP(b.P))
		if atMost {
			cs = append(cs, TailClaim{Text: name + " <= limit", P: b.P, AtMost: true})
		}
		if atLeast {
			cs = append(cs, TailClaim{Text: name + " >= limit", P: b.P})
		}
	}
	rs, _ := o.ParseRules()
	for _, r := range rs {
		if _, p, atMost, ok := r.Quantile(); ok {
			cs = append(cs, TailClaim{r.String(), p, atMost, r.Scope()})
		}
	}
	return cs
}

// tailProblems returns, for a scenario whose measured request count is known before
// the run (Requests without Duration or an input file), the quantile claims it
// cannot support, as errors for Validate.
func (s Scenario) tailProblems() []string {
	if s.Validity.TailSamples.Or(validity.ModeFail) != validity.ModeFail {
		return nil
	}
	known := func(requests int, d time.Duration, input string) bool { return requests > 0 && d == 0 && input == "" }
	var out []string
	for _, c := range s.Objectives.TailClaims() {
		n, of := s.Requests, ""
		if len(s.Classes) > 0 {
			// A run of classes: a claim on a class counts that class's requests; one on
			// the run, every class's.
			n = 0
			for i, cl := range s.Classes {
				cc := s.ClassConfig(i, s.Config)
				if c.Scope.Key == check.ScopeClass && c.Scope.Name != cl.Name {
					continue
				}
				if !known(cc.Requests, cc.Duration, cc.InputFile) {
					n = -1 // not known before the run
					break
				}
				n += cc.Requests
			}
			if c.Scope.Key == check.ScopeClass {
				of = " of class " + c.Scope.Name
			}
			if n <= 0 {
				continue
			}
		} else if !known(s.Requests, s.Duration, s.InputFile) {
			return nil
		}
		if m := c.Scope.Name; c.Scope.Key == check.ScopeModel && len(s.ModelNames) > 0 {
			if !slices.Contains(s.ModelNames, m) {
				continue // Validate says the model is not sent to
			}
			n, of = s.ModelRequests(m, n), fmt.Sprintf(" sent to model %s (expected)", m)
		}
		if need := check.QuantileNeed(c.P, c.AtMost, 0); n < need {
			out = append(out, fmt.Sprintf("objectives: %s needs at least %d measured requests for a %g%% bound; the run has %d%s (raise request_count, claim a lower quantile, or set validity.tail_samples: warn)",
				c.Text, need, check.DefaultConfidence*100, n, of))
		}
	}
	return out
}
