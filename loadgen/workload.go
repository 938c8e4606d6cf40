package loadgen

// The workload: which requests a run sends, in which order, and with which
// conversations. Every transport draws from it (take); it knows nothing of how they
// send.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/loadgen/dataset"
)

// workload claims a run's request indices (until its limit or deadline) and pairs each
// with the source's next conversation, in source order. Safe for concurrent use.
type workload struct {
	cfg      *Config   // the run's: its shard (globalIndex)
	clock    *runClock // the deadline's
	src      dataset.Source
	limit    int64         // total requests allowed; <= 0 = unlimited
	deadline time.Duration // no request is claimed from then on (run clock); 0 = none
	issued   atomic.Int64  // requests claimed (warmup included)

	convs  chan []dataset.Conversation // batches from the producer
	batch  []dataset.Conversation      // the batch being drawn from, under mu
	direct dataset.Source              // src when it is cheap to draw (see cheapSource): drawn under mu, no producer
	mu     sync.Mutex
	taken  int64
}

// start readies the workload to be drawn from: directly when its source is cheap,
// else through a producer goroutine, which the returned function stops.
func (r *workload) start() (stop func()) {
	if cheapSource(r.src) {
		r.direct = r.src // no producer goroutine to wake per request
		return func() {}
	}
	r.convs = make(chan []dataset.Conversation, 256/produceBatch)
	done := make(chan struct{})
	go r.produce(done)
	return func() { close(done) }
}

// claim reserves the next request index, or returns -1 when the run must stop.
func (r *workload) claim(ctx context.Context) int {
	if ctx.Err() != nil {
		return -1
	}
	if r.deadline > 0 && r.clock.now() >= r.deadline {
		return -1
	}
	i := r.cfg.globalIndex(r.issued.Add(1) - 1)
	if r.limit > 0 && i >= r.limit {
		return -1
	}
	return int(i)
}

// take claims the next request index and the conversation it starts; ok is false when
// the run is over (count reached, context ended or the workload ran out).
func (r *workload) take(ctx context.Context) (idx int, conv dataset.Conversation, ok bool) {
	// Index and conversation are paired under one lock, so request g always carries
	// the source's g-th conversation (a shard's parity with one process relies on it).
	r.mu.Lock()
	defer r.mu.Unlock()
	if idx = r.claim(ctx); idx < 0 {
		return -1, conv, false
	}
	conv, ok = r.next()
	return idx, conv, ok
}

// next returns the next conversation: from the source directly when it is cheap, else
// from the producer goroutine (see produce).
func (r *workload) next() (dataset.Conversation, bool) {
	if r.direct != nil { // under mu, as the producer's batches
		if r.limit > 0 && r.taken >= r.limit {
			return dataset.Conversation{}, false
		}
		r.taken++
		return r.direct.Next()
	}
	// Under mu: the producer's batches are drawn in order.
	if len(r.batch) == 0 {
		b, ok := <-r.convs
		if !ok {
			return dataset.Conversation{}, false
		}
		r.batch = b
	}
	c := r.batch[0]
	r.batch[0] = dataset.Conversation{} // the request holds it now, not the batch
	r.batch = r.batch[1:]
	return c, true
}

// produceBatch is the most conversations the producer hands over at once.
const produceBatch = 32

// produce draws conversations from the source in order into r.convs, ahead of the
// senders, so building prompts (tokenizer work) is off the send path and senders do
// not contend on the source. It hands them over in batches (each handover wakes a
// goroutine, a cost per request at tens of thousands a second): a batch goes as soon
// as nothing is waiting in r.convs (so senders are not kept waiting for a full one),
// else when it holds produceBatch. It stops at the source's end, after the request
// limit, or when stop closes.
func (r *workload) produce(stop <-chan struct{}) {
	defer close(r.convs)
	var batch []dataset.Conversation
	send := func() bool {
		select {
		case r.convs <- batch:
			batch = nil
			return true
		case <-stop:
			return false
		}
	}
	for n := int64(0); r.limit <= 0 || n < r.limit; n++ {
		c, ok := r.src.Next()
		if !ok {
			break
		}
		if batch == nil {
			batch = make([]dataset.Conversation, 0, produceBatch)
		}
		batch = append(batch, c)
		if (len(batch) == produceBatch || len(r.convs) == 0) && !send() {
			return
		}
	}
	if len(batch) > 0 {
		send()
	}
}

// cheapSource reports whether drawing from src costs no system call and no tokenizer
// work (a slice, a small payload file held in memory), so senders draw from it
// themselves instead of through the producer goroutine.
func cheapSource(src dataset.Source) bool {
	switch s := src.(type) {
	case *dataset.Slice:
		return true
	case *dataset.Payloads:
		return s.InMemory()
	}
	return false
}
