package loadgen

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/kvcache"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/record"
)

// The ideal hit rate loadgen counts equals, token for token, what the mock's prefix
// cache (the same model, fed the ids it tokenized) served the measured requests: with
// an unbounded cache at any concurrency, and with an evicting one of the same capacity
// when requests (priming ones too) go one at a time (then the send order is the
// server's order; concurrent requests into an evicting cache may reach it in another). Chat
// (the template's rendering), completions, multi-turn and primed runs.
func TestIdealMatchesMock(t *testing.T) {
	for _, tc := range []struct {
		name     string
		api      Endpoint
		conc     int
		blocks   int
		turns    string
		prime    bool
		warmup   int
		stream   bool
		userCtxt int
	}{
		{name: "chat stream unbounded", api: EndpointChat, conc: 6, stream: true, prime: true},
		{name: "completions unbounded warmup", api: EndpointCompletions, conc: 4, warmup: 10, userCtxt: 24},
		{name: "chat multi-turn unbounded", api: EndpointChat, conc: 3, turns: "fixed:3"},
		{name: "completions evicting sequential", api: EndpointCompletions, conc: 1, blocks: 60, prime: true},
		{name: "chat evicting sequential", api: EndpointChat, conc: 1, blocks: 45, stream: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:0.2"), ITL: spec(t, "fixed:0.1"),
				PrefixCache: mockserver.PrefixCache{Blocks: tc.blocks}})
			cfg := Config{
				Target: Target{URLs: []string{s.BaseURL()}, API: tc.api, NoStream: !tc.stream},
				Workload: Workload{ISL: fixed(160), OSL: fixed(2), PrefixTokens: 20, Seed: 7,
					Prefixes: Prefixes{NumPrefixPrompts: 6, PromptPrefixLength: 64, PrefixPopularity: dataset.Popularity{Zipf: 1.1},
						UserContextPromptLength: tc.userCtxt, PrimePrefixes: tc.prime, PrimeConcurrency: tc.conc, KVCacheBlocks: tc.blocks}},
				Load: Load{Concurrency: tc.conc},
				Stop: Stop{Requests: 120, WarmupRequests: tc.warmup},
			}
			if tc.turns != "" {
				cfg.Turns = spec(t, tc.turns)
			}
			out, err := Run(context.Background(), cfg, gpt2(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if out.PrefixCache == nil {
				t.Fatal("no ideal hit rate counted")
			}
			warm := map[string]bool{}
			for _, r := range out.Records {
				if r.Warmup {
					warm[r.RequestID] = true
				}
			}
			// The mock records a request just after its last byte went out: let the
			// ones the client saw finish be recorded.
			for i := 0; s.InFlight() > 0 && i < 5000; i++ {
				time.Sleep(time.Millisecond)
			}
			var cached, prompt, n int64
			for _, r := range s.Records() {
				if warm[r.RequestID] {
					continue
				}
				n++
				cached += int64(r.CachedTokens)
				prompt += int64(r.ISL)
			}
			got := out.PrefixCache
			if got.Requests != n || got.PromptTokens != prompt || got.HitTokens != cached {
				t.Errorf("ideal: %d requests, %d prompt tokens, %d hit; the mock served %d measured requests of %d prompt tokens, %d cached",
					got.Requests, got.PromptTokens, got.HitTokens, n, prompt, cached)
			}
			if got.Rate <= 0 || got.Capacity != tc.blocks || got.BlockSize != kvcache.DefaultBlockSize {
				t.Errorf("ideal %+v: want a positive rate, capacity %d, blocks of %d", got, tc.blocks, kvcache.DefaultBlockSize)
			}
			if v, ok := out.Metrics.Scalars[record.MetricPrefixCacheIdealHitRate]; !ok || v.Value != got.Rate {
				t.Errorf("metrics' %s = %v (%v), want %v", record.MetricPrefixCacheIdealHitRate, v.Value, ok, got.Rate)
			}
			// The client read every answer's cached_tokens (streamed: the final usage
			// chunk), so the measured rate is the ideal one exactly: gap 0.
			var clientCached int64
			for _, r := range out.Records {
				if !r.CachedTokens.Known {
					t.Fatalf("%s: no cached_tokens recorded", r.RequestID)
				}
				if !r.Warmup {
					clientCached += int64(r.CachedTokens.N)
				}
			}
			if clientCached != cached {
				t.Errorf("the client recorded %d cached tokens, the mock served %d", clientCached, cached)
			}
			hit, ok1 := out.Metrics.Scalars[record.MetricPrefixCacheHitRate]
			gap, ok2 := out.Metrics.Scalars[record.MetricPrefixCacheGap]
			if !ok1 || !ok2 || hit.Value != got.Rate || gap.Value != 0 {
				t.Errorf("measured %v (%v), gap %v (%v); want %v and 0", hit.Value, ok1, gap.Value, ok2, got.Rate)
			}
		})
	}
}

// A run whose prompts share nothing by design counts no ideal rate (it would cost a
// render and an encoding a request for nothing).
func TestIdealOffWithoutSharing(t *testing.T) {
	cfg := Config{Workload: Workload{ISL: fixed(50)}}
	if f := newIdealFeed(&cfg, gpt2(t)); f != nil {
		t.Errorf("newIdealFeed without shared prefixes, turns or capacity = %v, want nil", f)
	}
	cfg.KVCacheBlocks = 100
	if f := newIdealFeed(&cfg, gpt2(t)); f == nil {
		t.Errorf("newIdealFeed with kv_cache_blocks = nil, want a feed")
	}
}

