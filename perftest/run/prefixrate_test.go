package run

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/servermetrics"
)

// prefixScenario is a prefix-pool workload of n requests against the mock, whose
// cache loses the fault fraction of its hits, with the gap and hit-rate rules.
func prefixScenario(n int, fault float64) scenario.Scenario {
	return scenario.Scenario{
		Name: "prefix-gap",
		Mock: mockserver.Config{Fast: true, PrefixCache: mockserver.PrefixCache{Fault: fault}},
		Config: loadgen.Config{
			Target: loadgen.Target{API: loadgen.EndpointCompletions},
			Workload: loadgen.Workload{Seed: 38, ISL: fixed(160), OSL: fixed(2), PrefixTokens: 16,
				Prefixes: loadgen.Prefixes{NumPrefixPrompts: 40, PromptPrefixLength: 96, PrefixPopularity: dataset.Popularity{Zipf: 1}}},
			Load: loadgen.Load{Concurrency: 8},
			Stop: loadgen.Stop{Requests: n},
		},
		Objectives: scenario.Objectives{Rules: []string{"prefix_cache_gap<=0.02", "prefix_cache_hit_rate>=0.3"}},
	}
}

// verdictOf returns the verdict of the rule written as rule.
func verdictOf(t *testing.T, vs []check.Verdict, rule string) check.Verdict {
	t.Helper()
	for _, v := range vs {
		for _, l := range v.Evidence {
			if l.Label == "rule" && l.Text == rule {
				return v
			}
		}
	}
	t.Fatalf("no verdict for %s among %d", rule, len(vs))
	return check.Verdict{}
}

