package loadgen

// The open loop: requests sent at the pacer's times, whatever the answers do
// (sleepUntil waits precisely for each). The pacer hands each request to a sender
// goroutine, which prepares it, and one send loop writes it at its due time
// (ahead.go); the schedule watch stops a client that falls behind (schedwatch.go).

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/perfgate/perfgate/loadgen/dataset"
)

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

// sleepUntil waits until the run clock reaches due: a timer sleep until o.spin before
// it, a precise sleep until o.early's estimate before it, then spinUntil. It reports
// false if ctx ended first. The send loop calls it, on its thread of its own (see
// lockPreciseThread).
func (o *openLoop) sleepUntil(ctx context.Context, due time.Duration) bool {
	for {
		d := due - o.clock.now()
		if d <= 0 {
			return ctx.Err() == nil
		}
		if d > o.spin {
			if !sleep(ctx, d-o.spin) {
				return false
			}
			continue
		}
		if early := o.early.get(); d > early {
			wake := due - early
			preciseSleep(d - early)
			o.early.observe(o.clock.now() - wake)
		}
		spinUntil(o.clock, due)
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

// openLoop is the open loop's transport: it hands each request the pacer makes due to
// a sender goroutine half its lead to its lead (see lead) before the request is due
// (see ahead.go): the sender prepares the request, claimed from wl, and sends it
// through send, handing it to the send loop, which writes it at its due time. While
// the send loop runs, the schedule watch may stop the run with abort (see
// watchSchedule; nil: not watched).
type openLoop struct {
	pacer Pacer
	clock *runClock
	wl    *workload
	send  sendPath
	sem   chan struct{} // the concurrency ceiling's slots (Config.Concurrency); nil = none
	// The send loop's waits (see sleepUntil): spin is DefaultSpin, or 0 with
	// Config.CoarseTimer; early the precise sleep's estimate.
	spin  time.Duration
	early wakeEarly
	// Over HTTP (the real sender: http), connections are prewarmed before the start,
	// taken before each request's due time and topped up by a warmer per target
	// (warmers, see prepareConn); timeout bounds a prewarm dial (Config.timeout).
	targets []*target
	http    bool
	timeout time.Duration
	warmers map[*target]*warmer
	// The schedule watch's: the most lag allowed (Config.maxScheduleLag; 0 = not
	// watched), where the reason a run stopped goes, and what stops it.
	maxLag  time.Duration
	stopped *stopCause
	abort   context.CancelCauseFunc
	wg      sync.WaitGroup // the send loop and the senders
}

var _ driver = (*openLoop)(nil)

func (o *openLoop) drive(ctx context.Context) {
	defer o.wg.Wait()
	o.watchIdle()
	defer o.startWarmers(ctx)()
	loop := newSendLoop(o)
	o.wg.Go(func() {
		if o.abort != nil && o.watchesSchedule() {
			defer o.watchSchedule(loop, o.abort)()
		}
		loop.run(ctx)
	})
	var sent uint64
	defer func() { loop.finish(sent) }()
	lead := o.lead()
	jobs := make(chan openJob)
	defer close(jobs)
	for ; ; sent++ {
		// Pace is pure, so Pace(0, sent) is request sent's due time on the schedule
		// (0 for an unlimited pacer): queueing behind the concurrency ceiling then
		// shows as Sent − Scheduled instead of silently shifting the schedule.
		due, _ := o.pacer.Pace(0, sent)
		for {
			now := o.clock.now()
			wait, stop := o.pacer.Pace(now, sent)
			if stop {
				return
			}
			if wait <= 0 && due == 0 {
				due = now
			}
			if o.wl.deadline > 0 && now+wait >= o.wl.deadline {
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
		idx, conv, ok := o.wl.take(ctx)
		if !ok {
			return
		}
		held := false
		if o.sem != nil {
			select {
			case o.sem <- struct{}{}:
				held = true
			case <-ctx.Done():
				return
			}
		}
		j := openJob{conv: conv, idx: idx, due: due, held: held, g: &sendGate{seq: sent, due: due, loop: loop}}
		select {
		case jobs <- j: // an idle sender takes it
		default:
			o.wg.Go(func() { o.sender(ctx, j, jobs) })
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

// sender runs j, then the jobs it takes from jobs until that closes. Senders are
// reused rather than started per request: a new goroutine's stack grows (is copied)
// on the way down the request path every time, ~10 µs a request at 5,000 req/s.
func (o *openLoop) sender(ctx context.Context, j openJob, jobs <-chan openJob) {
	for ok := true; ok; j, ok = <-jobs {
		o.send.conversation(ctx, j.conv, j.idx, j.due, j.held, j.g)
	}
}
