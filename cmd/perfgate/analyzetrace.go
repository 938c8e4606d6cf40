package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/perfgate/perfgate/internal/kvcache"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/loadgen/dataset"
)

// defaultCapacityPercent is the share of the unbounded cache's hits the smallest
// capacity analyze-trace reports must reach.
const defaultCapacityPercent = 90

// traceReadable says what analyze-trace reads, for its errors.
const traceReadable = "analyze-trace reads a mooncake trace (JSONL lines with input_length and hash_ids); " +
	"a run's artifact directory holds no prompt token ids (client.jsonl and server.jsonl keep lengths, not prompts), so it cannot be analysed"

// traceAnalysis is analyze-trace's result, as --json writes it.
type traceAnalysis struct {
	File         string `json:"file"`
	BlockSize    int    `json:"block_size"`    // tokens per hash id
	KVBlockSize  int    `json:"kv_block_size"` // tokens per KV-cache block the rates count
	Requests     int64  `json:"requests"`
	PromptTokens int64  `json:"prompt_tokens"`
	// LookableBlocks is the KV blocks a lookup could hit (those before each prompt's
	// last token), the most any cache serves.
	LookableBlocks int64      `json:"lookable_blocks"`
	Unbounded      cacheHits  `json:"unbounded"`
	LRU            *cacheHits `json:"lru,omitempty"` // with --kv-cache-blocks
	Reuse          struct {
		RequestsSharingFirstBlock int64 `json:"requests_sharing_first_block"`
		Blocks                    int64 `json:"blocks"`
		DistinctBlocks            int64 `json:"distinct_blocks"`
		ReusedBlocks              int64 `json:"reused_blocks"`
	} `json:"reuse"`
	Smallest struct {
		Percent         int   `json:"percent"`
		TargetHitBlocks int64 `json:"target_hit_blocks"`
		cacheHits
		Probes int `json:"probes"`
	} `json:"smallest_capacity"`
}

// cacheHits is what one cache serves.
type cacheHits struct {
	CapacityBlocks int     `json:"capacity_blocks"` // 0 = unbounded
	HitBlocks      int64   `json:"hit_blocks"`
	HitTokens      int64   `json:"hit_tokens"`
	HitRate        float64 `json:"hit_rate"`
}

func newCacheHits(capacity int, h kvcache.Hits) cacheHits {
	return cacheHits{CapacityBlocks: capacity, HitBlocks: h.Blocks, HitTokens: h.Tokens, HitRate: h.Rate}
}

// cmdAnalyzeTrace prints a mooncake trace's ideal prefix-cache hit rate (unbounded
// and, with --kv-cache-blocks, an LRU of that many blocks), how its requests share
// blocks, and the smallest LRU capacity that reaches 90% of the unbounded rate.
func cmdAnalyzeTrace(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "analyze-trace", "[--block-size N] [--kv-block-size B] [--kv-cache-blocks C] [--json] FILE")
	blockSize := fs.Int("block-size", loadgen.DefaultBlockTokens, "tokens per hash id of the trace (AIPerf's analyze-trace --block-size, profile's --isl-block-size); 1 to 1024")
	kvBlock := fs.Int("kv-block-size", 0, "tokens per KV-cache block the hit rates are counted in, as a server's block size (profile's --kv-block-size); 0 = --block-size, AIPerf's count")
	capacity := fs.Int("kv-cache-blocks", 0, "also count an LRU cache of this many KV blocks (0 = only the unbounded cache)")
	percent := fs.Int("capacity-percent", defaultCapacityPercent, "the smallest capacity reported reaches this percentage of the unbounded cache's hits; 1 to 100")
	asJSON := fs.Bool("json", false, "write the analysis as one JSON object")
	inputFile := fs.String("input-file", "", "the trace (AIPerf's flag); or give it as the argument")
	files, flags := splitPositional(fs, args) // flags may follow FILE
	if err := parseFlags(fs, flags); err != nil {
		return err
	}
	if *inputFile != "" {
		files = append(files, *inputFile)
	}
	if len(files) != 1 {
		return invalidf("want one trace FILE, got %d (%s)", len(files), traceReadable)
	}
	if kvcache.CheckBlockSize(*blockSize) != nil {
		return invalidf("--block-size %d: want 1 to %d tokens per hash id", *blockSize, kvcache.MaxBlockSize)
	}
	if *kvBlock == 0 {
		*kvBlock = *blockSize
	}
	if kvcache.CheckBlockSize(*kvBlock) != nil {
		return invalidf("--kv-block-size %d: want 1 to %d tokens (0 = --block-size)", *kvBlock, kvcache.MaxBlockSize)
	}
	if kvcache.CheckCapacity(*capacity) != nil {
		return invalidf("--kv-cache-blocks %d: want 0 (none) or more blocks", *capacity)
	}
	if *percent < 1 || *percent > 100 {
		return invalidf("--capacity-percent %d: want 1 to 100", *percent)
	}
	a, err := analyzeTrace(files[0], *blockSize, *kvBlock, *capacity, *percent)
	if err != nil {
		return err
	}
	if *asJSON {
		b, _ := json.MarshalIndent(a, "", "  ")
		_, err = e.stdout.Write(append(b, '\n'))
	} else {
		_, err = fmt.Fprint(e.stdout, a.text())
	}
	if err != nil {
		return runtimef("%v", err)
	}
	return nil
}

