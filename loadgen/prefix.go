package loadgen

import (
	"math"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/kvcache"
	"github.com/perfgate/perfgate/loadgen/dataset"
)

// DefaultPrimeConcurrency is how many priming requests are in flight at once when
// Prefixes.PrimeConcurrency is 0.
const DefaultPrimeConcurrency = 8

// MaxPrefixPool bounds the distinct prefixes of a pool (each is held in memory once
// made).
const MaxPrefixPool = 1_000_000

// Prefixes is a prefix-cache workload: the shared parts synthetic prompts start with,
// and a priming phase that sends each of them once before the run (docs/prefix-cache.md).
// A prompt is, in order: the cache-bust salt (Workload.PromptSalt, when set), the
// shared system prompt (Workload.PrefixTokens), one prefix of the pool, the
// conversation's user context (first turn only), then text of its own; its ISL counts
// all of them, and is exact. The zero value is none of it.
type Prefixes struct {
	// NumPrefixPrompts is the size of a pool of distinct prefixes of PromptPrefixLength
	// tokens each (AIPerf's --num-prefix-prompts, --prompt-prefix-pool-size); every
	// conversation starts with one, chosen by PrefixPopularity. Zero with
	// PromptPrefixLength set = a pool of 1.
	NumPrefixPrompts   int `json:"num_prefix_prompts,omitempty"`
	PromptPrefixLength int `json:"prompt_prefix_length,omitempty"`
	// PrefixBuckets, instead of NumPrefixPrompts and PromptPrefixLength, is a pool in
	// buckets of different prefix lengths, each bucket chosen by its weight
	// (guidellm's prefix_buckets).
	PrefixBuckets dataset.PrefixBuckets `json:"prefix_buckets,omitempty"`
	// PrefixPopularity is how a prefix is chosen within the pool (or a bucket):
	// uniformly (zero), or "zipf:α", rank r with probability r^-α/Σk^-α.
	PrefixPopularity dataset.Popularity `json:"prefix_popularity,omitzero"`
	// UserContextPromptLength is the length of a text unique to each conversation,
	// after the pool's prefix in its first turn (later turns carry it in their
	// history; AIPerf's --user-context-prompt-length). 0 = none.
	UserContextPromptLength int `json:"user_context_prompt_length,omitempty"`
	// KVBlockSize is the server's KV-cache block size in tokens, which the ideal
	// prefix-cache hit rate is counted in; zero = kvcache.DefaultBlockSize (16, vLLM's).
	KVBlockSize int `json:"kv_block_size,omitempty"`
	// KVCacheBlocks is the server's prefix-cache capacity in blocks, for the ideal hit
	// rate: an LRU cache of that many blocks (vLLM's num_gpu_blocks); zero = unbounded.
	KVCacheBlocks int `json:"kv_cache_blocks,omitempty"`
	// PrimePrefixes sends each prefix of the pool (the shared system prompt included),
	// or the shared system prompt alone when there is no pool, once before the run,
	// PrimeConcurrency at a time (zero = DefaultPrimeConcurrency), asking for one
	// output token. The priming requests are recorded first, as warm-up requests
	// (warmup: true, left out of every metric) whose conversation ids are "prime-K"
	// and request ids "prime-K"; their times are relative to the priming phase's own
	// start (record.Client.RunStartUnixNano).
	PrimePrefixes    bool `json:"prime_prefixes,omitempty"`
	PrimeConcurrency int  `json:"prime_concurrency,omitempty"`
}

// Buckets returns the pool as buckets: PrefixBuckets, or one bucket of
// NumPrefixPrompts (at least 1) prefixes of PromptPrefixLength tokens; nil for none.
func (p *Prefixes) Buckets() dataset.PrefixBuckets {
	switch {
	case len(p.PrefixBuckets) > 0:
		return p.PrefixBuckets
	case p.PromptPrefixLength > 0:
		return dataset.PrefixBuckets{{Tokens: p.PromptPrefixLength, Count: max(p.NumPrefixPrompts, 1), Weight: 1}}
	}
	return nil
}

// BlockSize is the KV-cache block size: KVBlockSize, or kvcache.DefaultBlockSize.
func (p *Prefixes) BlockSize() int {
	if p.KVBlockSize == 0 {
		return kvcache.DefaultBlockSize
	}
	return p.KVBlockSize
}

