package mockserver

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/kvcache"
	"github.com/perfgate/perfgate/internal/openai"
)

// cachePrompts is n prompts of token ids: one of pool prefixes of 96 ids, then 1 to
// 40 fresh ids. gpt2's ids below 50,000 all decode and re-encode to themselves in a
// completions prompt given as token ids, so these are the ids the mock caches.
func cachePrompts(seed uint64, n, pool int) [][]int {
	r := rand.New(rand.NewPCG(seed, 3))
	ids := func(k int) []int {
		out := make([]int, k)
		for i := range out {
			out[i] = 1000 + r.IntN(40000)
		}
		return out
	}
	prefixes := make([][]int, pool)
	for i := range prefixes {
		prefixes[i] = ids(96)
	}
	var ps [][]int
	for range n {
		ps = append(ps, append(append([]int(nil), prefixes[r.IntN(pool)]...), ids(1+r.IntN(40))...))
	}
	return ps
}

// sendCached posts prompt as a completions request (streamed, with usage, when
// stream) and returns the usage's cached_tokens (-1 when it is missing).
func sendCached(t *testing.T, s *Server, prompt []int, stream bool) int {
	t.Helper()
	p, _ := json.Marshal(prompt)
	body := fmt.Sprintf(`{"model":"m","prompt":%s,"max_tokens":2,"ignore_eos":true,"stream":%v,"stream_options":{"include_usage":%v}}`, p, stream, stream)
	if !stream {
		body = fmt.Sprintf(`{"model":"m","prompt":%s,"max_tokens":2,"ignore_eos":true}`, p)
	}
	resp, b := post(t, s.URL()+"/v1/completions", body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return usageCached(t, b, stream)
}

// usageCached reads usage.prompt_tokens_details.cached_tokens from a whole response
// or a stream's final usage chunk (-1 when absent).
func usageCached(t *testing.T, b []byte, stream bool) int {
	t.Helper()
	var u struct {
		Usage *openai.Usage `json:"usage"`
	}
	if stream {
		for line := range strings.SplitSeq(string(b), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var c struct {
				Usage *openai.Usage `json:"usage"`
			}
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("chunk %q: %v", data, err)
			}
			if c.Usage != nil {
				u.Usage = c.Usage
			}
		}
	} else if err := json.Unmarshal(b, &u); err != nil {
		t.Fatalf("response %s: %v", b, err)
	}
	if u.Usage == nil || u.Usage.PromptTokensDetails == nil {
		return -1
	}
	return u.Usage.PromptTokensDetails.CachedTokens
}

// With an unbounded cache, and with one that evicts, every request's cached_tokens
// (whole and streamed) is the model's for the same prompts in the same order, and
// the sums equal the ideal rate's hit tokens and the vLLM counters.
func TestPrefixCacheMatchesModel(t *testing.T) {
	prompts := cachePrompts(1, 300, 12)
	for _, capacity := range []int{0, 40} {
		t.Run(fmt.Sprint("blocks=", capacity), func(t *testing.T) {
			s := start(t, Config{Fast: true, PrefixCache: PrefixCache{Blocks: capacity}})
			model, _ := kvcache.New(kvcache.DefaultBlockSize, capacity)
			ideal, _ := kvcache.NewIdeal(kvcache.DefaultBlockSize, capacity)
			var sum, prompt int
			for i, p := range prompts {
				want := model.Access(p)
				ideal.Add(p)
				got := sendCached(t, s, p, i%2 == 1)
				if got != want {
					t.Fatalf("request %d (stream %v): cached_tokens %d, the model's %d", i, i%2 == 1, got, want)
				}
				sum += got
				prompt += len(p)
			}
			r := ideal.Result()
			if int64(sum) != r.LRU.Tokens || r.LRU.Tokens == 0 {
				t.Errorf("Σcached_tokens = %d, ideal hit tokens %d", sum, r.LRU.Tokens)
			}
			if capacity > 0 && r.LRU.Tokens >= r.Infinite.Tokens {
				t.Errorf("a cache of %d blocks lost no hits (%d of %d): the test does not evict", capacity, r.LRU.Tokens, r.Infinite.Tokens)
			}
			hits, queries := scrapeCounter(t, s, "vllm:prefix_cache_hits_total"), scrapeCounter(t, s, "vllm:prefix_cache_queries_total")
			if hits != float64(sum) || queries != float64(prompt) {
				t.Errorf("vllm:prefix_cache_hits_total %v, queries %v; want Σcached %d, Σprompt %d", hits, queries, sum, prompt)
			}
			t.Logf("%v; measured %d/%d", r, sum, prompt)
		})
	}
}

// scrapeCounter reads one counter's value from /metrics.
func scrapeCounter(t *testing.T, s *Server, name string) float64 {
	t.Helper()
	_, text := get(t, s.URL()+"/metrics")
	for line := range strings.SplitSeq(text, "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok && (strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ")) {
			var v float64
			if _, err := fmt.Sscan(rest[strings.LastIndexByte(rest, ' ')+1:], &v); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("/metrics lacks %s", name)
	return 0
}

