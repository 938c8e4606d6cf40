package check

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
)

// TestGPURules: the GPU metrics are bounded in their units (a fraction for the
// utilisation), either way; a bad value names the unit and an example; a run without
// GPU telemetry makes the rule invalid, saying what would measure it.
func TestGPURules(t *testing.T) {
	m := record.Metrics{Scalars: map[string]record.Scalar{
		record.MetricTokensPerJoule:   {Unit: "tokens/J", Value: 3.2},
		record.MetricGPUEnergy:        {Unit: "J", Value: 5400},
		record.MetricGPUUtilization:   {Unit: "ratio", Value: 0.8},
		record.MetricRequestCount:     {Unit: "requests", Value: 100},
		record.MetricEnergyPerRequest: {Unit: "J/request", Value: 54},
	}}
	for _, c := range []struct {
		rule    string
		pass    bool
		summary string
	}{
		{"tokens_per_joule>=2.5", true, "tokens_per_joule = 3.2 tok/J >= 2.5 tok/J"},
		{"tokens_per_joule>=4 tok/J", false, "tokens_per_joule = 3.2 tok/J, want >= 4 tok/J"},
		{"gpu_energy<=5000", false, "gpu_energy = 5400 J, want <= 5000 J"},
		{"energy_per_request<=60", true, "energy_per_request = 54 J/req <= 60 J/req"},
		{"gpu_utilization>=75%", true, "gpu_utilization = 80% >= 75%"},
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Errorf("ParseRule(%q): %v", c.rule, err)
			continue
		}
		v := r.Check(nil, m, SLO{}, 0)
		if v.Pass != c.pass || v.Summary != c.summary {
			t.Errorf("%s: pass %v, %q; want %v, %q", c.rule, v.Pass, v.Summary, c.pass, c.summary)
		}
	}
	for rule, want := range map[string]string{
		"gpu_energy<=-1":        "want gpu_energy<= a number of J ≥ 0, e.g. gpu_energy<=50000",
		"tokens_per_joule>=abc": "e.g. tokens_per_joule>=2.5",
		"gpu_utilization>=1.5":  "a fraction in [0, 1]",
	} {
		if _, err := ParseRule(rule); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRule(%q) = %v; want an error with %q", rule, err, want)
		}
	}
	r, _ := ParseRule("output_tps_per_gpu>=100")
	v := r.Check(nil, record.Metrics{Scalars: map[string]record.Scalar{}}, SLO{}, 0)
	if v.Pass || v.Status != Invalid || len(v.Evidence) == 0 || !strings.Contains(v.Evidence[0].Text, "--gpu-telemetry") {
		t.Errorf("output_tps_per_gpu>=100 without telemetry: %+v; want invalid, saying --gpu-telemetry measures it", v)
	}
}
