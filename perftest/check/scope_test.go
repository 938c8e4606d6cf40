package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
)

// TestRuleScopedToModel: {model=NAME} checks only that model's requests (and its own
// run-level metrics), so one model's regression fails its rule while the others
// pass; a model with no request fails; a bad scope is a parse error at its column.
func TestRuleScopedToModel(t *testing.T) {
	var reqs []Request
	for i := range 200 {
		m, ttft := "fast", 0.05
		if i%2 == 1 {
			m, ttft = "slow", 0.5
		}
		reqs = append(reqs, Request{ID: "r", Model: m, TTFT: ttft, Latency: ttft + 0.1, ISL: 10, OSL: 5, ServerISL: -1})
	}
	met := record.Metrics{Models: map[string]record.Metrics{
		"fast": {Scalars: map[string]record.Scalar{record.MetricRequestThroughput: {Value: 50}}},
		"slow": {Scalars: map[string]record.Scalar{record.MetricRequestThroughput: {Value: 5}}},
	}}
	for _, c := range []struct {
		rule string
		pass bool
	}{
		{"ttft_p90{model=fast}<=100ms", true},
		{"ttft_p90{model=slow}<=100ms", false},
		{"ttft_p90<=100ms", false},
		{"ttft_p50 { model = slow } >= 400ms", true},
		{"error_rate{model=slow}<=0", true},
		{"request_throughput{model=fast}>=40", true},
		{"request_throughput{model=slow}>=40", false},
		{"ttft_p90{model=absent}<=1s", false},
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Fatalf("%s: %v", c.rule, err)
		}
		v := r.Check(reqs, met, SLO{}, 0)
		if v.Pass != c.pass {
			t.Errorf("%s: pass = %v; want %v\n%s", c.rule, v.Pass, c.pass, v)
		}
	}
	r, _ := ParseRule("ttft_p90{model=absent}<=1s")
	if v := r.Check(reqs, met, SLO{}, 0); !strings.Contains(v.Summary, `no request of the run was sent to model "absent"`) {
		t.Errorf("a rule for a model without requests: %s", v.Summary)
	}
	if r, _ := ParseRule("ttft_p99{model=lora-a}<=200ms"); r.Model() != "lora-a" || r.String() != "ttft_p99{model=lora-a}<=200ms" {
		t.Errorf("Model() = %q, String() = %q", r.Model(), r.String())
	}
	for _, c := range []struct{ rule, want string }{
		{"ttft_p99{gpu=a}<=1s", "column 10: want {model=NAME}"},
		{"ttft_p99{model=}<=1s", "column 16: want a model name"},
		{"ttft_p99{model=a<=1s", "want } to close {model=NAME}"},
	} {
		_, err := ParseRule(c.rule)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrBadRule) {
			t.Errorf("ParseRule(%q) = %v; want an error with %q", c.rule, err, c.want)
		}
	}
}
