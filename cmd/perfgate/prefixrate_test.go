package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/servermetrics"
)

// The prefix-cache rules from the CLI and a scenario file: the healthy mock passes
// prefix_cache_gap<=0.02 and metrics.json and the console table carry the three rates;
// a mock losing 10% of its hits fails it (exit 99); each, re-judged from its directory
// (perfgate report DIR --assert), gets the live run's verdict and numbers; and a run
// whose server gave no cached_tokens and no counters cannot be judged: exit 1,
// INVALID, never a pass.
func TestPrefixCacheRulesCLI(t *testing.T) {
	dir := t.TempDir()
	file := func(fault string) string {
		p := filepath.Join(dir, "s"+fault+".yaml")
		src := "name: prefix\nisl: fixed:160\nosl: fixed:2\nprefix_tokens: 16\nnum_prefix_prompts: 20\nprompt_prefix_length: 96\nseed: 38\n" +
			"mock:\n  fast: true\n  prefix_cache:\n    fault: " + fault + "\nobjectives:\n  rules: [\"prefix_cache_gap<=0.02\"]\n"
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	healthy := filepath.Join(dir, "healthy")
	code, out, errOut := cli(t, "profile", "--mock", "--config", file("0"), "--request-count", "400", "--concurrency", "4",
		"--endpoint-type", "completions", "--artifact-dir", healthy)
	if code != ExitOK || !strings.Contains(out, "PASS prefix_cache_gap = 0%") {
		t.Fatalf("healthy mock: exit %d\n%s\n%s", code, out, errOut)
	}
	// Re-judged from its directory, the run passes as it did, with the same numbers.
	reassert(t, healthy, "prefix_cache_gap<=0.02", out, ExitOK)
	for _, h := range []string{"Prefix Cache Hit Rate", "Prefix Cache Ideal Hit Rate", "Prefix Cache Gap"} {
		if !regexp.MustCompile(regexp.QuoteMeta(h) + `.*\d\.\d{4}`).MatchString(out) {
			t.Errorf("console table has no %q row with four decimals:\n%s", h, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(healthy, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m record.Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{record.MetricPrefixCacheHitRate, record.MetricPrefixCacheIdealHitRate, record.MetricPrefixCacheGap} {
		if _, ok := m.Scalars[k]; !ok {
			t.Errorf("metrics.json has no %s", k)
		}
	}

	faulty := filepath.Join(dir, "faulty")
	code, out, errOut = cli(t, "profile", "--mock", "--config", file("0.1"), "--request-count", "400", "--concurrency", "4",
		"--endpoint-type", "completions", "--artifact-dir", faulty)
	if code != ExitAssertFailed || !strings.Contains(out, "FAIL prefix_cache_gap = ") {
		t.Errorf("mock with cache fault 0.1: exit %d, want %d\n%s\n%s", code, ExitAssertFailed, out, errOut)
	}
	// And the faulty run fails again, by the same gap.
	reassert(t, faulty, "prefix_cache_gap<=0.02", out, ExitAssertFailed)

	// The healthy run as a server without cached_tokens nor counters would have left it.
	client := filepath.Join(healthy, "client.jsonl")
	recs, err := os.ReadFile(client)
	if err != nil {
		t.Fatal(err)
	}
	stripped := regexp.MustCompile(`,"cached_tokens":\d+`).ReplaceAll(recs, nil)
	if bytes.Equal(stripped, recs) {
		t.Fatal("client.jsonl has no cached_tokens to strip")
	}
	if err := os.WriteFile(client, stripped, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{servermetrics.File, servermetrics.SummaryFile} {
		_ = os.Remove(filepath.Join(healthy, f))
	}
	for _, rule := range []string{"prefix_cache_gap<=0.02", "prefix_cache_hit_rate>=0.6"} {
		code, out, errOut = cli(t, "report", healthy, "--assert", rule)
		if code != ExitRuntime || !strings.Contains(out, "INVALID cannot check") || !strings.Contains(out, "unknown for this run") || strings.Contains(out, "PASS "+rule[:10]) {
			t.Errorf("report --assert %s on a run without cached_tokens nor counters: exit %d, want %d (invalid)\n%s\n%s", rule, code, ExitRuntime, out, errOut)
		}
	}
}

// reassert re-judges the saved run in dir with `perfgate report DIR --assert rule`
// and checks it judges the prefix cache as the live run did (its output live, its exit
// code code): the same verdict line, the same exit code, and the three prefix-cache
// numbers of the live run's metrics.json (which report rewrites). The ideal hit rate is
// in no record, so this holds only if the re-read run keeps the one metrics.json
// saved (Outcome.Recompute).
func reassert(t *testing.T, dir, rule, live string, code int) {
	t.Helper()
	want, before := verdictLine(live, "prefix_cache_gap"), prefixScalars(t, dir)
	got, out, errOut := cli(t, "report", dir, "--assert", rule)
	if line := verdictLine(out, "prefix_cache_gap"); got != code || line != want {
		t.Errorf("report %s --assert %q: exit %d, verdict %q; want the live run's %d, %q\n%s\n%s", filepath.Base(dir), rule, got, line, code, want, out, errOut)
	}
	if after := prefixScalars(t, dir); after != before {
		t.Errorf("report %s --assert: metrics.json rewritten with %v; the live run had %v", filepath.Base(dir), after, before)
	}
}

// verdictLine is the first line of out that gives a verdict on a rule naming name.
func verdictLine(out, name string) string {
	for l := range strings.Lines(out) {
		l = strings.TrimSpace(l)
		if (strings.HasPrefix(l, "PASS ") || strings.HasPrefix(l, "FAIL ") || strings.HasPrefix(l, "INVALID ")) && strings.Contains(l, name) {
			return l
		}
	}
	return ""
}

// prefixScalars are the three prefix-cache rates in dir's metrics.json; an absent
// one fails the test.
func prefixScalars(t *testing.T, dir string) [3]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m record.Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var v [3]float64
	for i, k := range []string{record.MetricPrefixCacheHitRate, record.MetricPrefixCacheIdealHitRate, record.MetricPrefixCacheGap} {
		s, ok := m.Scalars[k]
		if !ok {
			t.Errorf("%s/metrics.json has no %s", dir, k)
		}
		v[i] = s.Value
	}
	return v
}
