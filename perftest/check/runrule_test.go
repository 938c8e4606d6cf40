package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

func prefixMetrics(hit, ideal *float64) record.Metrics {
	m := record.Metrics{Scalars: map[string]record.Scalar{}}
	if hit != nil {
		m.Scalars[record.MetricPrefixCacheHitRate] = record.Scalar{Unit: "ratio", Value: *hit}
	}
	if ideal != nil {
		m.Scalars[record.MetricPrefixCacheIdealHitRate] = record.Scalar{Unit: "ratio", Value: *ideal}
	}
	if hit != nil && ideal != nil {
		m.Scalars[record.MetricPrefixCacheGap] = record.Scalar{Unit: "ratio", Value: *ideal - *hit}
	}
	return m
}

func f(x float64) *float64 { return &x }

// TestRunMetricRules: the prefix-cache rules pass and fail on the run's scalars, and a
// rule on a rate the run does not report is an invalid, failing verdict.
func TestRunMetricRules(t *testing.T) {
	for _, tc := range []struct {
		rule       string
		hit, ideal *float64
		pass       bool
		status     Status
	}{
		{"prefix_cache_hit_rate>=0.6", f(0.65), nil, true, Decided},
		{"prefix_cache_hit_rate>=60%", f(0.59), nil, false, Decided},
		{"prefix_cache_gap<=0.02", f(0.70), f(0.71), true, Decided},
		{"prefix_cache_gap <= 0.02", f(0.63), f(0.70), false, Decided},
		{"prefix_cache_gap<=0.02", f(0.80), f(0.70), true, Decided}, // better than the ideal
		{"prefix_cache_ideal_hit_rate>=0.5", nil, f(0.7), true, Decided},
		{"prefix_cache_hit_rate>=0.6", nil, f(0.7), false, Invalid},
		{"prefix_cache_gap<=0.02", nil, f(0.7), false, Invalid},
		{"prefix_cache_gap<=0.02", f(0.7), nil, false, Invalid},
		{"prefix_cache_hit_rate<=0.1", f(0.05), nil, true, Decided},
	} {
		r, err := ParseRule(tc.rule)
		if err != nil {
			t.Fatalf("ParseRule(%q): %v", tc.rule, err)
		}
		v := r.Check(nil, prefixMetrics(tc.hit, tc.ideal), SLO{}, 0)
		if v.Pass != tc.pass || v.Status != tc.status {
			t.Errorf("%s on hit %v ideal %v: pass %v status %v, want %v %v\n%s", tc.rule, tc.hit, tc.ideal, v.Pass, v.Status, tc.pass, tc.status, v)
		}
		if tc.status == Invalid && (!strings.Contains(v.Summary, "unknown") || !errors.Is(v.Err(), ErrInvalidRun)) {
			t.Errorf("%s on an unknown rate: summary %q, err %v; want it to say unknown and wrap ErrInvalidRun", tc.rule, v.Summary, v.Err())
		}
		if !strings.Contains(v.String(), tc.rule) {
			t.Errorf("%s: the verdict does not name the rule as written:\n%s", tc.rule, v)
		}
	}
}

func TestRunMetricRuleErrors(t *testing.T) {
	for _, tc := range []struct{ rule, want string }{
		{"prefix_cache_hit_rate>=1.5", "fraction in [0, 1]"},
		{"prefix_cache_gap<=-2", "fraction in [-1, 1]"},
		{"prefix_cache_hit_rate>=x", "fraction"},
		{"prefix_cache_rate>=0.5", "prefix_cache_hit_rate"}, // the unknown-name message lists the names
	} {
		_, err := ParseRule(tc.rule)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRule(%q) = %v, want an error containing %q", tc.rule, err, tc.want)
		}
	}
}

// TestRunRuleBoundedFromCatalogue: a ratio added to the catalogue as rule-able
// (metric.Def.RunRule) is a rule either way by its name with no other edit, through the
// one run-level rule definition the prefix-cache rates and the throughput floors share:
// checked on the run's value in its unit, invalid when the run does not report it, its
// limit held to a fraction, and listed among the names. (TestRunRuleFromCatalogue adds
// a floor the same way.)
func TestRunRuleBoundedFromCatalogue(t *testing.T) {
	const name = "test_hit_ratio"
	restore := metric.Extend(metric.Def{Name: name, Header: "Test Hit Ratio", Unit: metric.UnitRatio, Better: metric.Higher,
		Kind: metric.PerRun, Origin: "test", RunRule: true, NoRunStat: true, Help: "A ratio.",
		Total: func(*metric.Totals) (float64, bool) { return 0, false }})
	defer restore()
	for _, tc := range []struct {
		rule   string
		value  *float64
		pass   bool
		status Status
	}{
		{name + ">=0.5", f(0.6), true, Decided},
		{name + "<=50%", f(0.6), false, Decided},
		{name + ">=0.5", nil, false, Invalid},
	} {
		r, err := ParseRule(tc.rule)
		if err != nil {
			t.Fatalf("ParseRule(%q): %v", tc.rule, err)
		}
		m := record.Metrics{Scalars: map[string]record.Scalar{}}
		if tc.value != nil {
			m.Scalars[name] = record.Scalar{Unit: metric.UnitRatio, Value: *tc.value}
		}
		v := r.Check(nil, m, SLO{}, 0)
		if v.Pass != tc.pass || v.Status != tc.status || v.Check != name || tc.status == Decided && v.Unit != Fraction {
			t.Errorf("%s on %v: pass %v status %v check %q unit %q, want %v %v %q %q\n%s", tc.rule, tc.value, v.Pass, v.Status, v.Check, v.Unit, tc.pass, tc.status, name, Fraction, v)
		}
	}
	if _, err := ParseRule(name + ">=2"); err == nil || !strings.Contains(err.Error(), "want "+name+">= a fraction in [0, 1]") {
		t.Errorf("%s>=2: %v, want a fraction", name, err)
	}
	if _, err := ParseRule("nope>=1"); err == nil || !strings.Contains(err.Error(), ", "+name+" or tokenizer_match") {
		t.Errorf("unknown name: %v, want the added metric among the names", err)
	}
	restore()
	if _, err := ParseRule(name + ">=0.5"); err == nil {
		t.Errorf("%s>=0.5 parsed after the metric was removed", name)
	}
}
