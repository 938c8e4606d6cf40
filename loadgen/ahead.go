package loadgen

// Open-loop sending. The pacer (openLoop) hands each request to a sender goroutine (an
// idle one, or a new one) half to all of its lead (openLoop.lead) before it is due; the
// sender builds everything it sends (record, body, headers, the request's bytes) and
// takes a connection, then hands the prepared request to the run's send loop (submit)
// and waits for the answer on the connection. The send loop, one goroutine on an OS
// thread of its own, takes the requests in schedule order, sleeps until each one's due
// time and writes its bytes itself: the only work between a due time and its write is
// the write, and a request costs one timer wake-up of that thread (plus the answer's
// network wake-up, as in the closed loop). A request whose sender has not handed it
// over by its due time is overtaken by the ones after it, so one sender kept waiting
// for a processor makes one request late, not every request due while it waits. The
// run clock starts one lead after the pacer (openLoop.headStart), so the first requests
// are prepared ahead too.
//
// This replaced two designs. The first started a goroutine per request at its due time,
// which then built its body and took (or dialed) a connection: 10–20 µs of goroutine
// start and 5–10 µs of building after the due time on 2 cores at 5,000 req/s, and a
// dial for the ~1% that found no idle connection. The second prepared ahead as now but
// had each sender wait at a gate for the previous request's write, then sleep until
// its due time and write itself: each request then cost the hand-off to its sender,
// the wake-up at its gate (a futex wake of another thread) and two prctl calls around
// its sleep, 2.2 context switches and 8 system calls a request against the closed
// loop's 1.3 and 5.5 (docs/performance.md, "Open-loop pacing cost").

import (
	"context"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// prepareLead is the most time before its due time a request starts being
	// prepared (the least is half of it). What it must cover is the sender's wait for
	// a processor after the pacer's hand-off: the send loop holds one processor through
	// its sleeps, and at 5,000 streamed req/s on 2 cores the other one is busy enough
	// that a woken sender waited 1–5 ms in its run queue dozens of times a second, and
	// 10–50 ms while a garbage collection's mark phase ran on it (a runtime trace of
	// BenchmarkOpenLoopCost, docs/performance.md). In eight interleaved runs each with
	// the head start and overtaking, 20 ms gave a send accuracy p99 of 0.74–2.9 ms
	// (median 1.4) against 5 ms's 1.4–26 (median 3.4); it holds four times the
	// connections (about the rate times the lead), and maxAhead grew with it.
	prepareLead = 20 * time.Millisecond
	// ceilingLead is the lead under a concurrency ceiling: a prepared request holds
	// its slot while it waits for its due time, so a long lead would lower the
	// ceiling by about the rate times the lead.
	ceilingLead = 2 * time.Millisecond
	// maxAhead is the most requests prepared and not yet sent at once (each holds a
	// connection while it waits): 10,000 req/s times the lead, with room for Poisson
	// bursts. Beyond it the pacer waits, and the lead shortens.
	maxAhead = 256
	// spareConns is how many idle connections per target the open loop keeps dialed
	// ahead, so a burst of arrivals beyond the connections in use does not wait for a
	// dial.
	spareConns = 2
)

// sendGate is one open-loop request's place in the schedule. The pacer makes it with
// the request's position (seq) and due time; the request's sender fills it and hands
// it to the send loop exactly once (submit): prepared bytes and a connection for the
// loop to write (cn), or a channel for the loop to close at the due time (wake: a
// sender that writes itself), or neither (the request is not sent: leave).
type sendGate struct {
	seq       uint64
	due       time.Duration
	loop      *sendLoop
	submitted bool // by the sender goroutine, which alone reads it

	// Filled by the sender before submit.
	ctx  context.Context // the request's: the loop does not write it once that ends
	cn   *conn
	buf  []byte      // the request's bytes, head and inline body
	bufs net.Buffers // or head and body, for a body past inlineBody
	wake chan struct{}
	self *selfMeter    // where the loop records the send (nil: nowhere)
	done chan struct{} // the sender's worker's; one token once the loop's write ended

	// state says whether the loop has begun the write (gatePending → gateWriting →
	// gateWritten) or the sender has given it up first (gatePending → gateAbandoned).
	state atomic.Int32
	// Set by the loop before the token: when the write began and ended, its error.
	sent, written time.Duration
	err           error
}

const (
	gatePending int32 = iota
	gateWriting
	gateWritten
	gateAbandoned
)

// submit hands g to the send loop (once).
func (g *sendGate) submit() {
	g.submitted = true
	g.loop.in <- g // never blocks: at most maxAhead gates are out, the channel holds them all
}

