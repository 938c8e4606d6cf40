package record

import "time"

// PrefixCacheIdeal is the ideal prefix-cache hit rate of a run's prompts
// (docs/prefix-cache.md), as loadgen counts it and metrics.json keeps it under
// "prefix_cache": what a cache of loadgen's Prefixes.KVCacheBlocks blocks of
// Prefixes.KVBlockSize tokens (unbounded without a capacity) would have served of the
// prompt token ids the run sent, in send order, counting the measured requests only
// (warm-up and priming requests are cached, as a server caches them, but not counted).
type PrefixCacheIdeal struct {
	BlockSize int `json:"block_size"` // tokens per block
	Capacity  int `json:"capacity"`   // blocks (0 = unbounded)
	// Requests and PromptTokens are the measured requests and their prompt tokens
	// (what the server tokenizes: the chat template's rendering for chat);
	// HitTokens the tokens the ideal cache served; Rate = HitTokens / PromptTokens.
	Requests     int64   `json:"requests"`
	PromptTokens int64   `json:"prompt_tokens"`
	HitTokens    int64   `json:"hit_tokens"`
	Rate         float64 `json:"rate"`
	// UnboundedHitTokens is what an unbounded cache served of the same prompts
	// (HitTokens when Capacity is 0): AIPerf's theoretical prefix-cache hit rate is
	// UnboundedHitTokens / PromptTokens.
	UnboundedHitTokens int64 `json:"unbounded_hit_tokens"`
	// Late counts prompts fed after later ones: they finished more than
	// 4,096 requests after their send, so their place in the order was given up.
	Late int `json:"late,omitempty"`
	// Slices are the same counts by send time: slice k holds the measured requests
	// sent in [k·SliceWidth, (k+1)·SliceWidth) of the run clock. SliceWidth is
	// loadgen.IdealSliceWidth (100 ms), doubled as often as needed to keep at most
	// 4,096 slices, so the memory does not grow with the run.
	SliceWidth time.Duration      `json:"slice_width_ns,omitempty"`
	Slices     []PrefixCacheCount `json:"slices,omitempty"`
	// ByPrefix[p-1] are the counts of the measured requests whose prompt started with
	// the prefix pool's prefix p ([Client.Prefix]); empty without a pool.
	ByPrefix []PrefixCacheCount `json:"by_prefix,omitempty"`
}

// PrefixCacheCount is the prompt tokens of some requests and the tokens the ideal
// cache served of them.
type PrefixCacheCount struct {
	PromptTokens int64 `json:"prompt_tokens"`
	HitTokens    int64 `json:"hit_tokens"`
}
