package run

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

// TestPrefixCacheBreakdowns: a prefix-pool run against the mock's unbounded cache
// (no shared system prompt, so no block is shared across prefixes) keeps the ideal's
// breakdowns in metrics.json, each adding up to the run's totals; every record names
// its pool prefix, and per prefix the mock's cached_tokens add up to exactly the
// ideal's hits (whatever order the requests reached it in); report.html has the
// section and the AIPerf export the fields; Load reads the breakdowns back.
func TestPrefixCacheBreakdowns(t *testing.T) {
	const pool = 8
	sc := scenario.Scenario{
		Name: "prefix-breakdowns",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Target: loadgen.Target{API: loadgen.EndpointCompletions},
			Workload: loadgen.Workload{Seed: 39, ISL: fixed(100), OSL: fixed(2),
				Prefixes: loadgen.Prefixes{NumPrefixPrompts: pool, PromptPrefixLength: 64, PrefixPopularity: dataset.Popularity{Zipf: 1}}},
			Load: loadgen.Load{Concurrency: 4},
			Stop: loadgen.Stop{Requests: 240},
		},
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), sc, dir); err != nil {
		t.Fatal(err)
	}
	var m struct {
		PrefixCache *record.PrefixCacheIdeal `json:"prefix_cache"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, MetricsFile)); err != nil || json.Unmarshal(b, &m) != nil || m.PrefixCache == nil {
		t.Fatalf("metrics.json has no prefix_cache (%v)", err)
	}
	pc := m.PrefixCache
	sum := func(cs []record.PrefixCacheCount) (p, h int64) {
		for _, c := range cs {
			p, h = p+c.PromptTokens, h+c.HitTokens
		}
		return p, h
	}
	if p, h := sum(pc.Slices); p != pc.PromptTokens || h != pc.HitTokens || pc.HitTokens == 0 {
		t.Errorf("slices add up to %d/%d, the run to %d/%d", h, p, pc.HitTokens, pc.PromptTokens)
	}
	if p, h := sum(pc.ByPrefix); p != pc.PromptTokens || h != pc.HitTokens || len(pc.ByPrefix) > pool || pc.UnboundedHitTokens != pc.HitTokens {
		t.Errorf("by_prefix adds up to %d/%d (%d prefixes), the run to %d/%d (unbounded %d)", h, p, len(pc.ByPrefix), pc.HitTokens, pc.PromptTokens, pc.UnboundedHitTokens)
	}
	cached, prompt := make([]int64, pool), make([]int64, pool)
	total := 0
	recs, err := loadClient(filepath.Join(dir, ClientFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Warmup || !r.OK() {
			continue
		}
		if r.Prefix < 1 || r.Prefix > pool || !r.CachedTokens.Known {
			t.Fatalf("record %d: prefix %d, cached_tokens %+v", r.Index, r.Prefix, r.CachedTokens)
		}
		cached[r.Prefix-1] += int64(r.CachedTokens.N)
		prompt[r.Prefix-1] += int64(metric.PrefixPrompt(&r))
		total += r.CachedTokens.N
	}
	for p, c := range pc.ByPrefix {
		if cached[p] != c.HitTokens || prompt[p] != c.PromptTokens {
			t.Errorf("prefix %d: the mock served %d of %d tokens, the ideal %d of %d", p+1, cached[p], prompt[p], c.HitTokens, c.PromptTokens)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, reportgen.RunReportFile))
	for _, w := range []string{`id="prefix-cache-time"`, `id="prefix-cache-rank"`, `<table id="prefix-ranks">`} {
		if !strings.Contains(string(html), w) {
			t.Errorf("report.html lacks %s", w)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, reportgen.AIPerfJSONFile))
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(b, &raw)
	exp := map[string]struct {
		Avg float64 `json:"avg"`
	}{}
	for _, k := range []string{reportgen.AIPerfTotalCachedTokens, reportgen.AIPerfTheoreticalHit} {
		f := exp[k]
		_ = json.Unmarshal(raw[k], &f)
		exp[k] = f
	}
	if exp[reportgen.AIPerfTotalCachedTokens].Avg != float64(total) || math.Abs(exp[reportgen.AIPerfTheoreticalHit].Avg-100*pc.Rate) > 1e-9 {
		t.Errorf("AIPerf export: %+v; want total %d, theoretical %v%%", exp, total, 100*pc.Rate)
	}
	back, err := Load(dir)
	if err != nil || back.prefixIdeal == nil || len(back.prefixIdeal.ByPrefix) != len(pc.ByPrefix) || back.prefixIdeal.HitTokens != pc.HitTokens {
		t.Errorf("read back: %+v (%v)", back.prefixIdeal, err)
	}
}
