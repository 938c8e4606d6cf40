package servermetrics

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func parse(t *testing.T, text string) []Sample {
	t.Helper()
	s, _, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

const exposition = `# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{model_name="m"} %Q
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{model_name="m"} %H
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m",engine="0"} %R
vllm:num_requests_running{model_name="m",engine="1"} %R
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="m"} %K
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1"} %C
vllm:time_to_first_token_seconds_bucket{le="+Inf"} %C
vllm:time_to_first_token_seconds_sum %S
vllm:time_to_first_token_seconds_count %C
`

func expo(q, h, r, k, c, s string) string {
	return strings.NewReplacer("%Q", q, "%H", h, "%R", r, "%K", k, "%C", c, "%S", s).Replace(exposition)
}

// TestAccumulator checks deltas (with a counter reset), gauge statistics over the
// scrapes during the run, label sets added up, and the derived figures.
func TestAccumulator(t *testing.T) {
	a := NewAccumulator()
	add := func(phase string, text string) { a.Add(Scrape{URL: "u", Phase: phase, Samples: parse(t, text)}) }
	add(PhaseBefore, expo("100", "10", "0", "0", "5", "1"))
	add(PhaseDuring, expo("150", "30", "2", "0.5", "8", "1.6"))
	add(PhaseDuring, expo("20", "10", "4", "0.25", "10", "2"))                // the server restarted: queries and hits reset
	a.Add(Scrape{URL: "u", Phase: PhaseDuring, Error: "servermetrics: boom"}) // a failure counts, adds nothing
	add(PhaseAfter, expo("60", "20", "0", "0.1", "11", "2.2"))
	s := a.Summary()
	if len(s.Endpoints) != 1 {
		t.Fatalf("endpoints = %d, want 1", len(s.Endpoints))
	}
	e := s.Endpoints[0]
	if e.Scrapes != 5 || e.Failures != 1 || len(e.Errors) != 1 {
		t.Errorf("scrapes %d, failures %d, errors %v; want 5, 1, [boom]", e.Scrapes, e.Failures, e.Errors)
	}
	// queries: +50, reset to 20 (+20), +40 = 110; hits: +20, +10, +10 = 40.
	d := e.Derived
	if d.PrefixCacheHitRate == nil || *d.PrefixCacheHitRate != 40.0/110 {
		t.Errorf("prefix-cache hit rate = %v, want 40/110", d.PrefixCacheHitRate)
	}
	// running: two engines added up, during scrapes only: (2+2 + 4+4)/2 = 6.
	if d.MeanRunning == nil || *d.MeanRunning != 6 || *d.PeakRunning != 8 {
		t.Errorf("running mean %v peak %v, want 6 and 8", d.MeanRunning, d.PeakRunning)
	}
	if d.PeakKVCacheUsage == nil || *d.PeakKVCacheUsage != 0.5 {
		t.Errorf("peak KV usage = %v, want 0.5", d.PeakKVCacheUsage)
	}
	// TTFT: count 5 → 11 (delta 6), sum 1 → 2.2 (delta 1.2): mean 0.2 s.
	if d.MeanTTFTSeconds == nil || *d.MeanTTFTSeconds < 0.2-1e-12 || *d.MeanTTFTSeconds > 0.2+1e-12 {
		t.Errorf("mean TTFT = %v, want 0.2", d.MeanTTFTSeconds)
	}
	if e.GaugesOver != "during" {
		t.Errorf("gauges over %q, want during", e.GaugesOver)
	}
	if d.SpecDecodeAcceptanceRate != nil || d.GenerationTokens != nil {
		t.Errorf("figures without their metrics were derived: %+v", d)
	}
	// Summarize reads the same scrapes back from JSON lines.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	b := NewAccumulator()
	for _, txt := range []string{expo("1", "0", "1", "0.1", "0", "0"), expo("3", "1", "1", "0.1", "0", "0")} {
		sc := Scrape{URL: "v", Phase: PhaseAfter, Samples: parse(t, txt)}
		b.Add(sc)
		enc.Encode(sc)
	}
	buf.WriteString(`{"url":"v","pha`) // a last line cut short by a killed writer
	got, err := Summarize(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := *got.Endpoints[0].Derived.PrefixCacheHitRate, *b.Summary().Endpoints[0].Derived.PrefixCacheHitRate; g != w || w != 0.5 {
		t.Errorf("Summarize hit rate %v, Accumulator %v; want both 0.5", g, w)
	}
}

func TestRedactAndValidate(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:1/metrics?token=abc&x=1": "http://h:1/metrics?token=redacted&x=redacted",
		"http://user:pw@h/metrics":         "http://h/metrics",
		"/metrics":                         "/metrics",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	err := Config{URLs: []string{"ftp://h/m?k=secret", "http:///m", "/metrics", "https://h/m"}, Interval: -1}.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad config")
	}
	msg := err.Error()
	for _, want := range []string{"ftp://h/m?k=redacted", "no host", "interval -1ns"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Validate error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "secret") || strings.Count(msg, "\n") != 2 {
		t.Errorf("Validate error = %q; want three problems and no secret", msg)
	}
	c := Config{URLs: []string{"/metrics", "http://other:9/m"}}.Resolve("http://127.0.0.1:8000/v1/chat/completions")
	if c.URLs[0] != "http://127.0.0.1:8000/metrics" || c.URLs[1] != "http://other:9/m" {
		t.Errorf("Resolve = %v", c.URLs)
	}
	var back Config
	b, _ := json.Marshal(Config{URLs: []string{"http://h/m?t=s"}, Interval: 1500000000})
	if err := json.Unmarshal(b, &back); err != nil || string(b) != `{"urls":["http://h/m?t=redacted"],"interval":"1.5s"}` || back.Interval.Seconds() != 1.5 {
		t.Errorf("JSON round trip: %s → %+v, %v", b, back, err)
	}
}

// TestSGLangSpecAcceptance: SGLang's acceptance gauge is averaged over the scrapes
// during the run; vLLM's counters, when present, win.
func TestSGLangSpecAcceptance(t *testing.T) {
	a := NewAccumulator()
	for _, sc := range []struct{ phase, v string }{{PhaseBefore, "0.1"}, {PhaseDuring, "0.6"}, {PhaseDuring, "0.8"}, {PhaseAfter, "0.9"}} {
		a.Add(Scrape{URL: "s", Phase: sc.phase, Samples: parse(t, "# TYPE sglang:spec_accept_rate gauge\nsglang:spec_accept_rate{model_name=\"m\"} "+sc.v+"\n")})
	}
	d := a.Summary().Endpoints[0].Derived
	if d.SpecDecodeAcceptanceRate == nil || *d.SpecDecodeAcceptanceRate < 0.7-1e-12 || *d.SpecDecodeAcceptanceRate > 0.7+1e-12 {
		t.Errorf("SGLang spec-decode acceptance = %v, want 0.7 (the mean over the run's scrapes)", d.SpecDecodeAcceptanceRate)
	}
}
