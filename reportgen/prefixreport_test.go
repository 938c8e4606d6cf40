package reportgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// prefixRun is a synthetic run with prefix-cache data: each successful request
// started with pool prefix i%5+1 and reported half its prompt (its server's usage
// count) as cached, and the ideal counts of a pool of five, 100 ms slices.
func prefixRun() (Run, *record.PrefixCacheIdeal) {
	recs := syntheticRun(300, 1)
	for i := range recs {
		recs[i].Prefix = i%5 + 1
		recs[i].UsagePromptTokens = recs[i].ISL + 10
		if recs[i].OK() {
			recs[i].CachedTokens = record.Some(recs[i].UsagePromptTokens / 2)
		}
	}
	ideal := &record.PrefixCacheIdeal{BlockSize: 16, SliceWidth: 100 * time.Millisecond}
	for k := range 150 { // 300 requests 50 ms apart: 15 s
		ideal.Slices = append(ideal.Slices, record.PrefixCacheCount{PromptTokens: 220, HitTokens: 160})
		ideal.PromptTokens += 220
		ideal.HitTokens += 160
		_ = k
	}
	for p := range 5 {
		ideal.ByPrefix = append(ideal.ByPrefix, record.PrefixCacheCount{PromptTokens: 1000, HitTokens: int64(900 - 100*p)})
	}
	ideal.UnboundedHitTokens = ideal.HitTokens + 1100
	run := Run{Records: recs, Metrics: metricsOf(recs), Manifest: Manifest{Scenario: "prefix", Seed: 1}, PrefixCache: ideal}
	return run, ideal
}

// TestPrefixSection: the section's rates from records and ideal counts worked out by
// hand: per slice the requests sent in it (Σcached/Σprompt) and the ideal slices whose
// middle falls in it, per rank the prefix's own counts; a pool of 100 is binned by
// powers of two; NaN where a slice has nothing; a run without prefix data has no
// section, and one with only an ideal says the measured rate is unknown.
func TestPrefixSection(t *testing.T) {
	var d prefixData
	for _, r := range []record.Client{
		{Sent: 50 * time.Millisecond, Prefix: 1, UsagePromptTokens: 100, CachedTokens: record.Some(80)},
		{Sent: 70 * time.Millisecond, Prefix: 2, UsagePromptTokens: 100, CachedTokens: record.Some(0)},
		{Sent: 250 * time.Millisecond, Prefix: 1, UsagePromptTokens: 200, CachedTokens: record.Some(150)},
		{Sent: 260 * time.Millisecond, Prefix: 3, UsagePromptTokens: -1, ISL: 40}, // reported nothing
	} {
		d.add(&r)
	}
	ideal := &record.PrefixCacheIdeal{BlockSize: 16, SliceWidth: 50 * time.Millisecond,
		Slices:   counts(100, 50, 100, 100, 0, 0, 0, 0, 200, 200, 200, 100),
		ByPrefix: counts(300, 250, 100, 100, 40, 0)}
	m, id := prefixSlices(&d, ideal, 0.0, 0.1, 3)
	// Slice 0 [0, 0.1 s): measured (80+0)/(100+100); ideal slices 0 and 1 (middles 25, 75 ms).
	// Slice 1: nothing sent; slice 2: 150/200 and ideal slices 4, 5 (225, 275 ms).
	want := func(got []float64, w ...float64) bool {
		for i := range w {
			if math.IsNaN(w[i]) != math.IsNaN(got[i]) || !math.IsNaN(w[i]) && math.Abs(got[i]-w[i]) > 1e-12 {
				return false
			}
		}
		return len(got) == len(w)
	}
	if !want(m, 0.4, math.NaN(), 0.75) || !want(id, 0.75, math.NaN(), 0.75) {
		t.Errorf("slices: measured %v, ideal %v", m, id)
	}
	p := prefixSection(&d, ideal, 0, 0.1, 3, []float64{0, 0.1, 0.2}, nil)
	rows := fmt.Sprint(p.Ranks)
	if rows != "[{1 2 0.7667 0.8333} {2 1 0.0000 1.0000} {3 1 N/A 0.0000}]" || len(p.Figures) != 2 {
		t.Errorf("ranks %s, %d figures", rows, len(p.Figures))
	}
	big := prefixData{byPrefix: map[int]*prefixCount{}}
	for r := 1; r <= 100; r++ {
		big.byPrefix[r] = &prefixCount{requests: 1, cached: int64(r), prompt: 100}
	}
	p = prefixSection(&big, nil, 0, 1, 1, []float64{0}, nil)
	var bins []string
	for _, r := range p.Ranks {
		bins = append(bins, r.Ranks+":"+r.Requests)
	}
	if got := strings.Join(bins, " "); got != "1:1 2–3:2 4–7:4 8–15:8 16–31:16 32–63:32 64–100:37" || !strings.Contains(p.Note, "No ideal hit rate") {
		t.Errorf("bins %s; note %q", got, p.Note)
	}
	if p := prefixSection(&prefixData{}, nil, 0, 1, 1, []float64{0}, nil); p != nil {
		t.Errorf("a run without prefix data has a section: %+v", p)
	}
	if p := prefixSection(&prefixData{}, ideal, 0, 0.1, 3, []float64{0, 0.1, 0.2}, nil); p == nil || !strings.Contains(p.Note, "reported no cached_tokens") {
		t.Errorf("ideal only: %+v", p)
	}
}

