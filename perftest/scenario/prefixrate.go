package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// completePrefixCache adds to the run's metrics what its records lack for the
// prefix-cache metrics (docs/prefix-cache.md): the ideal hit rate the load generator
// counted (idealRate, nil when not counted), and the server's prefix-cache counters' rate over the run, the measured
// rate when no request reported cached_tokens. With several scraped endpoints the
// counters' rate is used only when one of them has it.
func (o *Outcome) completePrefixCache(idealRate *float64) {
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
	if idealRate != nil || server != nil {
		metric.CompletePrefixCache(&o.Metrics, idealRate, server)
	}
}

// savedPrefixIdeal is the ideal prefix-cache counts in dir's metrics.json
// ("prefix_cache"), which the report's "Prefix cache" section draws; nil when there
// are none.
func savedPrefixIdeal(dir string) *record.PrefixCacheIdeal {
	b, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		return nil
	}
	var m struct {
		PrefixCache *record.PrefixCacheIdeal `json:"prefix_cache"`
	}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m.PrefixCache
}

// savedIdealRate is the ideal prefix-cache hit rate in dir's metrics.json, which a run
// writes and its records cannot give again; nil when there is none.
func savedIdealRate(dir string) *float64 {
	b, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		return nil
	}
	var m record.Metrics
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	if v, ok := m.Scalars[record.MetricPrefixCacheIdealHitRate]; ok {
		return &v.Value
	}
	return nil
}
