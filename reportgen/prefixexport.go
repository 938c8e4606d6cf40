package reportgen

import (
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// AIPerf's prefix-cache fields (its metric tags), in profile_export_aiperf.json and,
// per request, the JSONL export (docs/prefix-cache.md).
const (
	// AIPerfCachedTokens is a request's usage.prompt_tokens_details.cached_tokens
	// (AIPerf's usage_prompt_cached_tokens): per request in the JSONL, its
	// distribution over the successful measured requests that reported it in the JSON.
	AIPerfCachedTokens = "usage_prompt_cached_tokens"
	// AIPerfTotalCachedTokens is their sum (total_usage_prompt_cached_tokens).
	AIPerfTotalCachedTokens = "total_usage_prompt_cached_tokens"
	// AIPerfTheoreticalHit is the hit rate an unbounded cache reaches on the prompts
	// sent, in percent (AIPerf's theoretical_prefix_cache_hit): perfgate's ideal
	// rate without a capacity, whatever --kv-cache-blocks says.
	AIPerfTheoreticalHit = "theoretical_prefix_cache_hit"
)

// aiperfPrefixCache adds AIPerf's prefix-cache fields the run has: the cached tokens'
// distribution and sum when a request reported them, and the unbounded ideal rate
// when loadgen counted it.
func aiperfPrefixCache(o *orderedJSON, run Run) {
	var xs []float64
	total := 0.0
	_ = run.each()(func(r *record.Client) error {
		if !r.Warmup && r.OK() && r.CachedTokens.Known {
			xs = append(xs, float64(r.CachedTokens.N))
			total += float64(r.CachedTokens.N)
		}
		return nil
	})
	type single struct {
		Unit string  `json:"unit"`
		Avg  float64 `json:"avg"`
	}
	if len(xs) > 0 {
		o.set(AIPerfCachedTokens, statJSON(metric.Summarize(xs, "tokens")))
		o.set(AIPerfTotalCachedTokens, single{"tokens", total})
	}
	if pc := run.PrefixCache; pc != nil && pc.PromptTokens > 0 {
		o.set(AIPerfTheoreticalHit, single{"%", 100 * float64(pc.UnboundedHitTokens) / float64(pc.PromptTokens)})
	}
}