// settle ends g's wait for the send loop: true, with the write's times and error in g,
// once the loop has written it (waiting for the write to end if it has not); false if
// the loop had not begun it, which it then never will.
func (g *sendGate) settle() bool {
	if g.state.CompareAndSwap(gatePending, gateAbandoned) {
		return false
	}
	<-g.done
	return true
}

// lead is how long before its due time the pacer hands a request to its sender, at
// the most (at the least half of it): prepareLead, or ceilingLead under a concurrency
// ceiling.
func (o *openLoop) lead() time.Duration {
	if o.sem != nil {
		return ceilingLead
	}
	return prepareLead
}

// headStart is how long before the run clock's zero an open loop starts: its lead, so
// the requests due first are prepared ahead as every later one is. Starting the pacer
// at zero gave the first of them no lead at all: at 5,000 req/s the first tens of
// requests went out 2–5 ms late, while the run's first senders started (counted in
// BenchmarkOpenLoopCost's runs, docs/performance.md).
func (o *openLoop) headStart() time.Duration {
	return o.lead()
}

// prepareSend readies c, due at g, before its due time. Written over HTTP, c takes its
// connection now (see prepareConn) and keeps g: the send goes through the send loop
// (sendAhead). Otherwise (another sender, or a connection that could not be had, whose
// failure is then recorded at the due time) it waits here until the loop wakes it at
// the due time, in schedule order.
func (g *sendGate) prepareSend(ctx context.Context, c *call) {
	if o := g.loop.o; o.warmers != nil {
		o.prepareConn(ctx, c)
		if c.preErr == nil {
			c.gate = g
			return
		}
	}
	g.ctx, g.wake = ctx, make(chan struct{})
	g.submit()
	select {
	case <-g.wake:
	case <-ctx.Done():
	}
}

// leave gives up g's turn if the request ends without handing it to the send loop
// (a body that could not be built, a failed connection, a cancelled run), so the loop
// goes on to the next request.
func (g *sendGate) leave() {
	if g != nil && !g.submitted {
		g.cn, g.wake = nil, nil
		g.submit()
	}
}

// sendAhead performs the first attempt of x, prepared ahead (x.c.gate): it hands the
// request's bytes to the send loop, which writes them at the due time, and reads the
// answer meanwhile. retry is true when the connection turned out stale (closed by the
// server, nothing answered): the caller retries once on a fresh one, written at once.
func (w *worker) sendAhead(x *exchange) (ok bool, err error, retry bool) {
	c, rec := x.c, x.rec
	g := c.gate
	c.gate = nil
	if c.timeout > 0 {
		// The total timeout runs from the send, not from the preparation.
		x.total = x.clock.start.Add(max(g.due, x.begin) + c.timeout)
	}
	if !w.connect(x) {
		return false, nil, false // recorded; the request leaves its gate
	}
	w.watch(x)
	cn := x.cn
	if c.stream && c.idle > 0 {
		// As readHead does, from the due time: the wait for the headers starts at the write.
		cn.setHeaderDeadline(x.clock.start.Add(max(g.due, x.clock.now())+c.idle), x.total)
	}
	w.wbuf = appendHead(w.wbuf[:0], c)
	if len(c.body) > inlineBody {
		g.bufs = net.Buffers{w.wbuf, c.body}
	} else {
		w.wbuf = append(w.wbuf, c.body...)
		g.buf = w.wbuf
	}
	if w.aheadDone == nil {
		w.aheadDone = make(chan struct{}, 1)
	}
	g.ctx, g.cn, g.done = x.ctx, cn, w.aheadDone
	g.submit()
	err = w.readHeadNow(x)
	if !g.settle() {
		// Never written: the run or the request was cancelled first, or the server
		// answered or closed the connection before the request was due.
		x.stop()
		cn.Close()
		if x.ctx.Err() == nil && x.reused && sleep(x.ctx, g.due-x.clock.now()) {
			// A keep-alive connection the server had closed: retried at once, but not
			// before the request is due.
			return false, nil, c.retryFresh(x)
		}
		rec.Sent = x.clock.now()
		rec.Done = rec.Sent
		rec.ErrorKind, rec.Error = errKind(x.ctx, err, x.total)
		if x.ctx.Err() == nil {
			rec.Error = "loadgen: the connection ended before the request was sent: " + rec.Error
		}
		return false, nil, false
	}
	rec.Sent = g.sent
	if g.err != nil {
		if err == nil {
			// The server answered, then cut the write short (a 413 for a body over its
			// limit): record its answer, not a connect error.
			return true, nil, false
		}
		x.stop()
		return false, nil, w.writeFailed(x, g.err, x.reused) && c.retryFresh(x)
	}
	rec.Written = g.written
	if err != nil && x.reused && cn.first == 0 && x.ctx.Err() == nil && isClosed(err) {
		// The server closed the idle connection as we reused it (nothing came back).
		x.stop()
		cn.Close()
		return false, nil, c.retryFresh(x)
	}
	return true, err, false
}

