package main

import (
	"errors"
	"flag"
	"strings"

	"github.com/perfgate/perfgate/internal/kvcache"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// prefixFlags are the prefix-cache workload's flags (docs/prefix-cache.md).
type prefixFlags struct {
	pool, length, userContext, blockSize, primeConcurrency int
	cacheBlocks                                            int
	popularity, buckets                                    string
	prime, reset                                           bool
}

// registerPrefixFlags registers the prefix-cache workload's flags, with AIPerf's names
// where AIPerf has the setting.
func registerPrefixFlags(fs *flag.FlagSet, p *prefixFlags) {
	for _, n := range []string{"num-prefix-prompts", "prompt-prefix-pool-size"} {
		fs.IntVar(&p.pool, n, 0, "[workload] a pool of N distinct prompt prefixes of --prompt-prefix-length tokens; each conversation starts with one")
	}
	for _, n := range []string{"prompt-prefix-length", "prefix-prompt-length"} {
		fs.IntVar(&p.length, n, 0, "[workload] tokens of each pool prefix (a pool of 1 without --num-prefix-prompts), counted in ISL")
	}
	fs.StringVar(&p.popularity, "prefix-popularity", "", "[workload] how a pool prefix is chosen: uniform (default) or zipf:α (rank r with probability r^-α/Σk^-α)")
	fs.StringVar(&p.buckets, "prefix-buckets", "", "[workload] a pool in buckets: TOKENSxCOUNT[:WEIGHT],… (2000x100:0.7,500x10:0.3) or guidellm's JSON list of {prefix_tokens, prefix_count, bucket_weight}")
	fs.IntVar(&p.userContext, "user-context-prompt-length", 0, "[workload] tokens of a context unique to each conversation, after its prefix (counted in ISL)")
	fs.IntVar(&p.blockSize, "kv-block-size", 0, "[workload] the server's KV-cache block size in tokens, for the ideal prefix-cache hit rate (default 16, vLLM's)")
	fs.IntVar(&p.cacheBlocks, "kv-cache-blocks", 0, "[workload] the server's prefix-cache capacity in blocks, for the ideal prefix-cache hit rate (an LRU of that many blocks; default unbounded)")
	fs.BoolVar(&p.prime, "prime-prefixes", false, "[workload] send each pool prefix (and the shared system prompt) once before the run, as warm-up")
	fs.IntVar(&p.primeConcurrency, "prime-concurrency", 0, "[workload] priming requests in flight at once (default 8)")
	fs.BoolVar(&p.reset, "reset-kv-cache", false, "[target] POST the server's /reset_prefix_cache before the run (and its priming)")
}

// applyPrefixFlags maps the prefix-cache flags onto the scenario; a bad value is
// invalid configuration naming its flag.
func applyPrefixFlags(sc *scenario.Scenario, p *prefixFlags, has func(...string) bool) error {
	var errs []error
	if has("num-prefix-prompts", "prompt-prefix-pool-size") {
		if p.pool < 1 {
			errs = append(errs, invalidf("--num-prefix-prompts %d: want a pool of at least 1 prefix", p.pool))
		}
		sc.NumPrefixPrompts = p.pool
	}
	if has("prompt-prefix-length", "prefix-prompt-length") {
		if p.length < 1 {
			errs = append(errs, invalidf("--prompt-prefix-length %d: want at least 1 token", p.length))
		}
		sc.PromptPrefixLength = p.length
	}
	if has("prefix-popularity") {
		pop, err := dataset.ParsePopularity(p.popularity)
		if err != nil {
			errs = append(errs, invalidf("--prefix-popularity: %v", err))
		}
		sc.PrefixPopularity = pop
	}
	if has("prefix-buckets") {
		bs, err := dataset.ParsePrefixBuckets(p.buckets)
		if err != nil {
			errs = append(errs, invalidf("--prefix-buckets: %s", strings.ReplaceAll(err.Error(), "\n", "; ")))
		}
		sc.PrefixBuckets = bs
	}
	if has("user-context-prompt-length") {
		if p.userContext < 0 {
			errs = append(errs, invalidf("--user-context-prompt-length %d: want 0 or more tokens", p.userContext))
		}
		sc.UserContextPromptLength = p.userContext
	}
	if has("kv-block-size") {
		if err := kvcache.CheckBlockSize(p.blockSize); err != nil {
			errs = append(errs, invalidf("--kv-block-size: %v", err))
		}
		sc.KVBlockSize = p.blockSize
	}
	if has("kv-cache-blocks") {
		if err := kvcache.CheckCapacity(p.cacheBlocks); err != nil {
			errs = append(errs, invalidf("--kv-cache-blocks: %v", err))
		}
		sc.KVCacheBlocks = p.cacheBlocks
	}
	if has("prime-concurrency") {
		if p.primeConcurrency < 1 {
			errs = append(errs, invalidf("--prime-concurrency %d: want at least 1", p.primeConcurrency))
		}
		sc.PrimeConcurrency = p.primeConcurrency
	}
	if p.prime {
		sc.PrimePrefixes = true
	}
	if p.reset {
		sc.Validity.ResetKVCache = true
	}
	return errors.Join(errs...)
}
