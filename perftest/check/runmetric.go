package check

import (
	"fmt"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

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
	return "the run does not report it"
}
