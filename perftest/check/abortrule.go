package check

import (
	"errors"
	"strings"

	"github.com/perfgate/perfgate/record"
)

// An AbortRule is a condition under which a run is stopped while it goes
// (docs/abort.md): a [Rule] written with > or < in place of <= or >=, so that it reads
// as the condition it stops on: "error_rate>0.2", "ttft_p99>2s",
// "output_tps_per_user_p10<20", "itl_p50{model=lora-a}>30ms". The run stops when the
// condition holds on the requests it is evaluated on, that is when the rule with the
// comparison turned round ("error_rate<=0.2") fails there.
//
// Quantile rules of any per-request metric of the catalogue and error_rate are abort
// conditions; goodput, the throughputs and tokenizer_match are not (a Wilson bound
// over a window of a few requests, or a rate over a window, would stop a healthy run).
type AbortRule struct {
	// Source is the condition as written, printed in messages.
	Source string
	rule   Rule // the objective whose failure is the condition
}

// abortHint ends every error of an abort condition.
const abortHint = "an abort condition is a rule with > or <, e.g. error_rate>0.2 or ttft_p99>2s"

// ParseAbortRule parses an abort condition (see [AbortRule]). Its error is a
// [*RuleError] naming the condition, the column and what was wanted.
func ParseAbortRule(text string) (AbortRule, error) {
	src := strings.TrimSpace(text)
	a := AbortRule{Source: src}
	fail := func(col int, msg string) error {
		return &RuleError{Rule: src, Column: col, Msg: msg}
	}
	if src == "" {
		return a, fail(1, "empty condition; "+abortHint)
	}
	// The comparison: the first < or > outside (…) and {…}.
	at, depth := -1, 0
	for i := 0; i < len(src) && at < 0; i++ {
		switch src[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case '<', '>':
			if depth == 0 {
				at = i
			}
		}
	}
	switch {
	case at < 0:
		return a, fail(len(src)+1, "want > or < and a value after the name; "+abortHint)
	case at+1 < len(src) && src[at+1] == '=':
		return a, fail(at+1, "want > or <: the condition says when to stop, not what must hold; "+abortHint)
	}
	op := "<="
	if src[at] == '<' {
		op = ">="
	}
	text = src[:at] + op + src[at+1:]
	r, err := ParseRule(text)
	if re := (*RuleError)(nil); errors.As(err, &re) {
		col := re.Column
		if col-1 >= at+2 {
			col-- // back to the condition's columns
		}
		return a, fail(min(max(col, 1), len(src)+1), re.Msg+" (the abort condition "+src+" stops the run when the rule "+text+" fails)")
	}
	if err != nil {
		return a, err
	}
	switch r.kind {
	case ruleQuantile, ruleErrorRate:
	default:
		name, _, _ := strings.Cut(src[:at], "(")
		return a, fail(1, "\""+strings.TrimSpace(name)+"\" is not an abort condition: only quantiles (METRIC_pNN) and error_rate are evaluated while the run goes; "+abortHint)
	}
	a.rule = r
	return a, nil
}

// String returns the condition as written.
func (a AbortRule) String() string { return a.Source }

// Check evaluates the condition on reqs (a window of the run's requests) and reports
// whether it holds (stop): the verdict is that of the rule turned round, which fails
// when the condition holds. A condition with nothing to judge (no request of its
// model, no value of its metric: every request failed) does not hold.
func (a AbortRule) Check(reqs []Request) (v Verdict, stop bool) {
	r := a.rule
	if r.kind == ruleNone {
		return invalid("abort", "abort condition %q: not parsed (use check.ParseAbortRule)", a.Source), false
	}
	mine := r.scope.Filter(reqs)
	if len(mine) == 0 || r.kind == ruleQuantile && len(r.metric.Sample(mine).clean().Values) == 0 {
		return Verdict{Check: "abort", Pass: true, Summary: "nothing to judge"}, false
	}
	v = r.Check(reqs, record.Metrics{}, SLO{}, 0)
	return v, !v.Pass
}
