package loadgen

// Preparing open-loop requests ahead of their due time. The pacer hands each request
// to a sender goroutine (an idle one, or a new one) 1–2 ms (prepareLead) before it is
// due; the sender builds everything it sends (record, body, headers) and takes a
// connection, then waits at the request's sendGate for its turn and its due time and
// writes at once: the only work left between the due time and the write is the write.
// The gates pass in schedule order, after each write, so one goroutine at a time waits
// precisely (sleepUntil) and at most maxAhead requests are prepared at once.
//
// This replaced a pacer that started a new goroutine for each request when it was due,
// which then claimed its conversation, built its body and took (or dialed) a
// connection: on a 2-core machine at 5,000 req/s that was 10–20 µs of goroutine start
// and 5–10 µs of building after the due time on average, and a dial (0.4–4 ms) for
// the ~1% of requests that found no idle connection (docs/performance.md, "Open-loop
// pacing cost").

import (
	"context"
	"sync"
	"time"
)

const (
	// prepareLead is the most time before its due time a request starts being
	// prepared (the least is half of it): more than a Go timer's lateness (up to
	// ~1 ms) plus a loopback dial.
	prepareLead = 2 * time.Millisecond
	// maxAhead is the most requests prepared and not yet sent at once (each holds a
	// connection while it waits).
	maxAhead = 64
	// spareConns is how many idle connections per target the open loop keeps dialed
	// ahead, so a burst of arrivals beyond the connections in use does not wait for a
	// dial.
	spareConns = 2
)

// sendGate is where a prepared open-loop request waits before it is written: until
// the request before it in the schedule has been written (prev closes), then until
// its due time. Its release, once the request is written (or given up), closes next
// and frees the request's place among the maxAhead.
type sendGate struct {
	due   time.Duration
	prev  <-chan struct{}
	next  chan struct{}
	ahead <-chan struct{}
	done  bool
}

// prepareSend readies c to be written at g's due time and waits for it: it takes
// the connection (see prepareConn), then waits until the request before it has been
// written and c is due. Written over HTTP, c releases g after its write (call.wrote),
// so the next request's goroutine is not woken between this due time and this write;
// with another sender g is released here.
func (r *runner) prepareSend(ctx context.Context, c *call, g *sendGate) {
	if r.warmers != nil {
		r.prepareConn(ctx, c)
		c.gate = g
	}
	r.waitGate(ctx, g)
	if c.gate == nil {
		g.release()
	}
}

// waitGate waits until the request before g has been written, then until g's due
// time, or until ctx ends.
func (r *runner) waitGate(ctx context.Context, g *sendGate) {
	select {
	case <-g.prev:
	case <-ctx.Done():
		return
	}
	r.sleepUntil(ctx, g.due)
}

// wrote releases c's gate, if any, once c has been written (or failed to be).
func (c *call) wrote() {
	if g := c.gate; g != nil {
		c.gate = nil
		g.release()
	}
}

// leaveGate gives up g's turn if the request ends without being written (a body that
// could not be built, a failed connection, a cancelled run): after the request before
// it, so the order holds.
func (r *runner) leaveGate(ctx context.Context, g *sendGate) {
	if g == nil || g.done {
		return
	}
	select {
	case <-g.prev:
	case <-ctx.Done():
	}
	g.release()
}

func (g *sendGate) release() {
	if !g.done {
		g.done = true
		close(g.next)
		<-g.ahead
	}
}

// prepareConn takes c's connection before the request's due time (a pooled one, or
// a new one dialed now), arms its kernel timestamps, and has the target's warmer top
// its idle connections up. A failure is kept for the send to record.
func (r *runner) prepareConn(ctx context.Context, c *call) {
	w := r.warmers[c.target]
	var deadline time.Time
	if c.timeout > 0 {
		deadline = time.Now().Add(c.timeout)
	}
	cn, reused, err := c.target.get(ctx, r.clock, deadline)
	if err != nil {
		c.preErr = err
		return
	}
	cn.useKernelTimestamps(c.stream && c.target.kernelTS)
	c.pre, c.preReused = cn, reused
	if c.target.idleCount() < spareConns {
		w.kick()
	}
}

// conn returns the connection prepared for c (once), or takes one now.
func (c *call) conn(ctx context.Context, clock *runClock, deadline time.Time) (*conn, bool, error) {
	if cn, err := c.pre, c.preErr; cn != nil || err != nil {
		c.pre, c.preErr = nil, nil
		return cn, c.preReused, err
	}
	return c.target.get(ctx, clock, deadline)
}

// dropPrepared returns a prepared connection the send did not use to the pool, and
// forgets the gate (leaveGate releases it).
func (c *call) dropPrepared() {
	c.gate = nil
	if c.pre != nil {
		c.target.put(c.pre)
		c.pre = nil
	}
	c.preErr = nil
}

func (t *target) idleCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.idle)
}

// warmer dials connections for one target in the background while it has fewer than
// spareConns idle ones.
type warmer struct {
	t     *target
	clock *runClock
	wake  chan struct{}
}

func (w *warmer) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *warmer) run(ctx context.Context) {
	for {
		select {
		case <-w.wake:
		case <-ctx.Done():
			return
		}
		for w.t.idleCount() < spareConns && ctx.Err() == nil {
			c, err := w.t.dial(ctx, w.clock, time.Time{})
			if err != nil {
				break // the requests' own dials record why
			}
			w.t.put(c)
		}
	}
}

// startWarmers starts a warmer per target when requests go over HTTP, under ctx; the
// returned function stops them and waits until they have put back what they dialed.
func (r *runner) startWarmers(ctx context.Context) (stop func()) {
	if _, ok := r.sender.(*httpSender); !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	r.warmers = make(map[*target]*warmer, len(r.targets))
	for _, t := range r.targets {
		w := &warmer{t: t, clock: r.clock, wake: make(chan struct{}, 1)}
		r.warmers[t] = w
		wg.Go(func() { w.run(ctx) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}
