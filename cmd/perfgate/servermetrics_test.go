package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/servermetrics"
)

// TestProfileServerMetrics scrapes the mock's /metrics around a run, plus two
// endpoints that fail (one answers 503, one refuses connections), and checks the
// deltas against what the mock recorded serving, that the failures are recorded and
// reported without failing the run, and that a token in a URL is never written.
func TestProfileServerMetrics(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	t.Cleanup(down.Close)
	closed := "http://127.0.0.1:" + strconv.Itoa(freePort(t)) + "/metrics?token=sekrit-token"
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "--request-count", "12", "--concurrency", "3", "--isl", "40", "--osl", "8",
		"--extra-inputs", "ignore_eos:true", "--random-seed", "3", "--artifact-dir", art, "-q",
		"--server-metrics", "/metrics", "--server-metrics", down.URL+"/metrics", "--server-metrics", closed,
		"--server-metrics-interval", "0.02")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0 (failed scrapes do not fail a run)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var srv []record.Server
	f, err := os.Open(filepath.Join(art, "server.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err = record.Read[record.Server](f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var isl, osl int
	for _, r := range srv {
		isl += r.ISL
		osl += r.OSL
	}
	if len(srv) != 12 || osl != 12*8 {
		t.Fatalf("the mock served %d requests, %d output tokens; want 12 and 96", len(srv), osl)
	}
	var sum servermetrics.Summary
	readJSON(t, filepath.Join(art, servermetrics.SummaryFile), &sum)
	if len(sum.Endpoints) != 3 {
		t.Fatalf("server_metrics.json has %d endpoints, want 3: %+v", len(sum.Endpoints), sum)
	}
	mock, bad, refused := sum.Endpoints[0], sum.Endpoints[1], sum.Endpoints[2]
	d := mock.Derived
	if d.GenerationTokens == nil || *d.GenerationTokens != float64(osl) {
		t.Errorf("generation tokens delta = %v, want the OSL the mock served, %d", d.GenerationTokens, osl)
	}
	if d.PromptTokens == nil || *d.PromptTokens != float64(isl) {
		t.Errorf("prompt tokens delta = %v, want the ISL the mock received, %d", d.PromptTokens, isl)
	}
	if d.PrefixCacheHitRate == nil || *d.PrefixCacheHitRate < 0 || *d.PrefixCacheHitRate > 1 {
		t.Errorf("prefix-cache hit rate = %v, want a fraction", d.PrefixCacheHitRate)
	}
	if d.MeanRunning == nil || d.PeakKVCacheUsage == nil || d.MeanTTFTSeconds == nil || *d.MeanTTFTSeconds <= 0 {
		t.Errorf("derived = %+v, want mean running, peak KV usage and a positive server TTFT", d)
	}
	if mock.Failures != 0 || mock.Scrapes < 2 {
		t.Errorf("mock endpoint: %d scrapes, %d failed (%q); want >= 2 (before, after), none failed", mock.Scrapes, mock.Failures, mock.Errors)
	}
	for _, e := range []servermetrics.Endpoint{bad, refused} {
		if e.Scrapes < 2 || e.Failures != e.Scrapes || len(e.Errors) == 0 {
			t.Errorf("%s: %d scrapes, %d failed, errors %q; want every scrape failed and recorded", e.URL, e.Scrapes, e.Failures, e.Errors)
		}
	}
	if !strings.Contains(bad.Errors[0], "HTTP 503") {
		t.Errorf("503 endpoint error = %q, want it to say HTTP 503", bad.Errors[0])
	}
	if !strings.Contains(out, "failed scrape") || !strings.Contains(out, "generation tokens (server):") {
		t.Errorf("stdout does not report the server metrics and the failed scrapes:\n%s", out)
	}
	// The JSONL: a before and an after line per URL, in that order.
	lf, err := os.Open(filepath.Join(art, servermetrics.File))
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	phases := map[string][]string{}
	sc := bufio.NewScanner(lf)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var s servermetrics.Scrape
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("server_metrics.jsonl: %v", err)
		}
		phases[s.URL] = append(phases[s.URL], s.Phase)
	}
	for u, ps := range phases {
		if ps[0] != servermetrics.PhaseBefore || ps[len(ps)-1] != servermetrics.PhaseAfter {
			t.Errorf("%s: phases %v, want before first and after last", u, ps)
		}
	}
	html, _ := os.ReadFile(filepath.Join(art, "report.html"))
	if !strings.Contains(string(html), "Server metrics") || !strings.Contains(string(html), "vllm:generation_tokens_total") {
		t.Errorf("report.html lacks the server metrics section")
	}
	// No artifact carries the token.
	filepath.WalkDir(art, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), "sekrit-token") {
			t.Errorf("%s carries the URL's token", filepath.Base(p))
		}
		return nil
	})
	if strings.Contains(out+errOut, "sekrit-token") {
		t.Errorf("the console carries the URL's token")
	}
}

// TestProfileServerMetricsBadURL: a malformed scrape URL is invalid configuration
// (exit 2) naming the flag, found before any request is sent.
func TestProfileServerMetricsBadURL(t *testing.T) {
	s := newBadServer(t, func(int) string { return "ok" })
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--server-metrics", "ftp://127.0.0.1/metrics?key=sekrit"}, "--server-metrics: url \"ftp://127.0.0.1/metrics?key=redacted\""},
		{[]string{"--server-metrics", "metrics"}, "--server-metrics: url \"metrics\""},
		{[]string{"--server-metrics", "http:///metrics"}, "no host"},
		{[]string{"--server-metrics", "/metrics", "--server-metrics-interval", "0"}, "--server-metrics-interval 0"},
		{[]string{"--server-metrics-interval", "2"}, "--server-metrics-interval needs --server-metrics"},
	} {
		if errOut := profileInvalid(t, s, tc.flags, tc.want); strings.Contains(errOut, "sekrit") {
			t.Errorf("%v: the error carries the URL's secret: %s", tc.flags, errOut)
		}
	}
}
