package check

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
)

// TestRuleScopedToClass: {class=NAME} is the model scope's mechanism over traffic
// classes: only that class's requests and its own run-level metrics
// (record.Metrics.Classes), a class with no request fails, and a scope is read back
// from a statistic's name ("ttft_p99{class=batch}") as a rule reads it.
func TestRuleScopedToClass(t *testing.T) {
	var reqs []Request
	for i := range 200 {
		c, ttft := "chat", 0.05
		if i%4 == 3 {
			c, ttft = "batch", 0.8
		}
		reqs = append(reqs, Request{ID: "r", Class: c, Model: "m", TTFT: ttft, Latency: ttft + 0.1, ISL: 10, OSL: 5, ServerISL: -1})
	}
	met := record.Metrics{Classes: map[string]record.Metrics{
		"chat":  {Scalars: map[string]record.Scalar{record.MetricRequestThroughput: {Value: 30}}},
		"batch": {Scalars: map[string]record.Scalar{record.MetricRequestThroughput: {Value: 10}}},
	}}
	for _, c := range []struct {
		rule string
		pass bool
	}{
		{"ttft_p99{class=chat}<=100ms", true},
		{"ttft_p99{class=batch}<=100ms", false},
		{"ttft_p99<=100ms", false},
		{"ttft_p50{ class = batch }>=700ms", true},
		{"request_throughput{class=chat}>=20", true},
		{"request_throughput{class=batch}>=20", false},
		{"error_rate{class=batch}<=0", true},
		{"ttft_p99{model=m}<=100ms", false}, // the model's requests are every class's
		{"ttft_p90{class=absent}<=1s", false},
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Fatalf("%s: %v", c.rule, err)
		}
		if v := r.Check(reqs, met, SLO{}, 0); v.Pass != c.pass {
			t.Errorf("%s: pass = %v; want %v\n%s", c.rule, v.Pass, c.pass, v)
		}
	}
	r, _ := ParseRule("ttft_p90{class=absent}<=1s")
	if v := r.Check(reqs, met, SLO{}, 0); v.Pass || !strings.Contains(v.Summary, `no request of the run is of class "absent"`) {
		t.Errorf("a rule for a class without requests: %s", v.Summary)
	}
	if r, _ := ParseRule("goodput(ttft<=200ms){class=chat}>=0.9"); r.Class() != "chat" || r.Model() != "" || r.Scope() != (Scope{ScopeClass, "chat"}) {
		t.Errorf("Class() = %q, Model() = %q, Scope() = %v", r.Class(), r.Model(), r.Scope())
	}
	if _, err := ParseRule("ttft_p99{class=}<=1s"); err == nil || !strings.Contains(err.Error(), "column 16: want a class name") {
		t.Errorf("an empty class: %v", err)
	}
	for _, c := range []struct {
		name, base string
		scope      Scope
		ok         bool
	}{
		{"ttft_p99", "ttft_p99", Scope{}, true},
		{"ttft_p99{class=batch}", "ttft_p99", Scope{ScopeClass, "batch"}, true},
		{"output_tps{model=a}", "output_tps", Scope{ScopeModel, "a"}, true},
		{"ttft_p99{class=}", "", Scope{}, false},
		{"ttft_p99{zone=a}", "", Scope{}, false},
		{"ttft_p99{class=a", "", Scope{}, false},
	} {
		base, sp, ok := CutScope(c.name)
		if ok != c.ok || ok && (base != c.base || sp != c.scope || sp.Named(base) != c.name) {
			t.Errorf("CutScope(%q) = %q, %v, %v", c.name, base, sp, ok)
		}
	}
}

// TestRunMetricMilliseconds: a run-level latency recorded in ms (job_latency_p99 in
// metrics.json) is judged in seconds, as its rule is written: 5,763 ms passes
// "<= 10s" and fails "<= 5s".
func TestRunMetricMilliseconds(t *testing.T) {
	m := record.Metrics{Scalars: map[string]record.Scalar{"job_latency_p99": {Value: 5763, Unit: "ms"}}}
	if v := RunMetric("job_latency_p99", m, true, 10); !v.Pass || !strings.Contains(v.Summary, "5.76s") {
		t.Errorf("5763 ms <= 10 s: %s", v)
	}
	if v := RunMetric("job_latency_p99", m, true, 5); v.Pass {
		t.Errorf("5763 ms <= 5 s passed: %s", v)
	}
}

// FuzzCutScope feeds statistic names (a gate's fail and margins, runstats.json's keys)
// to CutScope. Property: a scoped name splits into a name without braces and a scope
// whose Named reads back to the same split; a rule scoped to a class reads back.
func FuzzCutScope(f *testing.F) {
	for _, s := range []string{"ttft_p99", "ttft_p99{class=batch}", "output_tps{model=a}", "x{class=}", "x{zone=a}", "x{class=a", "{class=a}", "a{class={b}}", "a{ class = b }"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		base, sp, ok := CutScope(name)
		if !ok || sp.IsZero() {
			return
		}
		if strings.ContainsAny(base, "{}") || strings.ContainsAny(sp.Name, "{}") || sp.Name == "" {
			t.Fatalf("CutScope(%q) = %q, %+v", name, base, sp)
		}
		b2, sp2, ok2 := CutScope(sp.Named(base))
		if !ok2 || b2 != base || sp2 != sp {
			t.Fatalf("CutScope(%q) = %q, %+v; its Named %q reads back as %q, %+v, %v", name, base, sp, sp.Named(base), b2, sp2, ok2)
		}
		if r, err := ParseRule(sp.Named("ttft_p99") + "<=1s"); err == nil && r.Scope() != sp && strings.TrimSpace(sp.Name) == sp.Name {
			t.Fatalf("the rule %q is scoped %+v, want %+v", sp.Named("ttft_p99")+"<=1s", r.Scope(), sp)
		}
	})
}
