package check

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParseAbortRule: a condition is the rule with its comparison turned round, and
// every bad one is refused at its column, saying what an abort condition is.
func TestParseAbortRule(t *testing.T) {
	for _, tc := range []struct {
		text, rule string
	}{
		{"error_rate>0.2", "error_rate<=0.2"},
		{" ttft_p99 > 2s ", "ttft_p99 <= 2s"},
		{"output_tps_per_user_p10<20", "output_tps_per_user_p10>=20"},
		{"itl_p50{model=lora-a}>30ms", "itl_p50{model=lora-a}<=30ms"},
		{"time_to_first_token_p90>500", "time_to_first_token_p90<=500"},
	} {
		a, err := ParseAbortRule(tc.text)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		want := MustRule(tc.rule)
		if a.rule.kind != want.kind || a.rule.value != want.value || a.rule.atMost != want.atMost || a.rule.metric != want.metric || a.rule.scope != want.scope || a.String() != strings.TrimSpace(tc.text) {
			t.Errorf("%q read as %+v, want the rule %q", tc.text, a.rule, tc.rule)
		}
	}
	for _, tc := range []struct {
		text string
		col  int
		msg  string
	}{
		{"", 1, "empty condition"},
		{"error_rate", 11, "want > or <"},
		{"error_rate<=0.2", 11, "want > or <: the condition says when to stop"},
		{"ttft_p99>=2s", 9, "want > or <"},
		{"nonesuch_p99>1s", 1, `unknown metric "nonesuch"`},
		{"error_rate>1.5", 11, "fraction in [0, 1]"},
		{"error_rate<0.5", 11, "error_rate<=FRACTION"},
		{"ttft_p99>fast", 10, "ttft_p99 is a latency"},
		{"goodput<0.9", 1, `"goodput" is not an abort condition`},
		{"goodput(ttft<=1s)<0.9", 1, `"goodput" is not an abort condition`},
		{"request_throughput<5", 1, `"request_throughput" is not an abort condition`},
		{"tokenizer_match>3", 1, "not an abort condition"},
	} {
		_, err := ParseAbortRule(tc.text)
		re := (*RuleError)(nil)
		if !errors.As(err, &re) || re.Column != tc.col || !strings.Contains(re.Msg, tc.msg) || !strings.Contains(re.Msg, "abort condition") {
			t.Errorf("%q: %v, want column %d: %q", tc.text, err, tc.col, tc.msg)
		}
	}
}

// TestAbortRuleCheck: a condition holds when its rule fails on the requests, and
// never on requests that give it nothing to judge.
func TestAbortRuleCheck(t *testing.T) {
	ok := Request{ID: "a", TTFT: 0.1, Latency: 0.2, OSL: 2, Model: "m"}
	slow := Request{ID: "b", TTFT: 3, Latency: 3.1, OSL: 2, Model: "m"}
	bad := Request{ID: "c", Err: "http_status: 500", Model: "m"}
	for _, tc := range []struct {
		cond string
		reqs []Request
		stop bool
	}{
		{"error_rate>0.2", []Request{ok, ok, ok, bad}, true},
		{"error_rate>0.25", []Request{ok, ok, ok, bad}, false},
		{"ttft_p50>2s", []Request{ok, slow, slow}, true},
		{"ttft_p50>2s", []Request{ok, ok, slow}, false},
		{"ttft_p50>2s", []Request{bad, bad}, false},            // no TTFT to judge
		{"ttft_p50{model=x}>2s", []Request{slow, slow}, false}, // no request of x
		{"ttft_p50{model=m}>2s", []Request{slow, slow}, true},
		{"error_rate>0", nil, false},
	} {
		a, err := ParseAbortRule(tc.cond)
		if err != nil {
			t.Fatal(err)
		}
		if v, stop := a.Check(tc.reqs); stop != tc.stop {
			t.Errorf("%s on %d requests: stop %v, want %v (%s)", tc.cond, len(tc.reqs), stop, tc.stop, v.Summary)
		}
	}
	if _, stop := (AbortRule{Source: "x"}).Check([]Request{bad}); stop {
		t.Error("the zero AbortRule stops a run")
	}
}

// FuzzParseAbortRule: a condition that parses is its rule turned round, which
// parses; an error is a RuleError at a column within the text (or one past it).
func FuzzParseAbortRule(f *testing.F) {
	for _, s := range []string{"error_rate>0.2", "ttft_p99>2s", "itl_p50{model=a}>30ms", "goodput(ttft<=1s)<0.9", "x<=1", "<", ">", "a{>}>1", "(((>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a, err := ParseAbortRule(text)
		if err != nil {
			re := (*RuleError)(nil)
			if !errors.As(err, &re) {
				t.Fatalf("%q: %v is not a RuleError", text, err)
			}
			if re.Column < 1 || re.Column > len(strings.TrimSpace(text))+1 {
				t.Fatalf("%q: column %d outside the text", text, re.Column)
			}
			return
		}
		if !utf8.ValidString(a.Source) && utf8.ValidString(text) {
			t.Fatalf("%q: source %q", text, a.Source)
		}
		if a.rule.kind != ruleQuantile && a.rule.kind != ruleErrorRate {
			t.Fatalf("%q parsed as a rule of kind %v", text, a.rule.kind)
		}
		if _, err := ParseRule(a.rule.Source); err != nil {
			t.Fatalf("%q: its rule %q does not parse: %v", text, a.rule.Source, err)
		}
	})
}
