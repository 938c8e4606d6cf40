package loadgen

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/internal/kvcache"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// maxIdealPending bounds the prompts the ideal hit rate's feed holds while it waits for
// an earlier one to finish (see idealFeed).
const maxIdealPending = 4096

// The ideal rate's time slices (PrefixCacheIdeal.Slices): IdealSliceWidth wide at
// first, doubled whenever a run needs more than maxIdealSlices of them.
const (
	IdealSliceWidth = 100 * time.Millisecond
	maxIdealSlices  = 4096
)

// PrefixCacheIdeal is the ideal prefix-cache hit rate of a run's prompts
// (record.PrefixCacheIdeal; docs/prefix-cache.md).
type PrefixCacheIdeal = record.PrefixCacheIdeal

// PrefixCacheCount is prompt and ideal hit tokens (record.PrefixCacheCount).
type PrefixCacheCount = record.PrefixCacheCount

// idealFeed counts a run's ideal prefix-cache hit rate (kvcache.Ideal) from each
// request's prompt token ids in send order. A request takes its place in the order
// (seq) when it is prepared for its send, and its ids are rendered and hashed after
// it finished (so rendering never delays a send); finished prompts wait, as hashes, for
// the earlier ones still in flight, at most maxIdealPending of them: memory is bounded
// by the cache and the requests in flight, never by the run's length. Safe for
// concurrent use.
type idealFeed struct {
	tok     *tokenizer.Tokenizer
	seq     atomic.Uint64
	mu      sync.Mutex
	ideal   *kvcache.Ideal
	next    uint64                // the next seq to feed
	pending map[uint64]idealEntry // finished ahead of next
	late    int
	unknown int // prompts whose ids could not be rendered: the rate is unknown
	// The measured requests' counts by send time (width, slices) and by pool prefix.
	width    time.Duration
	slices   []PrefixCacheCount
	byPrefix []PrefixCacheCount
}

// idealEntry is one finished prompt waiting for its turn.
type idealEntry struct {
	hashes []uint64
	n      int
	warm   bool          // cache it, do not count it
	skip   bool          // never reached the server
	at     time.Duration // its send, on the run clock
	prefix int           // its pool prefix (record.Client.Prefix)
}

// newIdealFeed returns the feed of a run with cfg, or nil when the run does not count
// the ideal rate: its prompts share no prefix by design (no shared system prompt, pool
// or user context), it has one turn a conversation, and no cache capacity is given.
func newIdealFeed(cfg *Config, tok *tokenizer.Tokenizer) *idealFeed {
	multiTurn := cfg.Turns.Distribution != nil && cfg.Turns.String() != "fixed:1" || cfg.InputFormat == FormatAgentTrace
	if tok == nil || !cfg.sharesPrefixes() && !multiTurn && cfg.KVCacheBlocks == 0 {
		return nil
	}
	ideal, err := kvcache.NewIdeal(cfg.BlockSize(), cfg.KVCacheBlocks)
	if err != nil {
		return nil // Validate has refused such a configuration
	}
	return &idealFeed{tok: tok, ideal: ideal, pending: map[uint64]idealEntry{}, width: IdealSliceWidth}
}

// take returns the next place in the send order.
func (f *idealFeed) take() uint64 { return f.seq.Add(1) - 1 }

// add feeds the prompt that took place seq: ids nil with ok false when they could not
// be rendered.
func (f *idealFeed) add(seq uint64, e idealEntry, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !ok && !e.skip {
		f.unknown++
		e.skip = true
	}
	switch {
	case seq < f.next: // its place was given up
		f.late++
		f.feed(e)
		return
	case seq > f.next:
		f.pending[seq] = e
		if len(f.pending) > maxIdealPending {
			f.next = minKey(f.pending) // the ones before it are late
		}
	default:
		f.feed(e)
		f.next++
	}
	for {
		p, ok := f.pending[f.next]
		if !ok {
			return
		}
		delete(f.pending, f.next)
		f.feed(p)
		f.next++
	}
}

func minKey(m map[uint64]idealEntry) uint64 {
	first := true
	var k uint64
	for s := range m {
		if first || s < k {
			k, first = s, false
		}
	}
	return k
}

