package run

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// completePrefixCache adds to the run's metrics what its records lack for the
// prefix-cache metrics (docs/prefix-cache.md): the ideal hit rate the load generator
// counted (o.idealRate, nil when not counted), and the server's prefix-cache counters'
// rate over the run, the measured rate when no request reported cached_tokens. With
// several scraped endpoints the counters' rate is used only when one of them has it.
// [Outcome.completeSaved] calls it.
func (o *Outcome) completePrefixCache() {
	var server *float64
	if sm := o.ServerMetrics; sm != nil {
		n := 0
		for _, e := range sm.Endpoints {
			if r := e.Derived.PrefixCacheHitRate; r != nil {
				server, n = r, n+1
			}
		}
		if n > 1 {
			server = nil
		}
	}
	if o.idealRate != nil || server != nil {
		metric.CompletePrefixCache(&o.Metrics, o.idealRate, server)
	}
}

// setPrefixIdeal keeps the ideal prefix-cache counts loadgen made (nil: none) and
// their rate, for completePrefixCache and the report.
func (o *Outcome) setPrefixIdeal(pc *record.PrefixCacheIdeal) {
	o.prefixIdeal, o.idealRate = pc, nil
	if pc != nil {
		o.idealRate = &pc.Rate
	}
}

// loadPrefixIdeal reads the ideal prefix-cache counts in dir's metrics.json
// ("prefix_cache", which the report's "Prefix cache" section draws) and their rate,
// which a run writes and its records cannot give again; for a run saved before
// metrics.json kept the counts, the rate alone (prefix_cache_ideal_hit_rate).
func (o *Outcome) loadPrefixIdeal(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		return
	}
	var pc struct {
		PrefixCache *record.PrefixCacheIdeal `json:"prefix_cache"`
	}
	if json.Unmarshal(b, &pc) != nil {
		return
	}
	if o.setPrefixIdeal(pc.PrefixCache); o.idealRate != nil {
		return
	}
	var m record.Metrics // record.Metrics reads itself (UnmarshalJSON): apart from prefix_cache
	if json.Unmarshal(b, &m) == nil {
		if v, ok := m.Scalars[record.MetricPrefixCacheIdealHitRate]; ok {
			o.idealRate = &v.Value
		}
	}
}
