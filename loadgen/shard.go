package loadgen

import (
	"fmt"
	"time"

	"github.com/perfgate/perfgate/loadgen/dataset"
)

// Sharding splits one workload over several load-generator processes (hosts, or the
// pods of a Kubernetes Indexed Job) so that, merged, they send exactly what one
// process would have sent:
//
//   - Every shard builds the same seeded global workload: the same conversations
//     (prompts, lengths, turns) in the same order, and the same arrival schedule.
//   - Shard I of N sends global request g when g ≡ I (mod N), and keeps g as the
//     record's Index (and "req-g" as its request id), so the shards' records merge
//     into the single run's index space without renumbering.
//   - Open loop: request g is due at the global pacer's due time for g (one Poisson,
//     gamma, constant, ramp or trace schedule, partitioned by index; not N independent
//     processes at Rate/N), so the merged arrivals are the single process's arrivals.
//   - Closed loop: the C workers are split as evenly as possible, shard I running
//     C/N workers, plus one when I < C mod N (the global workers w ≡ I mod N); a ramp
//     starts global worker w at Ramp·w/C, as one process would.
//   - Multi-turn conversations stay whole on one shard: conversation k (in source
//     order) goes to shard k mod N, starting at the schedule's due time for k. The
//     indices of its later turns are taken from the shard's own sequence I, I+N, …
//     (one process numbers turns in the order they happen, which no partition can
//     reproduce), so they are unique across shards but not the single run's.
//
// Refused, with the reason ([Config.Validate]): a closed loop with fewer workers than
// shards (a shard would send nothing), and an open loop with a concurrency ceiling (a
// ceiling on requests in flight across hosts needs one shared semaphore; N ceilings
// of C/N throttle differently from one of C whenever the shards' loads differ).

// JobCompletionIndexEnv is the environment variable a Kubernetes Indexed Job sets to
// the pod's completion index; perfgate takes the shard index from it when
// --shard-index is not given.
const JobCompletionIndexEnv = "JOB_COMPLETION_INDEX"

func (c *Config) shards() int { return max(c.Shards, 1) }

// validateShards reports the sharding settings' problems, and the modes a partition
// cannot reproduce faithfully.
func (c *Config) validateShards() []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, a...)...))
	}
	if c.Shards < 0 {
		bad("shards %d < 0", c.Shards)
	}
	if c.ShardIndex < 0 || (c.ShardIndex > 0 && c.ShardIndex >= c.shards()) {
		bad("shard_index %d: want 0..%d (shards %d)", c.ShardIndex, c.shards()-1, c.shards())
	}
	if c.shards() == 1 {
		return errs
	}
	n := c.shards()
	switch {
	case !c.OpenLoop() && max(c.Concurrency, DefaultConcurrency) < n:
		bad("shards %d: closed loop with %d workers leaves shards without a worker; want concurrency >= shards", n, max(c.Concurrency, DefaultConcurrency))
	case c.OpenLoop() && c.Concurrency > 0:
		bad("shards %d: an open-loop concurrency ceiling (%d) cannot be split: a ceiling across hosts needs one shared semaphore, and %d ceilings of ~%d throttle differently whenever the shards' loads differ; drop the ceiling or run one shard", n, c.Concurrency, n, c.Concurrency/n)
	}
	return errs
}

// ShardWorkers returns how many of the c closed-loop workers shard i of n runs: c/n,
// plus one when i < c mod n (the global workers w < c with w ≡ i mod n).
func ShardWorkers(c, n, i int) int {
	if n <= 1 {
		return c
	}
	w := c / n
	if i < c%n {
		w++
	}
	return w
}

// globalIndex maps the shard's k-th request (k = 0, 1, …) to its global index.
func (c *Config) globalIndex(k int64) int64 {
	return k*int64(c.shards()) + int64(c.ShardIndex)
}

// ShardPacer is the part of a global schedule one shard sends: its k-th request is the
// global request k·Shards + Index, due when Global says that one is. Rate is the
// global rate divided by Shards.
type ShardPacer struct {
	Global        Pacer
	Shards, Index int
}

var _ Pacer = ShardPacer{}

// Pace implements [Pacer].
func (p ShardPacer) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	return p.Global.Pace(elapsed, sent*uint64(p.Shards)+uint64(p.Index))
}

// Rate implements [Pacer].
func (p ShardPacer) Rate(elapsed time.Duration) float64 {
	return p.Global.Rate(elapsed) / float64(p.Shards)
}

// String implements [Pacer], e.g. "Poisson{20 req/s} shard 1/4".
func (p ShardPacer) String() string {
	return fmt.Sprintf("%v shard %d/%d", p.Global, p.Index, p.Shards)
}

// shardSource yields the conversations k ≡ index (mod shards) of src, drawing (and
// dropping) the others so the shard's conversations are the global workload's.
type shardSource struct {
	src           dataset.Source
	shards, index int
	started       bool
}

func (s *shardSource) Next() (dataset.Conversation, bool) {
	skip := s.shards - 1
	if !s.started {
		skip, s.started = s.index, true
	}
	for range skip {
		if _, ok := s.src.Next(); !ok {
			return dataset.Conversation{}, false
		}
	}
	return s.src.Next()
}

// Close closes the source it narrows, when that holds a file open.
func (s *shardSource) Close() error {
	closeSource(s.src)
	return nil
}

// narrow narrows a run's source and pacer to its shard (see the sharding rules above).
func (c *Config) narrow(src dataset.Source, p Pacer) (dataset.Source, Pacer) {
	n := c.shards()
	if n == 1 {
		return src, p
	}
	src = &shardSource{src: src, shards: n, index: c.ShardIndex}
	if p != nil {
		p = ShardPacer{Global: p, Shards: n, Index: c.ShardIndex}
	}
	return src, p
}

// shardWorkers returns the closed-loop worker count of this shard (of the global n),
// and the global number of the shard's i-th worker.
func (c *Config) shardWorkers(n int) (local int, global func(i int) int) {
	s := c.shards()
	if s == 1 {
		return n, func(i int) int { return i }
	}
	return ShardWorkers(n, s, c.ShardIndex), func(i int) int { return i*s + c.ShardIndex }
}
