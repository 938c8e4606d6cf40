package check

import (
	"fmt"
	"slices"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// runRule is the one definition of a rule on a run-level metric of the catalogue,
// named by its catalogue name: which metrics take one, what its limit may be, and how
// it is checked, all from the metric's catalogue entry, so that a run-level metric
// added to the catalogue ([metric.Extend], or a built-in entry) is a rule with no
// other edit. Two shapes follow from the entry:
//   - a metric the catalogue marks rule-able ([metric.Def.RunRule]: the prefix-cache
//     rates, the GPU metrics) is bounded either way (<= or >=), a ratio by a fraction,
//     another by a number in its unit, and a run that does not report it makes the
//     rule invalid, never a pass ([RunMetric]);
//   - any other run statistic ([metric.Def.IsRunStat]: output_token_throughput,
//     request_throughput, an added one) takes a floor, NAME>=VALUE in its unit
//     ([ThroughputAtLeast]).
type runRule struct {
	def     metric.Def
	bounded bool // a RunRule ratio, either way; else a floor
}

// lookupRunRule returns the run-level rule on the metric name, false when the
// catalogue has no run-level metric of that name that rules may bound.
func lookupRunRule(name string) (runRule, bool) {
	d, ok := metric.Lookup(name)
	switch {
	case !ok || d.Kind != metric.PerRun:
		return runRule{}, false
	case d.RunRule: // before the floors: both ways, unknown is invalid
		return runRule{def: d, bounded: true}, true
	case d.IsRunStat():
		return runRule{def: d}, true
	}
	return runRule{}, false
}

// parse reads the rule's limit, val, written after op ("<=" or ">="). On an error it
// returns what is wanted and whether the message points at the value (else at the
// operator).
func (rr runRule) parse(val, op string) (limit float64, want string, atValue bool) {
	name := rr.def.Name
	if rr.bounded && rr.def.Unit != metric.UnitRatio {
		// A quantity in its unit, either way (gpu_energy<=50000, tokens_per_joule>=2.5).
		x, err := UnitOf(rr.def).Parse(val)
		if err != nil || !(x >= 0) {
			return 0, fmt.Sprintf("want %s%s a number of %s ≥ 0, e.g. %s", name, op, rr.def.Unit, runRuleExample(name)), true
		}
		return x, "", false
	}
	if rr.bounded {
		x, err := fraction(val)
		lo := 0.0
		if name == record.MetricPrefixCacheGap {
			lo = -1 // a server may beat the ideal (a cache warm from before the run)
		}
		if rr.def.Unit != metric.UnitRatio || err != nil || !(x >= lo && x <= 1) {
			return 0, fmt.Sprintf("want %s%s a fraction in [%g, 1], e.g. %s", name, op, lo, runRuleExample(name)), true
		}
		return x, "", false
	}
	x, err := UnitOf(rr.def).Parse(val)
	if err != nil || op != ">=" || !(x > 0) {
		return 0, fmt.Sprintf("want %s>=VALUE with a positive number", name), false
	}
	return x, "", false
}

// check judges the run's value of the metric (its metrics m, over requests requests)
// against limit: at most limit when atMost, else at least.
func (rr runRule) check(m record.Metrics, atMost bool, limit float64, requests int) Verdict {
	if rr.bounded {
		return RunMetric(rr.def.Name, m, atMost, limit)
	}
	dur := fmt.Sprintf("%s over %d requests", Seconds.Format(m.Value(record.MetricBenchmarkDuration)), requests)
	return ThroughputAtLeast(rr.def.RunLabel(), UnitOf(rr.def), m.Value(rr.def.Name), limit, Line{Label: "duration", Text: dur})
}

// RunMetric checks a run-level metric named by a rule ([metric.Def.RunRule]) against
// limit: at most limit when atMost, else at least. A run that does not report the
// metric (a prefix-cache hit rate the server gave no means to measure) is an [Invalid]
// verdict that fails, never a pass.
func RunMetric(name string, m record.Metrics, atMost bool, limit float64) Verdict {
	d, _ := metric.Lookup(name)
	u := UnitOf(d)
	op := ">="
	if atMost {
		op = "<="
	}
	s, ok := m.Scalars[name]
	if !ok {
		v := invalid(name, "%s %s %s: unknown for this run", name, op, u.Format(limit))
		v.Status = Invalid
		v.Evidence = []Line{{Label: "why", Text: unknownWhy(name)}}
		return v
	}
	got := s.Value
	if u == Seconds && s.Unit == metric.UnitMS {
		got /= 1000 // a latency recorded in ms (job_latency_p99), judged in seconds as rules write it
	}
	v := Verdict{Check: name, Value: got, Unit: u, Pass: got <= limit}
	if !atMost {
		v.Pass = got >= limit
	}
	if v.Pass {
		v.Summary = fmt.Sprintf("%s = %s %s %s", name, u.Format(got), op, u.Format(limit))
	} else {
		v.Summary = fmt.Sprintf("%s = %s, want %s %s", name, u.Format(got), op, u.Format(limit))
	}
	for _, other := range []string{record.MetricPrefixCacheHitRate, record.MetricPrefixCacheIdealHitRate} {
		if o, ok := m.Scalars[other]; ok && other != name {
			v.Evidence = append(v.Evidence, Line{Label: other, Text: Fraction.Format(o.Value)})
		}
	}
	return v
}

// unknownWhy says why a run-level metric can be missing from a run.
func unknownWhy(name string) string {
	switch name {
	case record.MetricPrefixCacheHitRate, record.MetricPrefixCacheGap:
		why := "the server returned no usage.prompt_tokens_details.cached_tokens and no prefix-cache counters were scraped (vLLM: --enable-prompt-tokens-details, or scrape its /metrics with --server-metrics for vllm:prefix_cache_hits/queries)"
		if name == record.MetricPrefixCacheGap {
			why = "the gap needs the measured and the ideal hit rate; the ideal is counted when the run's prompts share prefixes (docs/prefix-cache.md), and " + why
		}
		return why
	case record.MetricPrefixCacheIdealHitRate:
		return "the ideal hit rate is counted when the run's prompts share prefixes (docs/prefix-cache.md)"
	}
	if slices.Contains(metric.GPUMetrics, name) {
		return "GPU metrics need --gpu-telemetry URL (a DCGM exporter's /metrics, scraped during the run) with DCGM_FI_DEV_POWER_USAGE or DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (and DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED for utilisation and memory; docs/outputs.md)"
	}
	return "the run does not report it"
}
