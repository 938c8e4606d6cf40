package scenario

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
)

// Objectives are the pass/fail rules a scenario declares, so that `perfgate profile`
// and run.Outcome.Check (and perftest's Result.AssertObjectives) apply the same gate.
// Every field's zero value means "not checked", except MaxErrorRate, whose zero value
// means "no failed request is allowed" — a gate should not pass on a run that failed.
//
// Rules are the one form of an objective. The structured fields Goodput, Bounds,
// MinOutputTokenThroughput, MinRequestThroughput, TokenizerMatch and a non-zero
// MaxErrorRate are deprecated: they are still read (from files too) and checked as
// the rules they mean ([Objectives.Deprecated] names them), and go in v0.3.
type Objectives struct {
	// SLO is the per-request objective goodput counts against.
	SLO check.SLO `json:"slo,omitzero" yaml:"slo,omitempty"`
	// Goodput is the minimum fraction of requests meeting SLO, shown with Confidence
	// (a Wilson lower bound). 0 = not checked.
	//
	// Deprecated: write the rule "goodput>=X".
	Goodput float64 `json:"goodput,omitzero" yaml:"goodput,omitempty"`
	// Confidence of the goodput interval; 0 = check.DefaultConfidence (0.95).
	Confidence float64 `json:"confidence,omitzero" yaml:"confidence,omitempty"`
	// Bounds are quantile bounds such as TTFT p99 <= 0.2 s.
	//
	// Deprecated: write the rule "ttft_p99<=200ms" ([check.Bound.Rules]).
	Bounds []check.Bound `json:"bounds,omitempty" yaml:"bounds,omitempty"`
	// MaxErrorRate is the largest allowed fraction of failed requests; 0 = none may fail.
	// A negative value disables the check. A positive one is deprecated: write the rule
	// "error_rate<=X".
	MaxErrorRate float64 `json:"max_error_rate,omitzero" yaml:"max_error_rate,omitempty"`
	// MinOutputTokenThroughput is a floor on output tokens/s over the run; 0 = not checked.
	//
	// Deprecated: write the rule "output_token_throughput>=X".
	MinOutputTokenThroughput float64 `json:"min_output_token_throughput,omitzero" yaml:"min_output_token_throughput,omitempty"`
	// MinRequestThroughput is a floor on successful requests/s over the run; 0 = not checked.
	//
	// Deprecated: write the rule "request_throughput>=X".
	MinRequestThroughput float64 `json:"min_request_throughput,omitzero" yaml:"min_request_throughput,omitempty"`
	// TokenizerMatch checks that the server counted each successful request's input
	// tokens as the client did (the mock's count, or usage.prompt_tokens), within
	// TokenizerTolerance tokens (0 = exactly); for chat requests the client's count is
	// of the messages rendered by the chat template (record.Client.ISLTemplate); false =
	// not checked.
	//
	// Deprecated: write the rule "tokenizer_match" or "tokenizer_match<=N".
	TokenizerMatch     bool `json:"tokenizer_match,omitempty" yaml:"tokenizer_match,omitempty"`
	TokenizerTolerance int  `json:"tokenizer_tolerance,omitempty" yaml:"tokenizer_tolerance,omitempty"`
	// ISLFit and OSLFit check that the input and output lengths (see
	// run.Outcome.Lengths) fit these distributions, rounded to token lengths as
	// distribution.Length does, with a discrete-aware goodness-of-fit test at level
	// Alpha (0 = check.DefaultAlpha). Zero = not checked. They need the run's lengths,
	// so run.Outcome.Verdicts checks them, not [Objectives.Check].
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
			if x, ok := r.IsErrorRate(); ok && r.Scope().IsZero() { // a scoped one is its part's own verdict
				maxRate = x
			}
		}
	}
	return maxRate, maxRate >= 0
}

