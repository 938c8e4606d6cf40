package loadgen

// Scheduling: when each request is sent. The open loop sends at the pacer's times
// (sleepUntil waits precisely for each); the closed loop keeps N requests in flight;
// both claim request indices and take conversations from the source.

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/perfgate/perfgate/loadgen/dataset"
)

// makePacer returns the open-loop pacer, or nil for closed loop.
func (r *runner) makePacer() (Pacer, error) {
	cfg := &r.cfg
	if cfg.Schedule {
		sl, ok := r.src.(dataset.Offsets)
		if !ok {
			return nil, errors.New("loadgen: schedule needs a finite input")
		}
		speedup := cfg.Speedup
		if cfg.InputFormat == FormatAgentTrace {
			speedup = 1 // the source's offsets are already sped up and capped
		}
		return TracePacer{Offsets: sl.Offsets(), Speedup: speedup}, nil
	}
	if cfg.Pacer != nil {
		return cfg.Pacer, nil
	}
	if len(cfg.RateSeries) > 0 {
		return &SeriesPacer{Series: cfg.RateSeries, Arrival: cfg.Arrival, Burstiness: cfg.Burstiness, Src: rand.NewPCG(cfg.Seed, 0xa441)}, nil
	}
	if cfg.Rate <= 0 {
		return nil, nil
	}
	if cfg.Ramp > 0 {
		return RampPacer{From: cfg.RampFrom, To: cfg.Rate, Over: cfg.Ramp}, nil
	}
	src := rand.NewPCG(cfg.Seed, 0xa441)
	switch cfg.Arrival {
	case ArrivalConstant:
		return ConstantPacer{Freq: cfg.Rate}, nil
	case ArrivalGamma:
		return &GammaPacer{Freq: cfg.Rate, Burstiness: cfg.Burstiness, Src: src}, nil
	}
	return &PoissonPacer{Freq: cfg.Rate, Src: src}, nil
}

