package scenario

import (
	"errors"
	"fmt"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
)

// Objectives are the pass/fail rules a scenario declares, so that `perfgate profile`
// and [Outcome.Check] (and perftest's Result.AssertObjectives) apply the same gate.
// Every field's zero value means "not checked", except MaxErrorRate, whose zero value
// means "no failed request is allowed" — a gate should not pass on a run that failed.
type Objectives struct {
	// SLO is the per-request objective goodput counts against.
	SLO check.SLO `json:"slo,omitzero" yaml:"slo,omitempty"`
	// Goodput is the minimum fraction of requests meeting SLO, shown with Confidence
	// (a Wilson lower bound). 0 = not checked.
	Goodput float64 `json:"goodput,omitzero" yaml:"goodput,omitempty"`
	// Confidence of the goodput interval; 0 = check.DefaultConfidence (0.95).
	Confidence float64 `json:"confidence,omitzero" yaml:"confidence,omitempty"`
	// Bounds are quantile bounds such as TTFT p99 <= 0.2 s.
	Bounds []check.Bound `json:"bounds,omitempty" yaml:"bounds,omitempty"`
	// MaxErrorRate is the largest allowed fraction of failed requests; 0 = none may fail.
	// A negative value disables the check.
	MaxErrorRate float64 `json:"max_error_rate,omitzero" yaml:"max_error_rate,omitempty"`
	// MinOutputTokenThroughput is a floor on output tokens/s over the run; 0 = not checked.
	MinOutputTokenThroughput float64 `json:"min_output_token_throughput,omitzero" yaml:"min_output_token_throughput,omitempty"`
	// MinRequestThroughput is a floor on successful requests/s over the run; 0 = not checked.
	MinRequestThroughput float64 `json:"min_request_throughput,omitzero" yaml:"min_request_throughput,omitempty"`
	// TokenizerMatch checks that the server counted each successful request's input
	// tokens as the client did (the mock's count, or usage.prompt_tokens), within
	// TokenizerTolerance tokens (0 = exactly); for chat requests the client's count is
	// of the messages rendered by the chat template (record.Client.ISLTemplate); false =
	// not checked.
	TokenizerMatch     bool `json:"tokenizer_match,omitempty" yaml:"tokenizer_match,omitempty"`
	TokenizerTolerance int  `json:"tokenizer_tolerance,omitempty" yaml:"tokenizer_tolerance,omitempty"`
	// ISLFit and OSLFit check that the input and output lengths (see
	// [Outcome.Lengths]) fit these distributions, rounded to token lengths as
	// distribution.Length does, with a discrete-aware goodness-of-fit test at level
	// Alpha (0 = check.DefaultAlpha). Zero = not checked. They need the run's lengths,
	// so [Outcome.Verdicts] checks them, not [Objectives.Check].
	ISLFit distribution.Spec `json:"isl_fit,omitzero" yaml:"isl_fit,omitempty"`
	OSLFit distribution.Spec `json:"osl_fit,omitzero" yaml:"osl_fit,omitempty"`
	Alpha  float64           `json:"alpha,omitzero" yaml:"alpha,omitempty"`
	// Rules are objectives written as text, as k6 writes thresholds, read by
	// [check.ParseRule]: "ttft_p99 <= 250ms", "error_rate <= 0",
	// "goodput(ttft<=200ms, itl<=20ms) >= 0.95". A bare goodput>=X counts against SLO.
	// An error_rate rule replaces MaxErrorRate (the last one counts). `perfgate
	// profile --assert` appends to them. A rule that does not parse makes the
	// scenario invalid. nil = none.
	Rules []string `json:"rules,omitempty" yaml:"rules,omitempty"`
}

// MaxErrors returns the error-rate limit the objectives set, and whether it is
// checked: the last error_rate rule's, else MaxErrorRate (zero: no request may fail;
// negative: not checked). Rules that do not parse are skipped (Validate reports them).
func (o Objectives) MaxErrors() (maxRate float64, checked bool) {
	maxRate = o.MaxErrorRate
	for _, text := range o.Rules {
		if r, err := check.ParseRule(text); err == nil {
			if x, ok := r.IsErrorRate(); ok {
				maxRate = x
			}
		}
	}
	return maxRate, maxRate >= 0
}

// rulesNeedGaps reports whether a rule needs the requests' gaps (check.Rule.NeedsGaps).
func (o Objectives) rulesNeedGaps() bool {
	rs, _ := o.ParseRules()
	for _, r := range rs {
		if r.NeedsGaps(o.SLO) {
			return true
		}
	}
	return false
}

// ParseRules parses o.Rules, reporting every bad one at once (errors.Join) as
// "objectives.rules[i]: " followed by the [check.RuleError].
func (o Objectives) ParseRules() ([]check.Rule, error) {
	var rs []check.Rule
	var errs []error
	for i, text := range o.Rules {
		r, err := check.ParseRule(text)
		if err != nil {
			errs = append(errs, fmt.Errorf("objectives.rules[%d]: %w", i, err))
			continue
		}
		rs = append(rs, r)
	}
	return rs, errors.Join(errs...)
}

// Check evaluates the objectives on a run's requests and metrics, in a fixed order:
// error rate, goodput, bounds, throughputs, tokenizer match, then the rules in their
// order (an error_rate rule is the error-rate verdict). ISLFit and OSLFit are
// left to [Outcome.Verdicts], which has the lengths they test.
func (o Objectives) Check(reqs []check.Request, m record.Metrics) []check.Verdict {
	var vs []check.Verdict
	if max, ok := o.MaxErrors(); ok {
		vs = append(vs, check.ErrorRate(reqs, max))
	}
	if o.Goodput > 0 {
		vs = append(vs, check.Goodput(reqs, o.SLO, o.Goodput, o.Confidence))
	}
	for _, b := range o.Bounds {
		vs = append(vs, b.Check(reqs)...)
	}
	dur := fmt.Sprintf("%s over %d requests", check.Seconds.Format(m.Value(record.MetricBenchmarkDuration)), len(reqs))
	if o.MinOutputTokenThroughput > 0 {
		vs = append(vs, check.ThroughputAtLeast("output token throughput", check.TokPerSec,
			m.Value(record.MetricOutputTokenThroughput), o.MinOutputTokenThroughput, check.Line{Label: "duration", Text: dur}))
	}
	if o.MinRequestThroughput > 0 {
		vs = append(vs, check.ThroughputAtLeast("request throughput", check.ReqPerSec,
			m.Value(record.MetricRequestThroughput), o.MinRequestThroughput, check.Line{Label: "duration", Text: dur}))
	}
	if o.TokenizerMatch {
		vs = append(vs, check.TokenizerMatch(reqs, o.TokenizerTolerance))
	}
	rules, _ := o.ParseRules() // Validate reported the bad ones
	for _, r := range rules {
		if _, ok := r.IsErrorRate(); ok {
			continue // the error-rate verdict above
		}
		vs = append(vs, r.Check(reqs, m, o.SLO, o.Confidence))
	}
	return vs
}
