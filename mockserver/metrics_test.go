package mockserver

import (
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/kvcache"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestVLLMMetrics checks the vLLM-named metrics against what the mock served: token
// counters equal the recorded ISL/OSL sums, a repeated prompt hits the prefix cache
// for its whole blocks, and nothing is left running or waiting after the requests.
func TestVLLMMetrics(t *testing.T) {
	s := start(t, Config{Fast: true})
	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("to be or not to be ", 12) + `"}],"max_tokens":5,"ignore_eos":true}`
	for range 2 {
		if resp, b := post(t, s.URL()+"/v1/chat/completions", body); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
	}
	// A request is finished (its metrics observed, its record queued) just after its
	// answer's last byte: wait, bounded, until both are, so that the scrape sees them.
	for end := time.Now().Add(10 * time.Second); len(s.Records()) < 2 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	st, text := get(t, s.URL()+"/metrics")
	if st != 200 {
		t.Fatalf("/metrics status %d", st)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, text)
	}
	val := func(name string) float64 {
		f := fams[name]
		if f == nil || len(f.Metric) == 0 {
			t.Fatalf("/metrics lacks %s:\n%s", name, text)
		}
		m := f.Metric[0]
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
		return -1
	}
	recs := s.Records()
	var isl, osl int
	for _, r := range recs {
		isl += r.ISL
		osl += r.OSL
	}
	if got := val("vllm:generation_tokens_total"); got != float64(osl) || osl != 10 {
		t.Errorf("vllm:generation_tokens_total = %v, want the served OSL sum %d (= 10)", got, osl)
	}
	if got := val("vllm:prompt_tokens_total"); got != float64(isl) {
		t.Errorf("vllm:prompt_tokens_total = %v, want %d", got, isl)
	}
	if got := val("vllm:prefix_cache_queries_total"); got != float64(isl) {
		t.Errorf("vllm:prefix_cache_queries_total = %v, want %d", got, isl)
	}
	// The second prompt repeats the first: every whole block of it before its last
	// token hits.
	if got, want := val("vllm:prefix_cache_hits_total"), float64(kvcache.Lookable(isl/2, PrefixBlockTokens)*PrefixBlockTokens); got != want || want == 0 {
		t.Errorf("vllm:prefix_cache_hits_total = %v, want %v", got, want)
	}
	if got := val("vllm:time_to_first_token_seconds"); got != 2 {
		t.Errorf("vllm:time_to_first_token_seconds count = %v, want 2", got)
	}
	for _, g := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"} {
		if got := val(g); got != 0 {
			t.Errorf("%s = %v after every request finished, want 0", g, got)
		}
	}
}