// RulesNeedGaps reports whether a rule needs the requests' gaps (check.Rule.NeedsGaps).
func (o Objectives) RulesNeedGaps() bool {
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

// structuredRules returns the deprecated structured objectives as the rules they
// mean, in the order they were checked: goodput, bounds (valid ones), throughputs,
// tokenizer match. MaxErrorRate is [Objectives.MaxErrors]'s.
func (o Objectives) structuredRules() []check.Rule {
	var rs []check.Rule
	add := func(text string) {
		if text == "" {
			return
		}
		r, err := check.ParseRule(text)
		if err != nil {
			r = check.Rule{Source: text} // checks as a failing "not parsed" verdict; Validate reports the field
		}
		rs = append(rs, r)
	}
	t := o.structuredTexts()
	add(t[0])
	for _, b := range o.Bounds {
		if b.Err() == nil {
			rs = append(rs, b.Rules()...)
		}
	}
	for _, text := range t[1:] {
		add(text)
	}
	return rs
}

// structuredTexts are the rules the structured fields other than Bounds mean ("" for
// a field not set): goodput, output and request throughput, tokenizer match.
func (o Objectives) structuredTexts() []string {
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	var t [4]string
	if o.Goodput > 0 {
		t[0] = "goodput>=" + num(o.Goodput)
	}
	if o.MinOutputTokenThroughput > 0 {
		t[1] = "output_token_throughput>=" + num(o.MinOutputTokenThroughput)
	}
	if o.MinRequestThroughput > 0 {
		t[2] = "request_throughput>=" + num(o.MinRequestThroughput)
	}
	if o.TokenizerMatch {
		t[3] = "tokenizer_match"
		if o.TokenizerTolerance > 0 {
			t[3] += "<=" + strconv.Itoa(o.TokenizerTolerance)
		}
	}
	return t[:]
}

// Deprecated returns a note for each deprecated structured objective o sets, naming
// the rule to write instead, e.g. `objectives.goodput is deprecated: write the rule
// "goodput>=0.95" in objectives.rules`. perftest logs them and `perfgate profile`
// prints them on stderr.
func (o Objectives) Deprecated() []string {
	var notes []string
	note := func(field, rule string) {
		notes = append(notes, fmt.Sprintf("objectives.%s is deprecated: write the rule %q in objectives.rules", field, rule))
	}
	for i, text := range o.structuredTexts() {
		if text != "" {
			note([]string{"goodput", "min_output_token_throughput", "min_request_throughput", "tokenizer_match"}[i], text)
		}
	}
	for i, b := range o.Bounds {
		for _, r := range b.Rules() {
			note(fmt.Sprintf("bounds[%d]", i), r.String())
		}
	}
	if o.MaxErrorRate > 0 {
		note("max_error_rate", "error_rate<="+strconv.FormatFloat(o.MaxErrorRate, 'g', -1, 64))
	}
	return notes
}

// Check evaluates the objectives on a run's requests and metrics, in a fixed order:
// the error rate, then the deprecated structured objectives as the rules they mean
// (goodput, bounds, throughputs, tokenizer match), then the rules in their order (an
// error_rate rule is the error-rate verdict). ISLFit and OSLFit are left to
// run.Outcome.Verdicts, which has the lengths they test.
func (o Objectives) Check(reqs []check.Request, m record.Metrics) []check.Verdict {
	var vs []check.Verdict
	if max, ok := o.MaxErrors(); ok {
		vs = append(vs, check.ErrorRate(reqs, max))
	}
	for _, b := range o.Bounds {
		if b.Err() != nil {
			vs = append(vs, b.Check(reqs)...) // a failing verdict naming the problem
		}
	}
	rules, _ := o.ParseRules() // Validate reported the bad ones
	for _, r := range append(o.structuredRules(), rules...) {
		if _, ok := r.IsErrorRate(); ok && r.Scope().IsZero() {
			continue // the error-rate verdict above
		}
		vs = append(vs, r.Check(reqs, m, o.SLO, o.Confidence))
	}
	return vs
}
