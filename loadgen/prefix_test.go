package loadgen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen/dataset"
)

// promptOf is a completions body's prompt.
func promptOf(t *testing.T, body []byte) string {
	t.Helper()
	var b struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return b.Prompt
}

// Priming sends each pool prefix once, before any measured request, with the run's
// salt; the priming records come first, marked warm-up with "prime-K" ids, and stay
// out of the metrics. Every measured prompt starts with one primed prompt and has the
// requested ISL with the salt and prefixes counted.
func TestPrimePrefixes(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens = 1 })
	cfg := Config{
		Target: Target{URLs: []string{g.URL}, API: EndpointCompletions},
		Workload: Workload{ISL: fixed(200), PrefixTokens: 16, PromptSalt: "0123abcd",
			Prefixes: Prefixes{NumPrefixPrompts: 5, PromptPrefixLength: 50, PrefixPopularity: dataset.Popularity{Zipf: 1.1}, PrimePrefixes: true, PrimeConcurrency: 2}},
		Load: Load{Concurrency: 3},
		Stop: Stop{Requests: 20},
	}
	out, bodies := runOK(t, g, cfg)
	if len(out.Records) != 25 || out.Metrics.Warmup != 5 {
		t.Fatalf("%d records, %d warm-up; want 25 and the 5 primes", len(out.Records), out.Metrics.Warmup)
	}
	primes := map[string]bool{}
	for i, r := range out.Records[:5] {
		if !r.Warmup || !strings.HasPrefix(r.RequestID, "prime-") || r.Conversation != r.RequestID {
			t.Errorf("record %d: warmup %v, request %q, conversation %q; want a priming record", i, r.Warmup, r.RequestID, r.Conversation)
		}
		p := promptOf(t, bodies[r.RequestID])
		if !strings.HasPrefix(p, "[0123abcd]\n") {
			t.Errorf("%s: prompt %.30q does not start with the run's salt alone", r.RequestID, p)
		}
		if n := gpt2(t).Count(p, false); n != r.ISL || !r.ISLExact {
			t.Errorf("%s: ISL %d (exact %v), prompt of %d tokens", r.RequestID, r.ISL, r.ISLExact, n)
		}
		primes[p] = true
	}
	if len(primes) != 5 {
		t.Fatalf("%d distinct primed prompts; want 5", len(primes))
	}
	g.mu.Lock()
	lastPrime, firstRun := g.arrived["prime-0"], g.arrived["req-0"]
	for id, at := range g.arrived {
		if strings.HasPrefix(id, "prime-") && at.After(lastPrime) {
			lastPrime = at
		}
		if strings.HasPrefix(id, "req-") && at.Before(firstRun) {
			firstRun = at
		}
	}
	g.mu.Unlock()
	if !lastPrime.Before(firstRun) {
		t.Errorf("a priming request arrived at %v, after the first measured one at %v", lastPrime, firstRun)
	}
	used := map[string]int{}
	for _, r := range out.Records[5:] {
		if r.Warmup || !strings.HasPrefix(r.RequestID, "req-") {
			t.Errorf("measured record %s: warmup %v", r.RequestID, r.Warmup)
		}
		p := promptOf(t, bodies[r.RequestID])
		found := ""
		for q := range primes {
			if strings.HasPrefix(p, q) {
				found = q
			}
		}
		if found == "" {
			t.Errorf("%s: prompt starts with no primed prefix", r.RequestID)
		}
		used[found]++
		if n := gpt2(t).Count(p, false); n != r.ISL || n != r.RequestedISL {
			t.Errorf("%s: %d tokens, ISL %d, requested %d", r.RequestID, n, r.ISL, r.RequestedISL)
		}
	}
	if len(used) < 2 {
		t.Errorf("20 requests used %d prefixes of 5", len(used))
	}
}

// The prefix-cache settings are checked before anything is sent, each problem naming
// its setting.
func TestValidatePrefixes(t *testing.T) {
	base := func() Config {
		return Config{Target: Target{URLs: []string{"http://127.0.0.1:1"}}, Workload: Workload{ISL: fixed(100)}, Stop: Stop{Requests: 1}}
	}
	for name, c := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"pool without length":     {func(c *Config) { c.NumPrefixPrompts = 4 }, "num_prefix_prompts 4 needs prompt_prefix_length"},
		"pool size negative":      {func(c *Config) { c.NumPrefixPrompts = -1; c.PromptPrefixLength = 5 }, "num_prefix_prompts -1"},
		"prefix above ISL":        {func(c *Config) { c.PromptPrefixLength = 90; c.PrefixTokens = 20 }, "prefix length 110"},
		"prefix above ISL mean":   {func(c *Config) { c.ISL = distribution.MustSpec("normal:50,5"); c.UserContextPromptLength = 60 }, "above the ISL's mean 50"},
		"block size 0 is default": {func(c *Config) { c.KVBlockSize = -1 }, "kv_block_size"},
		"block size too big":      {func(c *Config) { c.KVBlockSize = 1025 }, "kv_block_size"},
		"zipf alpha":              {func(c *Config) { c.PromptPrefixLength = 5; c.PrefixPopularity = dataset.Popularity{Zipf: -1} }, "want α > 0"},
		"bucket weights":          {func(c *Config) { c.PrefixBuckets = dataset.PrefixBuckets{{Tokens: 5, Count: 2, Weight: 0}} }, "want a positive sum"},
		"buckets and pool": {func(c *Config) {
			c.PrefixBuckets = dataset.PrefixBuckets{{Tokens: 5, Count: 2, Weight: 1}}
			c.PromptPrefixLength = 5
		}, "give the pool one way"},
		"nothing to prime":      {func(c *Config) { c.PrimePrefixes = true }, "prime_prefixes: nothing to prime"},
		"prime concurrency":     {func(c *Config) { c.PrefixTokens = 5; c.PrimePrefixes = true; c.PrimeConcurrency = -2 }, "prime_concurrency -2"},
		"pool with input file":  {func(c *Config) { c.PromptPrefixLength = 5; c.InputFile, c.InputFormat = "x", FormatMooncake }, "needs synthetic prompts"},
		"pool with vllm corpus": {func(c *Config) { c.PromptPrefixLength = 5; c.Corpus = CorpusVLLM }, "corpus vllm has its own prefix"},
	} {
		cfg := base()
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v; want %q", name, err, c.want)
		}
	}
	ok := base()
	ok.Prefixes = Prefixes{NumPrefixPrompts: 10, PromptPrefixLength: 60, PrefixPopularity: dataset.Popularity{Zipf: 0.8}, KVBlockSize: 1024, PrimePrefixes: true}
	ok.PrefixTokens, ok.UserContextPromptLength = 20, 20
	if err := ok.Validate(); err != nil {
		t.Errorf("a valid pool: %v", err)
	}
	if ok.BlockSize() != 1024 || (&Prefixes{}).BlockSize() != 16 {
		t.Errorf("BlockSize = %d, zero's %d", ok.BlockSize(), (&Prefixes{}).BlockSize())
	}
}

// With prefixes shared by design, the cache-bust line is the run's salt alone, so the
// run's prompts share their prefixes; without, each request's index parts them.
func TestSaltLineSharedPrefixes(t *testing.T) {
	if a, b := saltLine(1, "s", true), saltLine(2, "s", true); a != b || a != "[s]\n" {
		t.Errorf("shared: %q, %q", a, b)
	}
	if a, b := saltLine(1, "s", false), saltLine(2, "s", false); a == b {
		t.Errorf("not shared: %q twice", a)
	}
}