// analyzeTrace reads the mooncake trace file, feeds each row's prompt ids
// ([dataset.AppendMooncakeIDs]) in the trace's order to a [kvcache.Trace], and
// searches for the smallest capacity that reaches percent of the unbounded hits.
func analyzeTrace(file string, blockSize, kvBlock, capacity, percent int) (*traceAnalysis, error) {
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		return nil, invalidf("%s is a directory: %s", file, traceReadable)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, invalidf("%v (%s)", err, traceReadable)
	}
	defer f.Close()
	tr, err := kvcache.NewTrace(kvBlock, capacity)
	if err != nil {
		return nil, invalid(err) // checked by the caller
	}
	var ids []int
	index := 0
	err = dataset.EachMooncakeRow(f, func(_ int, row dataset.MooncakeRow) error {
		ids = dataset.AppendMooncakeIDs(ids[:0], row, blockSize, index)
		index++
		return tr.Add(ids)
	})
	var le *dataset.LineError
	switch {
	case errors.As(err, &le) && errors.Is(err, kvcache.ErrTraceSize):
		return nil, runtimef("%s:%d: %v", file, le.Line, le.Err)
	case errors.As(err, &le):
		return nil, invalidf("%s:%d: %v (%s)", file, le.Line, le.Err, traceReadable)
	case err != nil:
		return nil, runtimef("reading %s: %v", file, err)
	case index == 0:
		return nil, invalidf("%s: no rows (%s)", file, traceReadable)
	}
	ideal, reuse := tr.Ideal(), tr.Reuse()
	a := &traceAnalysis{File: file, BlockSize: blockSize, KVBlockSize: kvBlock, Requests: ideal.Requests,
		PromptTokens: ideal.PromptTokens, LookableBlocks: ideal.Blocks, Unbounded: newCacheHits(0, ideal.Infinite)}
	if capacity > 0 {
		lru := newCacheHits(capacity, ideal.LRU)
		a.LRU = &lru
	}
	a.Reuse.RequestsSharingFirstBlock, a.Reuse.Blocks = reuse.SharedFirst, reuse.Blocks
	a.Reuse.DistinctBlocks, a.Reuse.ReusedBlocks = reuse.DistinctBlocks, reuse.ReusedBlocks
	s := tr.SmallestCapacity(percent)
	a.Smallest.Percent, a.Smallest.TargetHitBlocks, a.Smallest.Probes = s.Percent, s.Target, s.Probes
	a.Smallest.cacheHits = newCacheHits(s.Capacity, s.Hits)
	return a, nil
}

// text is the analysis for a reader.
func (a *traceAnalysis) text() string {
	s := fmt.Sprintf("trace %s: %d requests, %d prompt tokens; hash ids of %d tokens, KV blocks of %d tokens (%d lookable)\n",
		a.File, a.Requests, a.PromptTokens, a.BlockSize, a.KVBlockSize, a.LookableBlocks)
	s += fmt.Sprintf("ideal hit rate:   %.4f unbounded (%d hit blocks)", a.Unbounded.HitRate, a.Unbounded.HitBlocks)
	if a.LRU != nil {
		s += fmt.Sprintf("; %.4f in an LRU of %d blocks (%d hit blocks)", a.LRU.HitRate, a.LRU.CapacityBlocks, a.LRU.HitBlocks)
	}
	s += fmt.Sprintf("\nprefix reuse:     %d of %d requests share their first block with another; %d distinct blocks of %d, %d of them held by 2+ requests\n",
		a.Reuse.RequestsSharingFirstBlock, a.Requests, a.Reuse.DistinctBlocks, a.Reuse.Blocks, a.Reuse.ReusedBlocks)
	if a.Smallest.TargetHitBlocks == 0 {
		return s + "smallest capacity: none needed (no block can hit)\n"
	}
	return s + fmt.Sprintf("smallest capacity: %d blocks reach %d%% of the unbounded hits (%d of %d hit blocks, rate %.4f; %d replays)\n",
		a.Smallest.CapacityBlocks, a.Smallest.Percent, a.Smallest.HitBlocks, a.Unbounded.HitBlocks, a.Smallest.HitRate, a.Smallest.Probes)
}
