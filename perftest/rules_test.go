package perftest

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
)

func TestAssertRules(t *testing.T) {
	res := Load(t, "testdata/example")
	if c := Capture(t, func(t testing.TB) { res.Assert(t, "ttft_p50<=100ms", "error_rate<=0", "tokenizer_match<=30") }); c.Failed() {
		t.Errorf("rules that hold failed:\n%s", c.Text())
	}
	c := Capture(t, func(t testing.TB) { res.Assert(t, "ttft_p50<=1ms", "osl_p50>=1000") })
	if !c.Failed() || c.Stopped() || len(c.Messages()) != 2 {
		t.Errorf("two breached rules: failed=%v stopped=%v, messages:\n%s\nwant two, and the test going on", c.Failed(), c.Stopped(), c.Text())
	}
	c = Capture(t, func(t testing.TB) { res.Require(t, "ttft_p50<=1ms", "osl_p50>=1000") })
	if !c.Stopped() || len(c.Messages()) != 2 {
		t.Errorf("Require: stopped=%v, messages:\n%s\nwant both breaches, then FailNow", c.Stopped(), c.Text())
	}
}

// A rule that does not parse is a mistake in the test: t.Fatal naming the rule and the column.
func TestAssertBadRule(t *testing.T) {
	res := Load(t, "testdata/example")
	c := Capture(t, func(t testing.TB) { res.Assert(t, "ttft_p99<=250ms", "ttft_p99<=25Oms") })
	want := `perftest: rules[1]: check: rule "ttft_p99<=25Oms", column 11: ttft_p99 is a latency: want Go duration text such as 250ms or 1.5s (a bare number is ms)`
	if !c.Stopped() || c.Text() != want {
		t.Errorf("Assert(bad rule): stopped=%v, message\n%s\nwant\n%s", c.Stopped(), c.Text(), want)
	}
}

// Objectives.Rules are checked with the other objectives, and an error_rate rule is the
// error-rate gate (replacing MaxErrorRate's zero value: "none may fail").
func TestObjectiveRules(t *testing.T) {
	res := Load(t, "testdata/example")
	o := scenario.Objectives{Rules: []string{"error_rate<=0.5", "ttft_p50<=1ms"}}
	if max, ok := o.MaxErrors(); !ok || max != 0.5 {
		t.Errorf("MaxErrors() = %v, %v; want 0.5, true", max, ok)
	}
	vs := o.Check(res.Requests(), res.Metrics)
	if len(vs) != 2 || vs[0].Check != "error-rate" || !vs[0].Pass || vs[1].Pass || !strings.Contains(vs[1].String(), "rule:       ttft_p50<=1ms") {
		t.Errorf("Check() = %v; want the error rate within 50%% and the TTFT rule breached", vs)
	}
	if max, ok := (scenario.Objectives{Rules: []string{"error_rate<=1"}}).MaxErrors(); !ok || max != 1 {
		t.Errorf("error_rate<=1: MaxErrors() = %v, %v; want 1 (every failure allowed)", max, ok)
	}
	err := scenario.Scenario{Objectives: scenario.Objectives{Rules: []string{"ttft_p99<=1s", "goodput>=2"}}}.Validate()
	if err == nil || !strings.Contains(err.Error(), `objectives.rules[1]: check: rule "goodput>=2", column 8`) {
		t.Errorf("Validate() = %v; want objectives.rules[1] named with the column", err)
	}
	var _ check.Rule // the rules are check's
}
