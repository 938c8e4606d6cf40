package validity

import (
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
)

// TestClientDistorted: the verdict fails past the threshold (the default and a
// configured one), passes under it, takes its mode, and is absent without server
// timings.
func TestClientDistorted(t *testing.T) {
	stats := func(p50 float64) map[string]record.Stat {
		return map[string]record.Stat{
			record.MetricClientOverhead: {Unit: metric.UnitMS, Count: 100, P50: p50, P90: 2 * p50, P99: 3 * p50},
			record.MetricServerTTFT:     {Unit: metric.UnitMS, Count: 100, P50: 20},
		}
	}
	def := float64(DefaultMaxClientOverhead) / float64(time.Millisecond)
	if v, ok := ClientDistorted(stats(def/2), Config{}); !ok || !v.Pass || v.Status == check.Invalid {
		t.Errorf("p50 at half the default: %+v, want a passing verdict", v)
	}
	v, ok := ClientDistorted(stats(def*3), Config{})
	if !ok || v.Pass || v.Status != check.Invalid || !strings.HasPrefix(v.Summary, "client-distorted: client overhead p50") {
		t.Errorf("p50 at 3× the default: %+v, want an invalid verdict", v)
	}
	if !strings.Contains(v.String(), "server TTFT") {
		t.Errorf("evidence without the server's TTFT:\n%s", v)
	}
	if w := Apply(v, ModeWarn); !w.Pass || w.Status != check.Invalid {
		t.Errorf("warn mode: %+v, want passing as a warning", w)
	}
	if w := Apply(v, ModeFail); w.Pass {
		t.Errorf("fail mode: %+v, want failing", w)
	}
	if v, _ := ClientDistorted(stats(def*3), Config{MaxClientOverhead: 10 * DefaultMaxClientOverhead}); !v.Pass {
		t.Errorf("a raised threshold: %+v, want a pass", v)
	}
	if _, ok := ClientDistorted(nil, Config{}); ok {
		t.Error("no server timings: a verdict, want none")
	}
	if _, ok := ClientDistorted(map[string]record.Stat{record.MetricClientOverhead: {}}, Config{}); ok {
		t.Error("no request with the metric: a verdict, want none")
	}
}