// feed gives one prompt to the ideal cache.
func (f *idealFeed) feed(e idealEntry) {
	switch {
	case e.skip:
	case e.warm:
		f.ideal.Warm(e.hashes, e.n)
	default:
		before := f.ideal.Result().LRU.Blocks
		f.ideal.AddHashes(e.hashes, e.n)
		f.count(e, (f.ideal.Result().LRU.Blocks-before)*int64(f.ideal.BlockSize()))
	}
}

// count adds a measured prompt of e and its hit tokens to the slices and the
// prefixes' counts.
func (f *idealFeed) count(e idealEntry, hit int64) {
	at := max(e.at, 0)
	for at/f.width >= maxIdealSlices { // coarser slices: merge pairs
		for i := range (len(f.slices) + 1) / 2 {
			m := f.slices[2*i]
			if 2*i+1 < len(f.slices) {
				m.PromptTokens += f.slices[2*i+1].PromptTokens
				m.HitTokens += f.slices[2*i+1].HitTokens
			}
			f.slices[i] = m
		}
		f.slices = f.slices[:(len(f.slices)+1)/2]
		f.width *= 2
	}
	add := func(cs []PrefixCacheCount, i int) []PrefixCacheCount {
		if i >= len(cs) {
			cs = append(cs, make([]PrefixCacheCount, i+1-len(cs))...)
		}
		cs[i].PromptTokens += int64(e.n)
		cs[i].HitTokens += hit
		return cs
	}
	f.slices = add(f.slices, int(at/f.width))
	if e.prefix > 0 {
		f.byPrefix = add(f.byPrefix, e.prefix-1)
	}
}

// result is the ideal rate counted, and false when it is unknown (a prompt's ids could
// not be rendered). Call it once every request finished.
func (f *idealFeed) result() (PrefixCacheIdeal, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.pending) > 0 { // requests that never finished leave gaps
		f.next = minKey(f.pending)
		p := f.pending[f.next]
		delete(f.pending, f.next)
		f.feed(p)
	}
	r := f.ideal.Result()
	return PrefixCacheIdeal{BlockSize: r.BlockSize, Capacity: r.Capacity, Requests: r.Requests, PromptTokens: r.PromptTokens,
		HitTokens: r.LRU.Tokens, Rate: r.LRU.Rate, UnboundedHitTokens: r.Infinite.Tokens, Late: f.late,
		SliceWidth: f.width, Slices: slices.Clone(f.slices), ByPrefix: slices.Clone(f.byPrefix)}, f.unknown == 0
}

// addRequest feeds the finished request q (record rec) to the run's ideal hit rate:
// its prompt's token ids as the server tokenizes them (c's tokenizer), hashed here,
// outside the lock. A priming run's requests are warm-up. f may be nil (not counted).
func (f *idealFeed) addRequest(q *turnReq, rec *record.Client, priming bool, c *counter) {
	if f == nil || !q.api.generates() {
		return
	}
	e := idealEntry{warm: rec.Warmup || priming, skip: rec.ErrorKind == record.ErrConnect, at: rec.Sent, prefix: rec.Prefix}
	ok := true
	if !e.skip {
		var ids []int
		ids, ok = c.promptIDs(q.api, q.t, q.tc)
		e.n, e.hashes = len(ids), kvcache.AppendHashes(nil, ids, f.ideal.BlockSize())
	}
	f.add(q.seq, e, ok)
}

// promptIDs returns the token ids a server tokenizes for t's prompt as the adapter a
// sends it: the completions prompt (system prompt and history joined before it), or
// the messages rendered with the chat template as templateCount counts them (a
// payload's prompt_token_ids as they are). ok is false when they cannot be known.
func (r *counter) promptIDs(a adapter, t *dataset.Turn, tc *turnCtx) (ids []int, ok bool) {
	addGen := true
	switch a.input(t, tc) {
	case inputPrompt:
		if t.Body != nil || a.path() != (completionsAPI{}).path() {
			return nil, false
		}
		return r.tok.Encode(completionPrompt(t, tc), false), true
	case inputTemplateExtra:
		if v, ok := r.extra["add_generation_prompt"].(bool); ok {
			addGen = v
		}
	}
	msgs, addGen, pids, ok := r.chatInput(t, tc, addGen, nil)
	if !ok {
		return nil, false
	}
	if pids != nil {
		return slices.Clone(pids), true
	}
	text, _, err := r.tok.ChatInput(msgs, tokenizer.ChatOptions{AddGenerationPrompt: addGen})
	if err != nil {
		return nil, false
	}
	return r.tok.Encode(text, false), true
}