// claim reserves the next request index, or returns -1 when the run must stop.
func (r *runner) claim(ctx context.Context) int {
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

// next returns the next conversation: from a slice directly (cheap), else from the
// producer goroutine (see produce).
// take claims the next request index and the conversation it starts; ok is false when
// the run is over (count reached, context ended or the workload ran out).
func (r *runner) take(ctx context.Context) (idx int, conv dataset.Conversation, ok bool) {
	// Index and conversation are paired under one lock, so request g always carries
	// the source's g-th conversation (a shard's parity with one process relies on it).
	r.takeMu.Lock()
	defer r.takeMu.Unlock()
	if idx = r.claim(ctx); idx < 0 {
		return -1, conv, false
	}
	conv, ok = r.next()
	return idx, conv, ok
}

func (r *runner) next() (dataset.Conversation, bool) {
	if r.direct != nil { // under takeMu, as the producer's batches
		if r.limit > 0 && r.taken >= r.limit {
			return dataset.Conversation{}, false
		}
		r.taken++
		return r.direct.Next()
	}
	// Under takeMu: the producer's batches are drawn in order.
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
func (r *runner) produce(stop <-chan struct{}) {
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

// DefaultSpin is how long before a request's due time the open loop's send loop stops
// using Go timers (which on Linux wake up to ~1 ms late, bunching Poisson arrivals at
// high rates) and sleeps in one nanosleep system call until shortly before it, then
// busy-waits the rest (see sleepUntil).
const DefaultSpin = 1500 * time.Microsecond

// The last stretch before a due time. A sleep that ends exactly at the due time
// wakes late by an amount that varies (the scheduler's delay, and the host's on a VM);
// if that lateness depended on the gap slept through, a Poisson stream's gaps would be
// distorted (a KS test saw D ≈ 0.05–0.06 at 1,000 req/s, n = 2,000, against a critical
// 0.036 at alpha 0.01). So the send loop wakes early and busy-waits the rest. How early
// is a trade: waking by a high quantile of the sleeps' overshoot makes nearly every
// send punctual but spins that quantile less the overshoot on almost every request
// (a fixed 300 µs once cost more CPU than the request; waking by about the 80th
// percentile, capped at 50 µs, still cost ~15 µs a request on this VM; a cap of 25 µs
// lowered the open/closed CPU ratio at 5,000 req/s from a median 1.52 to 1.39 in eight
// interleaved runs, the accuracy unchanged: mean 0.10 ms both, p99 1.4 against 1.7 ms);
// waking by a low quantile spins little and leaves the sends that overshoot more late
// by the excess.
// wakeEarly follows the wakeQuantile of recent overshoots, within [minWakeEarly,
// maxWakeEarly]; BenchmarkOpenLoopCost prints the resulting accuracy beside a bare
// sleeper's overshoot, and BenchmarkPacerWait the CPU per wait.
const (
	minWakeEarly  = 2 * time.Microsecond  // below it a sleep is not worth its system call
	maxWakeEarly  = 25 * time.Microsecond // the most busy-waiting per request
	initWakeEarly = 20 * time.Microsecond // before any sleep was measured
	yieldEvery    = 20 * time.Microsecond // how often spinUntil yields the processor
	// The estimate rises by wakeUp on an overshoot above it and falls by wakeDown on
	// one at or below it, so it settles where a fraction wakeUp/(wakeUp+wakeDown) of
	// the overshoots are at or below it: that is wakeQuantile.
	wakeUp       = time.Microsecond
	wakeDown     = time.Microsecond
	wakeQuantile = float64(wakeUp) / float64(wakeUp+wakeDown)
)

// wakeEarly estimates the wakeQuantile of how late the precise sleep wakes (see
// wakeUp). The one send loop owns it.
type wakeEarly struct{ d time.Duration }

func (w *wakeEarly) get() time.Duration {
	if w.d == 0 {
		w.d = initWakeEarly
	}
	return w.d
}

// observe takes the overshoot of one sleep (wake-up time minus the time asked for).
func (w *wakeEarly) observe(over time.Duration) {
	d := w.get()
	if over > d {
		d += wakeUp
	} else {
		d -= wakeDown
	}
	w.d = min(max(d, minWakeEarly), maxWakeEarly)
}

// sleepUntil waits until the run clock reaches due: a timer sleep until r.spin before
// it, a precise sleep until r.early's estimate before it, then spinUntil. It reports
// false if ctx ended first. The send loop calls it, on its thread of its own (see
// lockPreciseThread).
func (r *runner) sleepUntil(ctx context.Context, due time.Duration) bool {
	for {
		d := due - r.clock.now()
		if d <= 0 {
			return ctx.Err() == nil
		}
		if d > r.spin {
			if !sleep(ctx, d-r.spin) {
				return false
			}
			continue
		}
		if early := r.early.get(); d > early {
			wake := due - early
			preciseSleep(d - early)
			r.early.observe(r.clock.now() - wake)
		}
		spinUntil(r.clock, due)
		return ctx.Err() == nil
	}
}

// spinUntil busy-waits until the clock reaches due, yielding the processor every
// yieldEvery while more than maxWakeEarly remains. The last stretch (sleepUntil spins
// at most its wake-early estimate, at most maxWakeEarly) keeps the processor: a
// goroutine that yields goes to the back of the global run queue and may get a
// processor back only after whatever runs meanwhile blocks. It does not yield on
// every check: each runtime.Gosched also wakes another thread to look for work, so a
// loop of them burns more than the one core it holds.
func spinUntil(c *runClock, due time.Duration) {
	next := c.now() + yieldEvery
	for {
		now := c.now()
		if now >= due {
			return
		}
		if now >= next && due-now > maxWakeEarly {
			runtime.Gosched()
			next = c.now() + yieldEvery
		}
	}
}

// sleep waits d or until ctx is done; it reports whether the full wait elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// openLoop hands each request to a sender goroutine half its lead to its lead
// (runner.lead) before the request is due (see ahead.go): the sender prepares the request and hands
// it to the send loop, which writes it at its due time. While the send loop runs, the
// schedule watch may stop the run with abort (see watchSchedule; nil: not watched).
func (r *runner) openLoop(ctx context.Context, abort context.CancelCauseFunc) {
	r.watchIdle()
	defer r.startWarmers(ctx)()
	loop := newSendLoop(r)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if abort != nil && r.watchesSchedule() {
			defer r.watchSchedule(loop, abort)()
		}
		loop.run(ctx)
	}()
	var sent uint64
	defer func() { loop.finish(sent) }()
	lead := r.lead()
	jobs := make(chan openJob)
	defer close(jobs)
	for ; ; sent++ {
		// Pace is pure, so Pace(0, sent) is request sent's due time on the schedule
		// (0 for an unlimited pacer): queueing behind the concurrency ceiling then
		// shows as Sent − Scheduled instead of silently shifting the schedule.
		due, _ := r.pacer.Pace(0, sent)
		for {
			now := r.clock.now()
			wait, stop := r.pacer.Pace(now, sent)
			if stop {
				return
			}
			if wait <= 0 && due == 0 {
				due = now
			}
			if r.deadline > 0 && now+wait >= r.deadline {
				return
			}
			if wait <= lead {
				break
			}
			// Wake once for all the requests due within the next half lead.
			if !sleep(ctx, wait-lead/2) {
				return
			}
		}
		select {
		case loop.ahead <- struct{}{}:
		case <-ctx.Done():
			return
		}
		idx, conv, ok := r.take(ctx)
		if !ok {
			return
		}
		held := false
		if r.sem != nil {
			select {
			case r.sem <- struct{}{}:
				held = true
			case <-ctx.Done():
				return
			}
		}
		j := openJob{conv: conv, idx: idx, due: due, held: held, g: &sendGate{seq: sent, due: due, loop: loop}}
		select {
		case jobs <- j: // an idle sender takes it
		default:
			r.wg.Add(1)
			go r.openSender(ctx, j, jobs)
		}
	}
}

// openJob is one open-loop conversation for a sender goroutine.
type openJob struct {
	conv dataset.Conversation
	idx  int
	due  time.Duration
	held bool
	g    *sendGate
}

// openSender runs j, then the jobs it takes from jobs until that closes. Senders are
// reused rather than started per request: a new goroutine's stack grows (is copied)
// on the way down the request path every time, ~10 µs a request at 5,000 req/s.
func (r *runner) openSender(ctx context.Context, j openJob, jobs <-chan openJob) {
	defer r.wg.Done()
	for ok := true; ok; j, ok = <-jobs {
		r.conversation(ctx, j.conv, j.idx, j.due, j.held, j.g)
	}
}

func (r *runner) closedLoop(ctx context.Context, n int) {
	local, global := r.workers(n)
	if r.eventLoops(ctx, local) {
		return // non-streaming plain HTTP: the event loops send (see evloop_linux.go)
	}
	for i := range local {
		if ctx.Err() != nil {
			return // interrupted while starting workers
		}
		var start time.Duration
		if r.cfg.Ramp > 0 && n > 1 {
			start = time.Duration(int64(r.cfg.Ramp) * int64(global(i)) / int64(n))
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if !sleep(ctx, start-r.clock.now()) {
				return
			}
			r.work(ctx)
		}()
	}
}

// work is a closed-loop worker: conversation after conversation until the run ends.
func (r *runner) work(ctx context.Context) {
	for {
		idx, conv, ok := r.take(ctx)
		if !ok {
			return
		}
		if !r.conversation(ctx, conv, idx, 0, false, nil) {
			return
		}
	}
}
