// Package kvcache models an inference server's prefix (KV) cache: blocks of token ids
// named by chained hashes, in a cache of a fixed number of blocks with LRU eviction.
// The mock server serves its prefix cache with it, and the load generator feeds it
// the prompts it sent to compute the hit rate an ideal server would reach.
//
//	c, _ := kvcache.New(16, 4096)   // 16-token blocks, 4,096 blocks (0 = unbounded)
//	cached := c.Access(ids)         // tokens served from the cache: cached_tokens
//	ideal, _ := kvcache.NewIdeal(16, 4096)
//	ideal.Add(ids)                  // every prompt, in send order
//	r := ideal.Result()             // r.Infinite.Rate, r.LRU.Rate
//
// # The model
//
// A prompt of n token ids has n/B full blocks of B ids (B the block size); a partial
// last block is never cached. Block i's hash is computed from block i−1's hash and
// block i's ids, so two prompts share a block hash only if they share every id up to
// the end of that block, as vLLM's chained block hashes do. The hash is a stand-in for
// vLLM's: it agrees with vLLM's in which blocks match, not in the values. It is
// [BlockHash]: per token id, xxHash64's step for an 8-byte lane; per block, xxHash64's
// final avalanche; started from the parent block's hash, or from [RootHash] for the
// first block. It is not xxHash64 of any byte string. Two different prefixes collide
// with probability about 2⁻⁶⁴ per pair: at ten million distinct blocks, about 3·10⁻⁶
// that any pair does.
//
// A prompt's lookup counts its leading blocks found in the cache, as vLLM v1 does,
// and stops at the first miss. As in vLLM, the prompt's last token is always computed,
// so only the blocks that end before the last token can hit: a prompt of exactly k
// full blocks that is wholly cached reports (k−1)·B cached tokens. The cached tokens
// are what a server reports as usage.prompt_tokens_details.cached_tokens, and what
// vllm:prefix_cache_hits_total adds up (its queries being the prompt tokens).
//
// After the lookup every full block of the prompt is made most recently used, the last
// block first and the first block last: vLLM frees a finished request's blocks to its
// free-block queue in reverse order, so a chain is evicted from its tail, never from
// its head (a cached tail without its head could never hit again). When the cache is
// full, the least recently used block is evicted. A prompt longer than the capacity
// leaves its first C blocks cached. The model is sequential: requests are looked up
// and inserted in the order given, one at a time. A real server also pins the blocks
// of requests in flight and frees them only when they finish; under heavy concurrency
// with eviction it may differ from this model, which is the ideal the server is
// measured against.
//
// # Memory
//
// A bounded cache holds at most its capacity in blocks, about 40 bytes each (a map
// entry and a list node); an unbounded one holds one set entry (about 16 bytes) per
// distinct block. Neither grows with the number of requests beyond the distinct blocks
// they bring. BenchmarkIdeal prints bytes and nanoseconds per block.
//
// It imports only the standard library. [Cache] is safe for concurrent use; [LRU] and
// [Ideal] are not.
package kvcache
