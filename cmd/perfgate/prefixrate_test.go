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
// a mock losing 10% of its hits fails it (exit 99); and a run whose server gave no
// cached_tokens and no counters cannot be judged: exit 1, INVALID, never a pass.
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

	code, out, errOut = cli(t, "profile", "--mock", "--config", file("0.1"), "--request-count", "400", "--concurrency", "4",
		"--endpoint-type", "completions", "--artifact-dir", filepath.Join(dir, "faulty"))
	if code != ExitAssertFailed || !strings.Contains(out, "FAIL prefix_cache_gap = ") {
		t.Errorf("mock with cache fault 0.1: exit %d, want %d\n%s\n%s", code, ExitAssertFailed, out, errOut)
	}

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