// sharesPrefixes reports whether prompts share prefixes by design: a shared system
// prompt, a pool or user contexts. The cache-bust salt is then the run's alone (see
// saltLine).
func (w *Workload) sharesPrefixes() bool {
	return w.PrefixTokens > 0 || len(w.Buckets()) > 0 || w.UserContextPromptLength > 0
}

// primeConcurrency is PrimeConcurrency or its default.
func (p *Prefixes) primeConcurrency() int {
	if p.PrimeConcurrency == 0 {
		return DefaultPrimeConcurrency
	}
	return p.PrimeConcurrency
}

// checkPrefixes checks the prefix-cache workload: each setting, and that the
// prefixes fit in the input length.
func (c *Config) checkPrefixes(p *problems) {
	x := &c.Prefixes
	switch {
	case x.NumPrefixPrompts < 0 || x.NumPrefixPrompts > MaxPrefixPool:
		p.add("num_prefix_prompts %d: want 1 to %d", x.NumPrefixPrompts, MaxPrefixPool)
	case x.NumPrefixPrompts > 0 && x.PromptPrefixLength == 0:
		p.add("num_prefix_prompts %d needs prompt_prefix_length, the tokens of each prefix", x.NumPrefixPrompts)
	}
	if x.PromptPrefixLength < 0 {
		p.add("prompt_prefix_length %d < 0", x.PromptPrefixLength)
	}
	if len(x.PrefixBuckets) > 0 {
		if x.NumPrefixPrompts > 0 || x.PromptPrefixLength > 0 {
			p.add("prefix_buckets and num_prefix_prompts/prompt_prefix_length both set: give the pool one way")
		}
		if err := x.PrefixBuckets.Err(); err != nil {
			p.add("%v", err)
		} else if n := x.PrefixBuckets.Size(); n > MaxPrefixPool {
			p.add("prefix_buckets: %d prefixes; want at most %d", n, MaxPrefixPool)
		}
	}
	if err := x.PrefixPopularity.Err(); err != nil {
		p.add("%v", err)
	}
	if x.UserContextPromptLength < 0 {
		p.add("user_context_prompt_length %d < 0", x.UserContextPromptLength)
	}
	if x.KVBlockSize != 0 {
		if err := kvcache.CheckBlockSize(x.KVBlockSize); err != nil {
			p.add("kv_block_size: %v", err)
		}
	}
	if err := kvcache.CheckCapacity(x.KVCacheBlocks); err != nil {
		p.add("kv_cache_blocks: %v", err)
	}
	if x.PrimeConcurrency < 0 || x.PrimeConcurrency > MaxConcurrency {
		p.add("prime_concurrency %d: want 1 to %d", x.PrimeConcurrency, MaxConcurrency)
	}
	pooled := len(x.Buckets()) > 0 || x.UserContextPromptLength > 0
	if pooled || x.PrimePrefixes {
		switch {
		case c.InputFile != "":
			p.add("a prefix pool, user context or priming needs synthetic prompts, not input_file")
		case c.Corpus == CorpusVLLM && x.PrimePrefixes:
			p.add("prime_prefixes: corpus vllm's prefix is vLLM's own; priming needs corpus %s or %s", CorpusShakespeare, CorpusRandom)
		case c.Corpus == CorpusVLLM && pooled:
			p.add("corpus vllm has its own prefix (prefix_tokens); a prefix pool or user context needs corpus %s or %s", CorpusShakespeare, CorpusRandom)
		}
	}
	if x.PrimePrefixes && !c.sharesPrefixes() {
		p.add("prime_prefixes: nothing to prime; set a prefix pool (num_prefix_prompts, prompt_prefix_length or prefix_buckets) or a shared system prompt (prefix_tokens)")
	}
	// The prefixes must fit in the input: a fixed ISL at least their length, any
	// other distribution a mean at least their length.
	total := c.PrefixTokens + x.Buckets().MaxTokens() + x.UserContextPromptLength
	if total > 0 && c.InputFile == "" {
		isl := c.InputLength()
		if m, ok := isl.Distribution.(interface{ Mean() float64 }); ok {
			if mean := m.Mean(); !math.IsNaN(mean) && float64(total) > mean {
				what := "mean"
				if _, fixed := isl.Distribution.(distribution.Fixed); fixed {
					what = "length"
				}
				p.add("prefix length %d (prefix_tokens %d + the longest pool prefix %d + user_context_prompt_length %d) above the ISL's %s %g: the prompts would be all prefix",
					total, c.PrefixTokens, x.Buckets().MaxTokens(), x.UserContextPromptLength, what, mean)
			}
		}
	}
}
