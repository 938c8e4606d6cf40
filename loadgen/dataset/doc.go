// Package dataset builds the workloads loadgen sends, synthetic or read from files.
// Synthetic prompts have exactly the sampled input length in tokens (natural text cut
// from an embedded public-domain Shakespeare corpus, or random token ids); vLLM's
// RandomDataset is reproduced step by step with numpy's default_rng; the files are
// custom JSONL payloads, mooncake traces (hash_ids → shared prefix blocks), ShareGPT
// conversations and mock-server recordings.
//
// Every workload is a [Source] of [Conversation]s; a conversation has one or more
// [Turn]s. Sources are deterministic for a given seed and are not safe for concurrent
// use (loadgen draws from one goroutine).
//
// Exactness: a synthetic prompt's length is checked by re-encoding the final text
// with the same tokenizer (without special tokens, as vLLM does). When no text of
// exactly the sampled length can be found, the turn says so (Exact = false) and
// records the length it did reach; loadgen reports those requests.
package dataset