// counts makes (prompt, hit) pairs.
func counts(v ...int64) []record.PrefixCacheCount {
	var out []record.PrefixCacheCount
	for i := 0; i+1 < len(v); i += 2 {
		out = append(out, record.PrefixCacheCount{PromptTokens: v[i], HitTokens: v[i+1]})
	}
	return out
}

// TestRunReportPrefixSection: report.html has the section (its charts and the rank
// table) for a run with prefix data, and none for one without.
func TestRunReportPrefixSection(t *testing.T) {
	run, ideal := prefixRun()
	var b bytes.Buffer
	if err := WriteRunReport(&b, run.Records, &run.Manifest, RunReportOptions{PrefixCache: ideal}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"<h2>Prefix cache</h2>", `id="prefix-cache-time"`, `id="prefix-cache-rank"`, `<table id="prefix-ranks">`} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("report lacks %s", w)
		}
	}
	b.Reset()
	plain := testRun()
	if err := WriteRunReport(&b, plain.Records, &plain.Manifest, RunReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Prefix cache") {
		t.Error("a run without prefix data has a Prefix cache section")
	}
}

// TestAIPerfPrefixCacheFields: AIPerf's usage_prompt_cached_tokens (distribution and
// per request), total_usage_prompt_cached_tokens and theoretical_prefix_cache_hit
// (the unbounded ideal, in percent) against the records' own sums; a run without
// cached tokens or an ideal has none of them.
func TestAIPerfPrefixCacheFields(t *testing.T) {
	run, ideal := prefixRun()
	var b bytes.Buffer
	if err := WriteAIPerfJSON(&b, run); err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	type field struct {
		Unit string   `json:"unit"`
		Avg  float64  `json:"avg"`
		Max  *float64 `json:"max"`
	}
	got := map[string]field{}
	for _, k := range []string{AIPerfCachedTokens, AIPerfTotalCachedTokens, AIPerfTheoreticalHit} {
		var f field
		if err := json.Unmarshal(raw[k], &f); err != nil {
			t.Fatalf("%s: %v (%s)", k, err, raw[k])
		}
		got[k] = f
	}
	sum, n, most := 0.0, 0, 0.0
	for _, r := range run.Records {
		if r.OK() && !r.Warmup {
			sum += float64(r.CachedTokens.N)
			n++
			most = max(most, float64(r.CachedTokens.N))
		}
	}
	c, tot, th := got[AIPerfCachedTokens], got[AIPerfTotalCachedTokens], got[AIPerfTheoreticalHit]
	if c.Unit != "tokens" || math.Abs(c.Avg-sum/float64(n)) > 1e-9 || c.Max == nil || *c.Max != most {
		t.Errorf("%s = %+v, want avg %v max %v", AIPerfCachedTokens, c, sum/float64(n), most)
	}
	if tot.Unit != "tokens" || tot.Avg != sum {
		t.Errorf("%s = %+v, want %v", AIPerfTotalCachedTokens, tot, sum)
	}
	if want := 100 * float64(ideal.UnboundedHitTokens) / float64(ideal.PromptTokens); th.Unit != "%" || math.Abs(th.Avg-want) > 1e-9 {
		t.Errorf("%s = %+v, want %v", AIPerfTheoreticalHit, th, want)
	}
	b.Reset()
	if err := WriteAIPerfJSONL(&b, run.Records[:2]); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`"%s":{"value":%d,"unit":"tokens"}`, AIPerfCachedTokens, run.Records[0].CachedTokens.N); !strings.Contains(b.String(), want) {
		t.Errorf("JSONL lacks %s:\n%s", want, b.String())
	}
	b.Reset()
	if err := WriteAIPerfJSON(&b, testRun()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{AIPerfCachedTokens, AIPerfTotalCachedTokens, AIPerfTheoreticalHit} {
		if strings.Contains(b.String(), `"`+f+`"`) {
			t.Errorf("a run without prefix data exports %s", f)
		}
	}
}
