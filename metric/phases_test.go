package metric

import (
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// TestHTTPPhaseMetrics: a record's phases reach the http_req_* metrics through the
// accumulator's store, exactly; a record without phases gives none, and a reused
// connection counts in the reuse rate.
func TestHTTPPhaseMetrics(t *testing.T) {
	ms := time.Millisecond
	fresh := record.Client{Status: 200, Sent: 10 * ms, Written: 11 * ms, FirstByte: 3011 * ms, Done: 3020 * ms,
		Blocked: 7 * time.Microsecond, DNSLookup: ms, Connecting: 4 * ms, TLSHandshaking: 3 * ms}
	reused := record.Client{Status: 200, Sent: 20 * ms, Written: 20*ms + 5*time.Microsecond, FirstByte: 25 * ms, Done: 40 * ms,
		Blocked: 2 * time.Microsecond, ConnReused: true}
	old := record.Client{Status: 200, Sent: 30 * ms, FirstByte: 31 * ms, Done: 32 * ms} // no Written: recorded before phases
	m := Compute([]record.Client{fresh, reused, old}, Options{}, nil)
	for _, c := range []struct {
		name     string
		count    int
		min, max float64
	}{
		{record.MetricHTTPBlocked, 2, 0.002, 0.007},
		{record.MetricHTTPDNSLookup, 2, 0, 1},
		{record.MetricHTTPConnecting, 2, 0, 4},
		{record.MetricHTTPTLSHandshaking, 2, 0, 3},
		{record.MetricHTTPSending, 2, 0.005, 1},
		{record.MetricHTTPWaiting, 2, 4.995, 3000},
		{record.MetricHTTPReceiving, 2, 9, 15},
		{record.MetricHTTPDuration, 2, 20, 3010},
		{record.MetricHTTPConnectionOverhead, 2, 0.002, 5.007},
		{record.MetricHTTPTotal, 2, 20.002, 3015.007},
		{record.MetricHTTPConnectionReused, 2, 0, 1},
	} {
		s, ok := m.Stats[c.name]
		if !ok || s.Count != c.count || !near(s.Min, c.min) || !near(s.Max, c.max) {
			t.Errorf("%s = %+v, %v; want count %d, min %g, max %g", c.name, s, ok, c.count, c.min, c.max)
		}
	}
	if got := m.Stats[record.MetricHTTPConnectionReused].Avg; got != 0.5 {
		t.Errorf("reuse rate = %v; want 0.5", got)
	}
	if _, ok := Compute([]record.Client{old}, Options{}, nil).Stats[record.MetricHTTPWaiting]; ok {
		t.Errorf("a recording without phases reports %s", record.MetricHTTPWaiting)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