// retryFresh readies c's retry on a new connection, not another pooled one: the open
// loop keeps spare connections, and those the server closed are stale alike. It
// reports true (retry).
func (c *call) retryFresh(x *exchange) bool {
	c.pre, c.preErr = c.target.dial(x.ctx, x.clock, x.total)
	c.preReused = false
	return true
}

// sendLoop writes the open loop's prepared requests at their due times, in schedule
// order, from one goroutine locked to its OS thread (so the thread's timer slack is set
// once, see lockPreciseThread).
type sendLoop struct {
	o     *openLoop
	in    chan *sendGate // submitted gates, in any order
	ahead chan struct{}  // the pacer's: a token per request handed out and not yet passed
	stop  chan struct{}  // closed once the pacer hands out no more; total is then final
	total uint64         // how many the pacer handed out
	ring  [maxAhead]*sendGate
	next  uint64 // the next request to pass, by seq
	// passed is next, for the schedule watch (see watchSchedule): the oldest request
	// not yet passed; sends counts the requests passed, in any order.
	passed, sends atomic.Uint64
}

func newSendLoop(o *openLoop) *sendLoop {
	return &sendLoop{o: o, in: make(chan *sendGate, maxAhead), ahead: make(chan struct{}, maxAhead), stop: make(chan struct{})}
}

// finish tells the loop the pacer handed out n requests in all.
func (l *sendLoop) finish(n uint64) {
	l.total = n
	close(l.stop)
}

// run passes the requests until the pacer's last one, or until ctx ends (a request
// waiting for its write is then woken by its connection's own watch of the context,
// see conn.cancelReads, and gives its write up). It passes them in schedule order,
// except that a request not handed over by its due time (its sender has not run yet)
// holds back only itself: the requests after it that are in go out at their own due
// times (see target), and it goes out as soon as it is in.
func (l *sendLoop) run(ctx context.Context) {
	lockPreciseThread() // never unlocked: the thread ends with the loop
	stop := l.stop
	for {
		l.advance()
		g := l.ring[l.next%maxAhead]
		if g == nil {
			if stop == nil && l.total == l.next {
				return
			}
			h, due, end := l.target()
			if h == nil || h.due-l.o.clock.now() > l.o.spin {
				if !l.await(ctx, &stop, due, end) {
					return
				}
				continue
			}
			g = h // overtakes the next request, which is late
		}
		l.ring[g.seq%maxAhead] = passedGate
		l.pass(ctx, g)
		l.sends.Add(1)
	}
}

// passedGate marks a ring slot whose request the loop has passed; advance clears it.
var passedGate = new(sendGate)

// advance moves next past the requests passed, handing their tokens back to the pacer.
func (l *sendLoop) advance() {
	for l.ring[l.next%maxAhead] == passedGate {
		l.ring[l.next%maxAhead] = nil
		l.next++
		l.passed.Store(l.next)
		<-l.ahead
	}
}

// target is what the loop waits toward while the next request is not in: that
// request's due time (end: the schedule has none), or, once it is due, the earliest
// later request that is in (h), which the loop passes ahead of it when h is due within
// the spin (sleeping until h's due time and writing it; the late one, handed over
// meanwhile, goes right after it).
func (l *sendLoop) target() (h *sendGate, due time.Duration, end bool) {
	due, end = l.o.pacer.Pace(0, l.next)
	if end || due > l.o.clock.now() {
		return nil, due, end
	}
	if h = l.firstIn(); h != nil {
		due = h.due
	}
	return h, due, false
}

// firstIn returns the earliest request after the next one that is in and not passed,
// or nil. The pacer has handed out the requests up to next plus its tokens.
func (l *sendLoop) firstIn() *sendGate {
	for s, out := l.next+1, l.next+uint64(len(l.ahead)); s < out; s++ {
		if g := l.ring[s%maxAhead]; g != nil && g != passedGate {
			return g
		}
	}
	return nil
}

// await waits for the next request's gate: it files the gates submitted so far in the
// ring, and if the next one is not among them, it waits toward due (see target): the
// next request's due time on the schedule as if it were in (its sender is still
// preparing it: it is usually in by then), so the loop's thread does not block on the
// channel, which would cost it a hand-off of its processor and a wake-up by the
// sender. Once the next request is due, it waits on the channel, for at most the time
// until the earliest later request in is due less the spin. It returns false if ctx
// ended first; once the pacer is done it sets *stop to nil.
func (l *sendLoop) await(ctx context.Context, stop *chan struct{}, due time.Duration, end bool) bool {
	if l.drain() {
		return true
	}
	var timeout <-chan time.Time
	if !end {
		switch d := due - l.o.clock.now(); {
		case d > l.o.spin:
			t := time.NewTimer(d - l.o.spin)
			defer t.Stop()
			timeout = t.C
		case d > 0:
			return l.o.sleepUntil(ctx, due)
		}
	}
	select {
	case g := <-l.in:
		l.ring[g.seq%maxAhead] = g
	case <-ctx.Done():
		return false
	case <-*stop:
		*stop = nil
	case <-timeout:
	}
	return true
}

