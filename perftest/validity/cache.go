package validity

import (
	"cmp"
	"fmt"

	"github.com/perfgate/perfgate/perftest/check"
)

// WarmCache judges a prefix-cache hit rate (the highest a server reported, at url) on
// a workload with no designed reuse: at cfg.MaxCacheHitRate or more, the server's
// cache was warm before the run, and its latencies are not a cold run's. The caller
// decides that the workload reuses nothing by design (no shared prefix, no sessions,
// no replayed trace).
func WarmCache(rate float64, url string, cfg Config) check.Verdict {
	limit := cmp.Or(cfg.MaxCacheHitRate, DefaultMaxCacheHitRate)
	v := check.Verdict{Check: CheckWarmCache, Pass: rate < limit, Value: rate, Unit: check.Fraction}
	ev := []check.Line{{Label: "hit rate", Text: fmt.Sprintf("%.2f%% of prompt tokens (%s)", 100*rate, url)}}
	if v.Pass {
		v.Summary = fmt.Sprintf("prefix cache cold: hit rate %.2f%% < %.0f%%", 100*rate, 100*limit)
		v.Evidence = ev
		return v
	}
	v.Status = check.Invalid
	v.Summary = fmt.Sprintf("warm cache: prefix-cache hit rate %.1f%% >= %.0f%% on a workload with no designed reuse", 100*rate, 100*limit)
	v.Evidence = append(ev, check.Line{Label: "fix", Text: "bust the cache (validity.cache_bust, --cache-bust: a per-run salt starts every prompt) or reset it before each run (validity.reset_url, --cache-reset-url, e.g. vLLM's /reset_prefix_cache)"})
	return v
}
