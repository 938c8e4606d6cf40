package mockserver

import (
	"sync/atomic"
	"time"
)

// bseq is one request inside the batching scheduler.
type bseq struct {
	target      int
	prefillLeft int
	produced    atomic.Int64 // tokens generated so far
	stepEnd     atomic.Int64 // Unix ns of the step that produced the latest token
	admitted    atomic.Int64 // Unix ns when it left the queue for the running batch (0: not yet)
	notify      chan struct{}
	cancelled   atomic.Bool
}

// scheduler simulates continuous batching in real time (see [BatchConfig]).
type scheduler struct {
	cfg     BatchConfig
	scale   *latencyScale
	admit   chan *bseq
	quit    chan struct{}
	running []*bseq
	waiting []*bseq
	steps   atomic.Uint64
	queued  atomic.Int64 // waiting, for metrics
}

// newScheduler starts the batch scheduler; scale (the server's LatencyScale) multiplies
// its step times.
func newScheduler(c BatchConfig, scale *latencyScale) *scheduler {
	c.Step = orDur(c.Step, DefaultBatchStep)
	c.MaxBatch = orInt(c.MaxBatch, DefaultBatchMaxBatch)
	c.TokenBudget = orInt(c.TokenBudget, DefaultBatchTokens)
	c.PrefillBudget = orInt(c.PrefillBudget, DefaultBatchPrefill)
	sc := &scheduler{cfg: c, scale: scale, admit: make(chan *bseq, 1024), quit: make(chan struct{})}
	go sc.loop()
	return sc
}

// stepMs is the duration of a step that decodes nDec sequences and prefills prefilled
// tokens, scaled by the server's LatencyScale.
func (sc *scheduler) stepMs(nDec, prefilled int) float64 {
	return (durMS(sc.cfg.Step) + durMS(sc.cfg.DecodeToken)*float64(nDec) + durMS(sc.cfg.PrefillToken)*float64(prefilled)) * sc.scale.get()
}

func (sc *scheduler) submit(isl, target int) *bseq {
	q := &bseq{target: target, prefillLeft: max(isl, 1), notify: make(chan struct{}, 1)}
	sc.admit <- q
	return q
}

func (sc *scheduler) stop() { close(sc.quit) }

func (sc *scheduler) loop() {
	var deadline time.Time
	for {
		if len(sc.running) == 0 && len(sc.waiting) == 0 {
			select {
			case q := <-sc.admit:
				sc.waiting = append(sc.waiting, q)
			case <-sc.quit:
				return
			}
			deadline = time.Now()
		}
	drain:
		for {
			select {
			case q := <-sc.admit:
				sc.waiting = append(sc.waiting, q)
			case <-sc.quit:
				return
			default:
				break drain
			}
		}
		// Drop cancelled sequences, admit waiting ones.
		live := sc.running[:0]
		for _, q := range sc.running {
			if !q.cancelled.Load() {
				live = append(live, q)
			}
		}
		sc.running = live
		w := sc.waiting[:0]
		for _, q := range sc.waiting {
			if q.cancelled.Load() {
				continue
			}
			if len(sc.running) < sc.cfg.MaxBatch {
				sc.running = append(sc.running, q)
				q.admitted.Store(time.Now().UnixNano())
			} else {
				w = append(w, q)
			}
		}
		sc.waiting = w
		sc.queued.Store(int64(len(w)))
		if len(sc.running) == 0 {
			continue
		}
		// Plan the step: decodes first (each one token), then prefill chunks.
		budget := sc.cfg.TokenBudget
		nDec := 0
		for _, q := range sc.running {
			if q.prefillLeft == 0 && budget > 0 {
				nDec++
				budget--
			}
		}
		pbudget := min(sc.cfg.PrefillBudget, budget)
		type take struct {
			q *bseq
			n int
		}
		var takes []take
		prefilled := 0
		for _, q := range sc.running {
			if q.prefillLeft > 0 && pbudget > 0 {
				n := min(q.prefillLeft, pbudget)
				pbudget -= n
				prefilled += n
				takes = append(takes, take{q, n})
			}
		}
		ms := sc.stepMs(nDec, prefilled)
		deadline = deadline.Add(msDur(ms))
		now := time.Now()
		if d := deadline.Sub(now); d > 0 {
			select {
			case <-time.After(d):
			case <-sc.quit:
				return
			}
		} else if -d > msDur(ms) {
			deadline = now // fell behind by more than a step: resynchronise
		}
		end := deadline.UnixNano()
		sc.steps.Add(1)
		// Apply: decodes (in order, up to nDec), then prefills.
		left := nDec
		for _, q := range sc.running {
			if q.prefillLeft == 0 && left > 0 {
				left--
				q.stepEnd.Store(end)
				q.produced.Add(1)
				signal(q)
			}
		}
		for _, t := range takes {
			t.q.prefillLeft -= t.n
			if t.q.prefillLeft == 0 {
				t.q.stepEnd.Store(end)
				t.q.produced.Add(1) // the prefill step emits the first token
				signal(t.q)
			}
		}
		live = sc.running[:0]
		for _, q := range sc.running {
			if int(q.produced.Load()) < q.target {
				live = append(live, q)
			}
		}
		// Rotate so that, when the token budget limits decodes, others go first next.
		if nDec < len(live) && len(live) > 1 {
			live = append(live[1:], live[0])
		}
		sc.running = live
	}
}

func signal(q *bseq) {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}