// A cache fault of 0.1 loses the hit of about a tenth of the requests (the blocks
// stay cached, so the others still hit), reproducibly under one seed.
func TestPrefixCacheFault(t *testing.T) {
	prompts := cachePrompts(2, 400, 10)
	run := func() (lost, hitting int, cached []int) {
		s := start(t, Config{Fast: true, Seed: 7, PrefixCache: PrefixCache{Fault: 0.1}})
		model, _ := kvcache.New(kvcache.DefaultBlockSize, 0)
		for _, p := range prompts {
			want := model.Access(p)
			got := sendCached(t, s, p, false)
			switch {
			case want > 0 && got == 0:
				lost++
				hitting++
			case want > 0 && got == want:
				hitting++
			case got != want:
				t.Fatalf("cached_tokens %d, the model's %d: a fault loses a hit whole or not at all", got, want)
			}
			cached = append(cached, got)
		}
		return lost, hitting, cached
	}
	lost, hitting, a := run()
	// Binomial(hitting, 0.1): 4 standard deviations either side.
	mean, sd := 0.1*float64(hitting), math.Sqrt(0.09*float64(hitting))
	if f := float64(lost); f < mean-4*sd || f > mean+4*sd {
		t.Errorf("lost %d hits of %d, want about %.0f", lost, hitting, mean)
	}
	if _, _, b := run(); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("two runs under one seed lost different hits")
	}
}

// Chat reports cached_tokens too; a repeated prompt hits; POST /reset_prefix_cache
// empties the cache.
func TestPrefixCacheChatAndReset(t *testing.T) {
	s := start(t, Config{Fast: true})
	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("to be or not to be ", 20) + `"}],"max_tokens":2,"ignore_eos":true}`
	cached := func(stream bool) int {
		b := body
		if stream {
			b = strings.Replace(body, `"max_tokens"`, `"stream":true,"stream_options":{"include_usage":true},"max_tokens"`, 1)
		}
		resp, out := post(t, s.URL()+"/v1/chat/completions", b)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, out)
		}
		return usageCached(t, out, stream)
	}
	if got := cached(false); got != 0 {
		t.Errorf("first chat request: cached_tokens %d, want 0", got)
	}
	if got := cached(true); got <= 0 || got%kvcache.DefaultBlockSize != 0 {
		t.Errorf("repeated chat request, streamed: cached_tokens %d, want whole blocks", got)
	}
	resp, _ := post(t, s.URL()+"/reset_prefix_cache", "")
	if resp.StatusCode != 200 {
		t.Fatalf("reset: status %d", resp.StatusCode)
	}
	if got := cached(false); got != 0 {
		t.Errorf("after reset: cached_tokens %d, want 0", got)
	}
}

// TTFT pays the prefill cost of the uncached tokens only.
func TestPrefillPerUncachedToken(t *testing.T) {
	c := Config{TTFT: distribution.MustSpec("fixed:2"), PrefixCache: PrefixCache{PrefillPerToken: time.Millisecond}}
	m := newLatencyModel(&c)
	var inflight, streams atomic.Int64
	smp := m.sampler(rand.New(rand.NewPCG(1, 1)), &inflight, &streams)
	for _, tc := range []struct {
		isl, cached int
		want        time.Duration
	}{
		{100, 0, 102 * time.Millisecond},
		{100, 64, 38 * time.Millisecond},
		{100, 100, 2 * time.Millisecond},
	} {
		if got := smp.firstToken(tc.isl, tc.cached); got != tc.want {
			t.Errorf("firstToken(isl %d, cached %d) = %v, want %v", tc.isl, tc.cached, got, tc.want)
		}
	}
}

// Out-of-range prefix-cache settings are refused: by Validate naming the field, and
// at flag parsing naming the flag.
func TestPrefixCacheBadInput(t *testing.T) {
	for _, pc := range []PrefixCache{{BlockSize: -1}, {BlockSize: 1025}, {Blocks: -1}, {Fault: 1.5}, {Fault: -0.1}, {PrefillPerToken: -1}} {
		c := Config{PrefixCache: pc}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "prefix_cache.") {
			t.Errorf("Validate(%+v) = %v, want an error naming prefix_cache.…", pc, err)
		}
	}
	for _, args := range [][]string{{"--block-size", "0"}, {"--block-size", "1025"}, {"--kv-cache-blocks", "-1"}, {"--cache-fault", "1.5"}, {"--cache-fault", "x"}, {"--prefill-ms-per-token", "-1"}} {
		var c Config
		fs := flag.NewFlagSet("mock", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.RegisterFlags(fs)
		if err := fs.Parse(args); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: error %v, want one naming the flag", args, err)
		}
	}
	var c Config
	fs := flag.NewFlagSet("mock", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--block-size", "32", "--kv-cache-blocks", "1000", "--prefill-ms-per-token", "0.05", "--cache-fault", "0.1"}); err != nil {
		t.Fatal(err)
	}
	if want := (PrefixCache{BlockSize: 32, Blocks: 1000, PrefillPerToken: 50 * time.Microsecond, Fault: 0.1}); c.PrefixCache != want || c.Validate() != nil {
		t.Errorf("flags gave %+v (Validate %v), want %+v", c.PrefixCache, c.Validate(), want)
	}
}