// The gap rule catches a server that loses 10% of its prefix-cache hits at 5,000
// requests (1,000 under -short; seed 38), and the healthy mock, whose unbounded cache
// serves exactly the ideal hits, passes with a gap of 0.
func TestPrefixCacheGapCatchesFault(t *testing.T) {
	n := 5000
	if testutil.Short() {
		n = 1000
	}
	healthy, err := Run(context.Background(), prefixScenario(n, 0), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := healthy.Metrics
	hit, ideal, gap := m.Scalars[record.MetricPrefixCacheHitRate], m.Scalars[record.MetricPrefixCacheIdealHitRate], m.Scalars[record.MetricPrefixCacheGap]
	if hit.Value != ideal.Value || gap.Value != 0 || ideal.Value < 0.3 {
		t.Errorf("healthy mock: measured %v, ideal %v, gap %v; want measured = ideal (>= 0.3), gap 0", hit.Value, ideal.Value, gap.Value)
	}
	vs := healthy.Check()
	for _, rule := range []string{"prefix_cache_gap<=0.02", "prefix_cache_hit_rate>=0.3"} {
		if v := verdictOf(t, vs, rule); !v.Pass {
			t.Errorf("healthy mock: %s", v)
		}
	}

	faulty, err := Run(context.Background(), prefixScenario(n, 0.1), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m = faulty.Metrics
	fgap := m.Scalars[record.MetricPrefixCacheGap].Value
	// About a tenth of the ideal hits lost: the gap is near 0.1 × ideal.
	if want := 0.1 * ideal.Value; fgap < want/2 || fgap > 2*want {
		t.Errorf("cache fault 0.1: gap %v, want about %v", fgap, want)
	}
	v := verdictOf(t, faulty.Check(), "prefix_cache_gap<=0.02")
	if v.Pass || v.Status != check.Decided || !strings.Contains(v.Summary, "want <=") {
		t.Errorf("cache fault 0.1 not caught by the gap rule: %s", v)
	}
	t.Logf("n=%d: ideal %.4f; healthy gap %.4f; fault 0.1 gap %.4f", n, ideal.Value, gap.Value, fgap)

	// Load reads the run back: the measured rate from client.jsonl, the ideal one
	// (which no record carries) from metrics.json.
	back, err := Load(faulty.Dir)
	if err != nil {
		t.Fatal(err)
	}
	samePrefixRates(t, "Load", back, faulty)
	// Re-judged from the records (perfgate report --assert), it keeps the saved ideal
	// rate: the same numbers and the same failing verdict.
	if err := back.Recompute(); err != nil {
		t.Fatal(err)
	}
	samePrefixRates(t, "Load, then Recompute", back, faulty)
	if v := verdictOf(t, back.Check(), "prefix_cache_gap<=0.02"); v.Pass || v.Status != check.Decided {
		t.Errorf("cache fault 0.1, re-judged: %s; want the live run's failure", v)
	}
}

// samePrefixRates checks that got has want's three prefix-cache rates.
func samePrefixRates(t *testing.T, how string, got, want *Outcome) {
	t.Helper()
	for _, name := range []string{record.MetricPrefixCacheHitRate, record.MetricPrefixCacheIdealHitRate, record.MetricPrefixCacheGap} {
		g, ok := got.Metrics.Scalars[name]
		if w := want.Metrics.Scalars[name]; !ok || g != w {
			t.Errorf("%s: %s = %v (%v), the run had %v", how, name, g, ok, w)
		}
	}
}

// Without cached_tokens in the records, the measured rate is the server's counters'
// (vllm:prefix_cache_hits/queries scraped from the mock's /metrics), and the gap is the
// ideal rate against it; without the counters too, neither is reported.
func TestPrefixCacheFromServerCounters(t *testing.T) {
	sc := prefixScenario(300, 0)
	sc.ServerMetrics = servermetrics.Config{URLs: []string{"/metrics"}}
	dir := t.TempDir()
	out, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	if out.ServerMetrics == nil || len(out.ServerMetrics.Endpoints) != 1 || out.ServerMetrics.Endpoints[0].Derived.PrefixCacheHitRate == nil {
		t.Fatalf("no prefix-cache counters scraped: %+v", out.ServerMetrics)
	}
	counters := *out.ServerMetrics.Endpoints[0].Derived.PrefixCacheHitRate
	ideal := out.Metrics.Scalars[record.MetricPrefixCacheIdealHitRate].Value
	// The records' cached_tokens gone, as from a server that does not return them.
	p := filepath.Join(dir, ClientFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, regexp.MustCompile(`,"cached_tokens":\d+`).ReplaceAll(b, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	hit, ok1 := back.Metrics.Scalars[record.MetricPrefixCacheHitRate]
	gap, ok2 := back.Metrics.Scalars[record.MetricPrefixCacheGap]
	if !ok1 || !ok2 || hit.Value != counters || gap.Value != ideal-counters {
		t.Errorf("from the counters: hit %v (%v), gap %v (%v); want %v and %v − %v", hit.Value, ok1, gap.Value, ok2, counters, ideal, counters)
	}
	// Re-judged from the records, the counters' rate and the saved ideal rate stay.
	loaded := *back
	if err := back.Recompute(); err != nil {
		t.Fatal(err)
	}
	samePrefixRates(t, "from the counters, Recompute", back, &loaded)
	// The counters cover the whole run; with no warm-up they are the records' rate.
	if counters != out.Metrics.Scalars[record.MetricPrefixCacheHitRate].Value {
		t.Errorf("counters' rate %v, the records' %v", counters, out.Metrics.Scalars[record.MetricPrefixCacheHitRate].Value)
	}
	for _, f := range []string{servermetrics.File, servermetrics.SummaryFile} {
		_ = os.Remove(filepath.Join(dir, f))
	}
	back, err = Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Metrics.Scalars[record.MetricPrefixCacheHitRate]; ok {
		t.Errorf("a hit rate with neither cached_tokens nor counters")
	}
	v := verdictOf(t, back.Check(), "prefix_cache_gap<=0.02")
	if v.Pass || v.Status != check.Invalid {
		t.Errorf("gap rule on an unknown rate: %s; want an invalid failure", v)
	}
}