// The feed restores send order: prompts finished in any order count as fed in order,
// and one finished too late (past maxIdealPending later ones) is fed when it arrives.
func TestIdealFeedOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 300
	prompts := make([][]int, n)
	for i := range prompts {
		base := rng.IntN(5) * 1000
		ids := make([]int, 16*(2+rng.IntN(4))+rng.IntN(16))
		for k := range ids {
			ids[k] = base + k
			if k > 40 {
				ids[k] = rng.IntN(50000)
			}
		}
		prompts[i] = ids
	}
	want, _ := kvcache.NewIdeal(16, 20)
	for i, ids := range prompts {
		if i < 10 {
			want.Warm(kvcache.AppendHashes(nil, ids, 16), len(ids))
		} else {
			want.Add(ids)
		}
	}
	cfg := Config{Workload: Workload{Prefixes: Prefixes{KVCacheBlocks: 20}}}
	f := newIdealFeed(&cfg, gpt2(t))
	for _, seq := range rng.Perm(n) {
		ids := prompts[seq]
		f.add(uint64(seq), idealEntry{hashes: kvcache.AppendHashes(nil, ids, 16), n: len(ids), warm: seq < 10}, true)
	}
	got, ok := f.result()
	w := want.Result()
	if !ok || got.HitTokens != w.LRU.Tokens || got.PromptTokens != w.PromptTokens || got.Requests != w.Requests || got.Late != 0 {
		t.Errorf("fed out of order: %+v (ok %v); in order: %d requests, %d prompt tokens, %d hit", got, ok, w.Requests, w.PromptTokens, w.LRU.Tokens)
	}

	// Request 0 finishes after maxIdealPending+1 later ones: its place is given up.
	f = newIdealFeed(&cfg, gpt2(t))
	for seq := 1; seq <= maxIdealPending+1; seq++ {
		f.add(uint64(seq), idealEntry{hashes: []uint64{uint64(seq)}, n: 20}, true)
	}
	if len(f.pending) != 0 {
		t.Errorf("%d prompts still pending past the bound", len(f.pending))
	}
	f.add(0, idealEntry{hashes: []uint64{0}, n: 20}, true)
	if got, _ := f.result(); got.Late != 1 || got.Requests != maxIdealPending+2 {
		t.Errorf("late prompt: %+v; want Late 1 and every request counted", got)
	}
	// A prompt whose ids could not be rendered makes the rate unknown.
	f.add(f.take(), idealEntry{}, false)
	if _, ok := f.result(); ok {
		t.Errorf("a prompt of unknown ids left the rate known")
	}
}

// kv_cache_blocks is checked with the other prefix-cache settings.
func TestKVCacheBlocksValidate(t *testing.T) {
	cfg := Config{Target: Target{URLs: []string{"http://127.0.0.1:1"}}, Workload: Workload{ISL: fixed(50), OSL: fixed(5),
		Prefixes: Prefixes{KVCacheBlocks: -1}}, Stop: Stop{Requests: 1}}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "kv_cache_blocks") {
		t.Errorf("Validate with kv_cache_blocks -1 = %v, want an error naming kv_cache_blocks", err)
	}
}

// A cached_tokens of the wrong type is ignored for its request (unknown there, the
// record kept whole) and the run says so in one warning line; the others are read,
// streamed (the final usage chunk) and whole.
func TestCachedTokensWrongType(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cached := []string{`16`, `"16"`, `1.5`, `-3`, `null`, `{"x":1}`}[n.Add(1)%6]
		details := `{"cached_tokens":` + cached + `}`
		if cached == `{"x":1}` {
			details = `"not an object"`
		}
		usage := `{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41,"prompt_tokens_details":` + details + `}`
		if strings.Contains(readAll(r), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}`+"\n\n")
			fmt.Fprint(w, `data: {"choices":[],"usage":`+usage+`}`+"\n\n")
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":`+usage+`}`)
	}))
	t.Cleanup(srv.Close)
	for _, stream := range []bool{true, false} {
		n.Store(0)
		out, err := Run(context.Background(), Config{
			Target:   Target{URLs: []string{srv.URL + "/v1"}, API: EndpointChat, NoStream: !stream},
			Workload: Workload{ISL: fixed(20), OSL: fixed(1)},
			Load:     Load{Concurrency: 1},
			Stop:     Stop{Requests: 12},
		}, gpt2(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		known := 0
		for _, r := range out.Records {
			if !r.OK() {
				t.Fatalf("stream %v: record %d failed: %s %s", stream, r.Index, r.ErrorKind, r.Error)
			}
			if r.UsagePromptTokens != 40 {
				t.Errorf("stream %v: record %d: usage_prompt_tokens %d, want 40 (the rest of usage read)", stream, r.Index, r.UsagePromptTokens)
			}
			if r.CachedTokens.Known {
				known++
				if r.CachedTokens.N != 16 {
					t.Errorf("stream %v: record %d: cached %d, want 16", stream, r.Index, r.CachedTokens.N)
				}
			}
		}
		if len(out.Records) != 12 || known != 2 {
			t.Errorf("stream %v: %d records, %d with cached_tokens; want 12 and 2", stream, len(out.Records), known)
		}
		if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "8 answer(s)") || !strings.Contains(out.Warnings[0], "cached_tokens") {
			t.Errorf("stream %v: warnings %q; want one line counting the 8 answers with a bad cached_tokens", stream, out.Warnings)
		}
		if v, ok := out.Metrics.Scalars[record.MetricPrefixCacheHitRate]; !ok || v.Value != 16.0/40 {
			t.Errorf("stream %v: hit rate %v (%v), want 0.4 from the two answers that reported it", stream, v.Value, ok)
		}
	}
}

func readAll(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}
