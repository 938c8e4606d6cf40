package metric

import (
	"math"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// prefixRecords: successful measured requests reporting cached_tokens, one that did
// not, a failed one and a warm-up one that did (both left out).
func prefixRecords() []record.Client {
	ok := func(i, prompt, cached int) record.Client {
		r := record.Client{Index: i, Status: 200, ISL: prompt - 5, UsagePromptTokens: prompt, UsageCompletionTokens: 1, OSL: 1,
			Sent: time.Duration(i) * time.Millisecond, Done: time.Duration(i+1) * time.Millisecond}
		if cached >= 0 {
			r.CachedTokens = record.Some(cached)
		}
		return r
	}
	recs := []record.Client{ok(0, 100, 0), ok(1, 100, 64), ok(2, 200, 160), ok(3, 50, -1)}
	bad := ok(4, 100, 96)
	bad.ErrorKind, bad.Status = record.ErrHTTPStatus, 500
	warm := ok(5, 100, 96)
	warm.Warmup = true
	noUsage := ok(6, 100, 32)
	noUsage.UsagePromptTokens, noUsage.ISLTemplate = -1, 100 // the client's templated count
	return append(recs, bad, warm, noUsage)
}

func scalar(m record.Metrics, name string) (float64, bool) {
	s, ok := m.Scalars[name]
	return s.Value, ok
}

// TestPrefixCacheMetrics: the measured rate is Σcached/Σprompt over the successful
// measured requests that reported cached_tokens; without them it is the server's
// counters' rate; without either it is unknown, and so is the gap.
func TestPrefixCacheMetrics(t *testing.T) {
	recs := prefixRecords()
	ideal, server := 0.7, 0.25
	wantMeasured := float64(0+64+160+32) / float64(100+100+200+100)
	for _, tc := range []struct {
		name          string
		recs          []record.Client
		ideal, server *float64
		hit, gap      float64
		hasHit, hasGp bool
	}{
		{"records", recs, &ideal, &server, wantMeasured, ideal - wantMeasured, true, true},
		{"records, no ideal", recs, nil, nil, wantMeasured, 0, true, false},
		{"server counters", recs[3:4], &ideal, &server, server, ideal - server, true, true},
		{"unknown", recs[3:4], &ideal, nil, 0, 0, false, false},
	} {
		for _, totalsOnly := range []bool{false, true} {
			a := NewAccumulator(Options{})
			if totalsOnly {
				a.TotalsOnly()
			}
			for i := range tc.recs {
				a.Add(&tc.recs[i])
			}
			m := a.Metrics()
			CompletePrefixCache(&m, tc.ideal, tc.server)
			if got, ok := scalar(m, record.MetricPrefixCacheHitRate); ok != tc.hasHit || math.Abs(got-tc.hit) > 1e-15 {
				t.Errorf("%s (totals only %v): prefix_cache_hit_rate = %v, %v; want %v, %v", tc.name, totalsOnly, got, ok, tc.hit, tc.hasHit)
			}
			if got, ok := scalar(m, record.MetricPrefixCacheGap); ok != tc.hasGp || math.Abs(got-tc.gap) > 1e-15 {
				t.Errorf("%s (totals only %v): prefix_cache_gap = %v, %v; want %v, %v", tc.name, totalsOnly, got, ok, tc.gap, tc.hasGp)
			}
			if got, ok := scalar(m, record.MetricPrefixCacheIdealHitRate); ok != (tc.ideal != nil) || ok && got != *tc.ideal {
				t.Errorf("%s: prefix_cache_ideal_hit_rate = %v, %v; want %v", tc.name, got, ok, tc.ideal)
			}
		}
	}
}

// TestCompletePrefixCache: metrics summarised before the ideal and the server's
// counters were known take them; the server's rate is the measured one only when no
// request reported cached_tokens, and the gap follows.
func TestCompletePrefixCache(t *testing.T) {
	a := NewAccumulator(Options{})
	recs := prefixRecords()[3:4]
	a.Add(&recs[0])
	m := a.Metrics()
	if _, ok := m.Scalars[record.MetricPrefixCacheHitRate]; ok {
		t.Fatal("a run without cached_tokens nor counters reports a hit rate")
	}
	CompletePrefixCache(&m, f(0.5), f(0.375))
	if got, _ := scalar(m, record.MetricPrefixCacheHitRate); got != 0.375 {
		t.Errorf("after CompletePrefixCache(0.5, 0.375): hit rate %v, want 0.375", got)
	}
	if got, _ := scalar(m, record.MetricPrefixCacheGap); got != 0.125 {
		t.Errorf("after CompletePrefixCache(0.5, 0.375): gap %v, want 0.125", got)
	}
	// A rate from the records stays, and a later ideal gives the gap against it.
	b := NewAccumulator(Options{})
	all := prefixRecords()
	for i := range all {
		b.Add(&all[i])
	}
	m = b.Metrics()
	before := m.Scalars[record.MetricPrefixCacheHitRate]
	CompletePrefixCache(&m, nil, f(0.9))
	if m.Scalars[record.MetricPrefixCacheHitRate] != before {
		t.Errorf("CompletePrefixCache replaced the records' rate %v with %v", before, m.Scalars[record.MetricPrefixCacheHitRate])
	}
	if _, ok := m.Scalars[record.MetricPrefixCacheGap]; ok {
		t.Errorf("a gap without an ideal rate")
	}
	CompletePrefixCache(&m, f(0.8), nil)
	if got, _ := scalar(m, record.MetricPrefixCacheGap); math.Abs(got-(0.8-before.Value)) > 1e-15 {
		t.Errorf("gap %v, want 0.8 − %v", got, before.Value)
	}
}

func f(x float64) *float64 { return &x }

func TestLookupRunRule(t *testing.T) {
	for _, n := range []string{record.MetricPrefixCacheHitRate, record.MetricPrefixCacheIdealHitRate, record.MetricPrefixCacheGap} {
		if _, ok := LookupRunRule(n); !ok {
			t.Errorf("LookupRunRule(%q) = false", n)
		}
	}
	if _, ok := LookupRunRule(record.MetricRequestCount); ok {
		t.Errorf("LookupRunRule(request_count) = true; it is not rule-able by name")
	}
}