// drain files the gates submitted so far in the ring; it reports whether there was any.
func (l *sendLoop) drain() bool {
	got := false
	for {
		select {
		case g := <-l.in:
			l.ring[g.seq%maxAhead] = g
			got = true
		default:
			return got
		}
	}
}

// pass acts on g at its due time: it writes g's request, or wakes g's sender, or (a
// request given up) does nothing.
func (l *sendLoop) pass(ctx context.Context, g *sendGate) {
	if g.cn == nil && g.wake == nil || g.ctx.Err() != nil {
		return
	}
	if !l.o.sleepUntil(ctx, g.due) || g.ctx.Err() != nil {
		return
	}
	if g.wake != nil {
		close(g.wake)
		return
	}
	if !g.state.CompareAndSwap(gatePending, gateWriting) {
		return // given up by its sender
	}
	clock := l.o.clock
	g.sent = clock.now()
	if g.bufs != nil {
		_, g.err = g.bufs.WriteTo(g.cn.Conn)
	} else {
		_, g.err = g.cn.Conn.Write(g.buf)
	}
	g.written = clock.now()
	if g.self != nil {
		g.self.sent(g.due, g.sent)
	}
	g.state.Store(gateWritten)
	g.done <- struct{}{}
}

// prepareConn takes c's connection before the request's due time (a pooled one, or
// a new one dialed now), arms its kernel timestamps, and has the target's warmer top
// its idle connections up. A failure is kept for the send to record.
func (o *openLoop) prepareConn(ctx context.Context, c *call) {
	w := o.warmers[c.target]
	var deadline time.Time
	if c.timeout > 0 {
		deadline = time.Now().Add(c.timeout)
	}
	cn, reused, err := c.target.get(ctx, o.clock, deadline)
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
	if c.own != nil && *c.own != nil { // the session's own connection (ReuseSticky)
		cn := *c.own
		*c.own = nil
		return cn, true, nil
	}
	return c.target.get(ctx, clock, deadline)
}

// dropPrepared returns a prepared connection the send did not use to the pool, and
// forgets the gate (sendGate.leave hands it on).
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

// prewarm dials, before the run's clock starts, the connections an open loop over HTTP
// needs at once as it begins: requests prepared up to its lead ahead and those in
// flight, about its starting rate times twice the lead (at least spareConns, at most
// maxAhead), spread over the targets. Without them each of the first requests dialed
// its own in its preparation, and under load those dials (0.4–4 ms) made the run's
// first tens of requests late by more than a millisecond. Failures are left to the
// requests' own dials to record.
func (o *openLoop) prewarm(ctx context.Context) {
	if !o.http || len(o.targets) == 0 {
		return
	}
	n := maxAhead
	if rate := o.pacer.Rate(0); !math.IsInf(rate, 1) {
		n = min(max(int(math.Ceil(rate*2*o.lead().Seconds())), spareConns), maxAhead)
	}
	var deadline time.Time
	if d := o.timeout; d > 0 {
		deadline = time.Now().Add(d)
	}
	var wg sync.WaitGroup
	for i := range n {
		t := o.targets[i%len(o.targets)]
		wg.Go(func() {
			if c, err := t.dial(ctx, o.clock, deadline); err == nil {
				t.put(c)
			}
		})
	}
	wg.Wait()
}

// watchIdle has the connections prewarm dialed (before the context requests run under
// was known) watch that context, as those dialed later do (see target.dial).
func (o *openLoop) watchIdle() {
	for _, t := range o.targets {
		if t.runCtx == nil || t.runCtx.Done() == nil {
			continue
		}
		t.mu.Lock()
		for _, c := range t.idle {
			if c.watch == nil {
				c.watch, c.unwatch = t.runCtx, context.AfterFunc(t.runCtx, c.cancelReads)
			}
		}
		t.mu.Unlock()
	}
}

// startWarmers starts a warmer per target when requests go over HTTP, under ctx; the
// returned function stops them and waits until they have put back what they dialed.
func (o *openLoop) startWarmers(ctx context.Context) (stop func()) {
	if !o.http {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	o.warmers = make(map[*target]*warmer, len(o.targets))
	for _, t := range o.targets {
		w := &warmer{t: t, clock: o.clock, wake: make(chan struct{}, 1)}
		o.warmers[t] = w
		wg.Go(func() { w.run(ctx) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}
