//go:build linux

package loadgen

// The event loop: closed-loop, non-streaming requests to plain http:// targets are
// sent by a few goroutines (one per processor at most), each owning its share of the
// workers' connections through its own epoll set, as wrk does. A request is written
// with a raw write and its answer read with raw reads when epoll reports the socket
// readable: no goroutine parks per connection in the runtime's poller and none is
// woken per answer (the goroutine way costs a park, a poller hand-off and often a
// thread wake-up per request).
//
// What a loop does for a request is what the goroutine way (worker.do) does, through
// the same functions: prepare and finish (the record, the body, counting, the
// collector), exchange.connected and connectFailed (the send time, the connection
// phases), parsePlainHead (the answer's head) and worker.receive (status, body, usage,
// error kinds). Only the waiting differs. What a loop does not handle itself goes the
// goroutine way, with the worker slot: a conversation of several turns, a streaming
// turn, and an answer whose head is not plain (chunked, no Content-Length, a 1xx, a
// head past the read buffer), which is handed over with the bytes already read.
//
// Connections are dialled the ordinary way (DNS, source addresses, the connect
// timeout, timed) by a goroutine, so a dial never stalls a loop; the loop takes a
// duplicate of the socket, out of the runtime's poller, and closes the original.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/record"
)

// drive sends the closed loop's requests through event loops, or with the goroutine
// workers when a loop cannot be made (no epoll here).
func (d *eventLoops) drive(ctx context.Context) {
	k := loops(d.most, d.n)
	ls := make([]*evLoop, 0, k)
	for i := range k {
		slots := d.n / k
		if i < d.n%k {
			slots++
		}
		l, err := newEvLoop(d, ctx, slots)
		if err != nil {
			for _, l := range ls {
				l.close()
			}
			d.fallback.drive(ctx) // no epoll here: the goroutine way
			return
		}
		ls = append(ls, l)
	}
	var wg sync.WaitGroup
	for _, l := range ls {
		wg.Go(l.run)
	}
	wg.Wait()
}

// loops is how many event loops serve n closed-loop workers: at most most (zero = one
// per processor), at most one per worker.
func loops(most, n int) int {
	l := most
	if l <= 0 {
		l = runtime.GOMAXPROCS(0)
	}
	return max(min(l, n), 1)
}

// evLoop is one event loop: its epoll set, its connections and its worker slots.
type evLoop struct {
	d    *eventLoops
	ctx  context.Context
	ep   int    // the epoll descriptor
	wake [2]int // a pipe: a byte written to wake[1] wakes the loop (cancellation, a dial's end)
	// wakeMu guards the pipe against a wake-up after the loop closed it (its number
	// may name another file by then).
	wakeMu sync.Mutex
	closed bool
	conns  []*evConn
	free   []int32
	idle   [][]*evConn // per target (d.targets' order): kept-alive connections not in use
	slots  []*evSlot
	active int // slots still sending (not done, not handed to a goroutine)
	dials  int // dials under way
	dialed chan evDial
	back   chan evBack // slots a goroutine gives back (see handOff)
	events []syscall.EpollEvent
	// earliest is the earliest total deadline of a request in flight (run clock; 0 =
	// none known): the loop looks for expired requests once it is passed.
	earliest time.Duration
	served   int64
}

// evConn is a connection of a loop.
type evConn struct {
	fd     int
	id     int32 // its index in evLoop.conns, its epoll data
	target int
	buf    []byte // the read buffer: an answer's head must fit in it
	n      int    // bytes in buf
	out    bool   // epoll watches it for writing (not reading)
	slot   *evSlot
	// cn is what the shared answer handling reads of the connection: the time of the
	// first byte read (first).
	cn conn
}

// evSlot is one closed-loop worker in a loop: the request it has in flight.
type evSlot struct {
	sc       *scratch
	q        turnReq
	rec      *record.Client
	tg       *target
	ec       *evConn
	state    evState
	attempt  int
	reused   bool
	deadline time.Duration // the total deadline (run clock; 0 = none)
	wrote    int           // bytes of the request written
	// The answer: its head once parsed (length >= 0), and how much of a body read
	// into the worker's body buffer (inBody) is there.
	status, length, head int
	close, inBody        bool
	got                  int
	wrErr                error // the write failed: reading whether the server answered anyway
}

type evState uint8

const (
	evIdle    evState = iota // between requests
	evDialing                // waiting for a dial
	evWriting                // the request is partly written (epoll watches for writing)
	evReading                // waiting for the answer
	evAway                   // a goroutine has it (see handOff)
	evDone                   // the run is over for this slot
)

// evBack is a slot a goroutine gives back, with the connection its request ended on
// when that can be kept (fd >= 0).
type evBack struct {
	s      *evSlot
	fd     int
	target int
}

// evDial is a dial's result for a slot.
type evDial struct {
	s   *evSlot
	fd  int
	dt  dialTimes
	err error
}

func newEvLoop(d *eventLoops, ctx context.Context, slots int) (*evLoop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	l := &evLoop{d: d, ctx: ctx, ep: ep, idle: make([][]*evConn, len(d.targets)), dialed: make(chan evDial, slots), back: make(chan evBack, slots), events: make([]syscall.EpollEvent, max(slots, 16))}
	if err := syscall.Pipe2(l.wake[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		syscall.Close(ep)
		return nil, err
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: -1}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, l.wake[0], &ev); err != nil {
		l.close()
		return nil, err
	}
	for range slots {
		l.slots = append(l.slots, &evSlot{sc: &scratch{w: newWorker()}})
	}
	return l, nil
}

// close releases the loop's descriptors and connections.
func (l *evLoop) close() {
	for _, ec := range l.conns {
		if ec != nil {
			syscall.Close(ec.fd)
		}
	}
	l.wakeMu.Lock()
	l.closed = true
	syscall.Close(l.wake[0])
	syscall.Close(l.wake[1])
	l.wakeMu.Unlock()
	syscall.Close(l.ep)
}

// poke wakes the loop (from any goroutine).
func (l *evLoop) poke() {
	var b = [1]byte{1}
	l.wakeMu.Lock()
	if !l.closed {
		_, _ = syscall.Write(l.wake[1], b[:])
	}
	l.wakeMu.Unlock()
}

// run sends until every slot is done, then closes the loop.
func (l *evLoop) run() {
	defer l.close()
	stop := context.AfterFunc(l.ctx, l.poke)
	defer stop()
	l.active = len(l.slots)
	for _, s := range l.slots {
		l.next(s)
	}
	for l.active > 0 || l.dials > 0 {
		n := l.wait()
		for _, ev := range l.events[:n] {
			if ev.Fd < 0 {
				l.woken()
				continue
			}
			if ec := l.conns[ev.Fd]; ec != nil {
				l.ready(ec, ev.Events)
			}
		}
		if l.earliest > 0 && l.d.clock.now() >= l.earliest {
			l.expire()
		}
	}
	l.d.served.Add(l.served)
}

// evYields is how many times a loop yields its processor, polling after each, before
// it blocks in epoll_wait.
const evYields = 1

// wait returns the number of events in l.events: those ready now, else those that
// come before the earliest deadline (at most a second).
func (l *evLoop) wait() int {
	// Raw polls first: with answers waiting, no trip through the scheduler. Between
	// two, the loop yields its processor once, so the goroutines waiting for one (the
	// collector, a hand-off) run while answers arrive, instead of after the loop blocked.
	for i := 0; ; i++ {
		n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(l.ep), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), 0, 0, 0)
		if e == 0 && n > 0 {
			return int(n)
		}
		if i == evYields {
			break
		}
		runtime.Gosched()
	}
	ms := 1000
	if l.earliest > 0 {
		ms = int(min(max((l.earliest-l.d.clock.now()+time.Millisecond-1)/time.Millisecond, 0), 1000))
	}
	// Blocking: an ordinary system call, so the runtime can run others meanwhile and
	// a stop-the-world never waits for it.
	k, err := syscall.EpollWait(l.ep, l.events, ms)
	if err != nil {
		return 0 // EINTR
	}
	return k
}

// woken handles a wake-up: dials that ended, and the run's cancellation.
func (l *evLoop) woken() {
	var b [64]byte
	for {
		if n, _ := syscall.Read(l.wake[0], b[:]); n < len(b) {
			break
		}
	}
	for ended := true; ended; {
		select {
		case d := <-l.dialed:
			l.dials--
			l.dialEnded(d)
		case back := <-l.back:
			l.cameBack(back)
		default:
			ended = false
		}
	}
	if l.ctx.Err() != nil {
		for _, s := range l.slots {
			if s.state == evWriting || s.state == evReading {
				l.fail(s, l.ctx.Err())
			}
		}
	}
}

// next starts the slot's next request, or ends the slot.
func (l *evLoop) next(s *evSlot) {
	d := l.d
	for {
		idx, conv, ok := d.wl.take(l.ctx)
		if !ok {
			s.state = evDone
			l.active--
			return
		}
		if len(conv.Turns) != 1 || conv.Job != "" { // several turns, or an agent job's sub-agents
			l.handOff(s, func() evBack {
				d.send.conversation(l.ctx, conv, idx, 0, false, nil)
				return evBack{s: s, fd: -1}
			})
			return
		}
		sc := s.sc
		tg, rec, ok := d.send.begin(conv, idx, sc, &s.q)
		if !ok {
			continue // recorded as failed
		}
		s.tg, s.rec = tg, rec
		res := sc.result()
		c := &sc.call
		if s.q.stream {
			l.handOff(s, func() evBack {
				d.sender.send(l.ctx, c, rec, res)
				l.end(s)
				return evBack{s: s, fd: -1}
			})
			return
		}
		x := sc.w.begin(l.ctx, d.clock, c, rec, res)
		s.deadline = 0
		if c.timeout > 0 {
			s.deadline = x.begin + c.timeout
			if l.earliest == 0 || s.deadline < l.earliest {
				l.earliest = s.deadline
			}
		}
		s.attempt = 0
		l.connect(s)
		return
	}
}

// end finishes the slot's request (see runner.end).
func (l *evLoop) end(s *evSlot) {
	l.d.send.end(&s.q, s.sc, s.rec, s.tg)
	s.rec, s.ec, s.wrErr = nil, nil, nil
	s.sc.tc.history = s.sc.tc.history[:0]
}

// done ends the slot's request and starts its next.
func (l *evLoop) done(s *evSlot) {
	s.state = evIdle
	l.end(s)
	l.served++
	l.next(s)
}

// handOff gives the slot to a goroutine, which runs fn (the goroutine way) and gives
// the slot back with what fn returns.
func (l *evLoop) handOff(s *evSlot, fn func() evBack) {
	s.state = evAway
	go func() {
		l.back <- fn()
		l.poke()
	}()
}

// cameBack takes back a slot a goroutine had, and its connection if any, and starts
// the slot's next request.
func (l *evLoop) cameBack(b evBack) {
	if b.fd >= 0 {
		if ec, err := l.add(b.fd, b.target); err == nil {
			l.idle[b.target] = append(l.idle[b.target], ec)
		}
	}
	b.s.state = evIdle
	l.next(b.s)
}

// targetIndex is tg's index in d.targets.
func (l *evLoop) targetIndex(tg *target) int {
	for i, t := range l.d.targets {
		if t == tg {
			return i
		}
	}
	return 0
}

// connect takes a kept-alive connection of the slot's target, or dials one.
func (l *evLoop) connect(s *evSlot) {
	x := &s.sc.w.x
	ti := l.targetIndex(s.tg)
	if k := len(l.idle[ti]); k > 0 {
		ec := l.idle[ti][k-1]
		l.idle[ti] = l.idle[ti][:k-1]
		l.attach(s, ec, true, dialTimes{})
		return
	}
	s.state = evDialing
	l.dials++
	tg, clock, total, ctx := s.tg, l.d.clock, x.total, l.ctx
	go func() {
		d := evDial{s: s, fd: -1}
		cn, err := tg.dial(ctx, clock, total)
		if err == nil {
			d.dt = cn.dialed
			d.fd, err = dupSocket(cn.Conn)
			cn.Close()
		}
		d.err = err
		l.dialed <- d
		l.poke()
	}()
}

// dialEnded takes a dial's connection into the loop for its slot.
func (l *evLoop) dialEnded(d evDial) {
	s := d.s
	if d.err != nil {
		s.sc.w.x.connectFailed(d.err)
		l.done(s)
		return
	}
	ec, err := l.add(d.fd, l.targetIndex(s.tg))
	if err != nil {
		s.sc.w.x.connectFailed(err)
		l.done(s)
		return
	}
	l.attach(s, ec, false, d.dt)
}

// add registers fd with the loop.
func (l *evLoop) add(fd, target int) (*evConn, error) {
	ec := &evConn{fd: fd, target: target, buf: make([]byte, connReadBuffer)}
	if k := len(l.free); k > 0 {
		ec.id = l.free[k-1]
		l.free = l.free[:k-1]
		l.conns[ec.id] = ec
	} else {
		ec.id = int32(len(l.conns))
		l.conns = append(l.conns, ec)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: ec.id}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.drop(ec)
		return nil, err
	}
	return ec, nil
}

// drop closes a connection.
func (l *evLoop) drop(ec *evConn) {
	l.release(ec)
	syscall.Close(ec.fd)
}

// release takes a connection out of the loop, its descriptor left open.
func (l *evLoop) release(ec *evConn) {
	_ = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, ec.fd, nil)
	l.conns[ec.id] = nil
	l.free = append(l.free, ec.id)
}

// attach starts the slot's request on ec.
func (l *evLoop) attach(s *evSlot, ec *evConn, reused bool, dt dialTimes) {
	x := &s.sc.w.x
	ec.slot, s.ec, s.reused = s, ec, reused
	ec.cn.first, ec.n = 0, 0
	if l.ctx.Err() != nil {
		l.drop(ec)
		rec := s.rec
		rec.Sent = l.d.clock.now()
		rec.Done = rec.Sent
		rec.ErrorKind, rec.Error = record.ErrCancelled, cancelled(l.ctx, "before sending")
		l.done(s)
		return
	}
	x.connected(reused, dt)
	c := x.c
	w := s.sc.w
	w.wbuf = append(appendHead(w.wbuf[:0], c), c.body...)
	s.wrote, s.length, s.inBody, s.got = 0, -1, false, 0
	l.write(s)
}

// write writes what is left of the slot's request.
func (l *evLoop) write(s *evSlot) {
	ec, w := s.ec, s.sc.w
	for s.wrote < len(w.wbuf) {
		n, e := sysWrite(ec.fd, w.wbuf[s.wrote:])
		switch e {
		case 0:
			s.wrote += int(n)
			continue
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			// The send buffer is full: wait until it drains (and not for reading, which
			// an early answer would make ready again and again).
			s.state = evWriting
			l.watch(ec, true)
			return
		}
		l.writeFailed(s, os.NewSyscallError("write", e))
		return
	}
	s.sc.w.x.rec.Written = l.d.clock.now()
	s.state = evReading
	l.watch(ec, false)
}

// watch makes epoll report ec ready for writing (out) or for reading.
func (l *evLoop) watch(ec *evConn, out bool) {
	if ec.out == out {
		return
	}
	ec.out = out
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: ec.id}
	if out {
		ev.Events = syscall.EPOLLOUT
	}
	_ = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_MOD, ec.fd, &ev)
}

// writeFailed handles a failed write as the goroutine way does (worker.send): a
// cancellation is recorded, a reused connection's first attempt is retried on another,
// and otherwise the loop reads whether the server answered before it stopped reading
// (a 413 for a body past its limit), for at most answerWait.
func (l *evLoop) writeFailed(s *evSlot, err error) {
	x := &s.sc.w.x
	if l.ctx.Err() != nil {
		l.drop(s.ec)
		x.rec.Done = l.d.clock.now()
		x.rec.ErrorKind, x.rec.Error = errKind(l.ctx, err, x.total)
		l.done(s)
		return
	}
	if s.reused && s.attempt == 0 {
		l.drop(s.ec)
		s.attempt++
		l.connect(s)
		return
	}
	s.wrErr = err
	s.state = evReading
	s.deadline = l.d.clock.now() + answerWait
	if l.earliest == 0 || s.deadline < l.earliest {
		l.earliest = s.deadline
	}
	l.watch(s.ec, false)
}

// ready handles epoll's report on ec.
func (l *evLoop) ready(ec *evConn, events uint32) {
	s := ec.slot
	if s == nil {
		// A kept-alive connection not in use: the server closed it (or sent what
		// nothing asked for). It is not used again.
		var b [1]byte
		if _, e := sysRead(ec.fd, b[:]); e != syscall.EAGAIN {
			l.forget(ec)
		}
		return
	}
	switch s.state {
	case evWriting:
		l.write(s)
	case evReading:
		l.read(s)
	}
}

// forget closes a kept-alive connection not in use.
func (l *evLoop) forget(ec *evConn) {
	idle := l.idle[ec.target]
	for i, c := range idle {
		if c == ec {
			l.idle[ec.target] = append(idle[:i], idle[i+1:]...)
			break
		}
	}
	l.drop(ec)
}

// read reads what came of the slot's answer, and records the answer once whole.
func (l *evLoop) read(s *evSlot) {
	ec, w := s.ec, s.sc.w
	var p []byte
	if s.inBody {
		p = w.buf[s.got:s.length]
	} else {
		p = ec.buf[ec.n:]
	}
	if len(p) == 0 {
		return
	}
	n, e := sysRead(ec.fd, p)
	switch {
	case e == syscall.EAGAIN || e == syscall.EINTR:
		return
	case e != 0:
		l.readFailed(s, os.NewSyscallError("read", e))
		return
	case n == 0:
		l.readFailed(s, nil)
		return
	}
	if ec.cn.first == 0 {
		ec.cn.first = l.d.clock.now()
	}
	if s.inBody {
		if s.got += int(n); s.got == s.length {
			l.answer(s, w.buf, false)
		}
		return
	}
	ec.n += int(n)
	b := ec.buf[:ec.n]
	if s.length < 0 {
		status, close, length, head, ok := parsePlainHead(b)
		if !ok {
			if ec.n == len(ec.buf) || bytes.Contains(b, []byte("\r\n\r\n")) {
				l.handOver(s) // not plain: the goroutine way reads it
			}
			return // the head is not all there yet
		}
		s.status, s.close, s.length, s.head = status, close, length, head
		if head+length > len(ec.buf) {
			// The body does not fit in the read buffer: into the worker's body buffer.
			body := w.bodyBuf(length)
			s.got = copy(body, b[head:])
			s.inBody = true
			if s.got == length {
				l.answer(s, body, false)
			}
			return
		}
	}
	if end := s.head + s.length; ec.n >= end {
		l.answer(s, b[s.head:end], ec.n > end)
	}
}

// answer records the slot's whole plain answer (extra: bytes came after it, so the
// connection is not reused) and goes on to the slot's next request.
func (l *evLoop) answer(s *evSlot, body []byte, extra bool) {
	ec, w := s.ec, s.sc.w
	x := &w.x
	w.plain = plainAnswer{ok: true, status: s.status, close: s.close, body: body}
	x.cn = &ec.cn
	w.receive(x, nil)
	ec.slot = nil
	if x.keep && !extra && s.wrErr == nil && l.ctx.Err() == nil {
		l.idle[ec.target] = append(l.idle[ec.target], ec)
	} else {
		l.drop(ec)
	}
	l.done(s)
}

// readFailed handles a read's error (nil: the end of the stream) as the goroutine
// way does: a reused connection closed before anything came back is retried once on
// another (the server closed it as it was reused); otherwise the failure is recorded
// with the error the goroutine way's read reports (see readPlain).
func (l *evLoop) readFailed(s *evSlot, e error) {
	ec := s.ec
	x := &s.sc.w.x
	l.drop(ec)
	if s.wrErr != nil {
		l.writeLost(s)
		return
	}
	first := ec.cn.first
	err := e
	switch {
	case first == 0:
		err = io.EOF
	case e == nil:
		err = io.ErrUnexpectedEOF
	}
	if s.reused && s.attempt == 0 && first == 0 && l.ctx.Err() == nil && (e == nil || isClosed(e)) {
		s.attempt++
		l.connect(s)
		return
	}
	x.cn = &ec.cn
	s.sc.w.receive(x, err)
	l.done(s)
}

// writeLost records a write that failed with no answer after it.
func (l *evLoop) writeLost(s *evSlot) {
	rec := s.rec
	rec.Done = l.d.clock.now()
	rec.ErrorKind, rec.Error = record.ErrConnect, "loadgen: write request: "+s.wrErr.Error()
	l.done(s)
}

// fail ends the slot's request in flight with err (cancellation, a deadline).
func (l *evLoop) fail(s *evSlot, err error) {
	ec := s.ec
	x := &s.sc.w.x
	l.drop(ec)
	if s.wrErr != nil && l.ctx.Err() == nil {
		l.writeLost(s)
		return
	}
	if s.state == evWriting {
		x.rec.Done = l.d.clock.now()
		x.rec.ErrorKind, x.rec.Error = errKind(l.ctx, err, x.total)
		l.done(s)
		return
	}
	x.cn = &ec.cn
	s.sc.w.receive(x, err)
	l.done(s)
}

// expire ends the requests whose total deadline passed (a dial is bounded by it
// itself), and finds the next deadline.
func (l *evLoop) expire() {
	now := l.d.clock.now()
	l.earliest = 0
	for _, s := range l.slots {
		if s.deadline == 0 || s.state != evWriting && s.state != evReading && s.state != evDialing {
			continue
		}
		if now >= s.deadline && s.state != evDialing {
			err := error(os.ErrDeadlineExceeded)
			if s.ec.cn.first == 0 {
				err = fasthttp.ErrTimeout // as readPlain reports a wait for the first byte
			}
			l.fail(s, err) // its next request (see next) lowers earliest as it starts
			if s.state == evIdle || s.state == evDone || s.deadline == 0 {
				continue
			}
		}
		if l.earliest == 0 || s.deadline < l.earliest {
			l.earliest = s.deadline
		}
	}
}

// handOver gives the slot's answer, whose head is not plain, to the goroutine way
// (worker.readHead, worker.receive) with the bytes already read, and the slot with it.
func (l *evLoop) handOver(s *evSlot) {
	ec, w := s.ec, s.sc.w
	x := &w.x
	l.release(ec)
	f := os.NewFile(uintptr(ec.fd), "")
	nc, err := net.FileConn(f) // a duplicate, in the runtime's poller
	f.Close()
	if err != nil {
		x.cn = &ec.cn
		w.receive(x, err)
		l.done(s)
		return
	}
	pc := &prefixConn{Conn: nc, pre: ec.buf[:ec.n]}
	cn := s.tg.newConn(pc, l.d.clock, dialTimes{})
	cn.first, cn.armed = ec.cn.first, false
	cn.setTotalDeadline(x.total, x.c.timeout)
	x.cn, x.reused = cn, s.reused
	l.handOff(s, func() evBack {
		b := evBack{s: s, fd: -1, target: ec.target}
		w.watch(x)
		err := w.readHead(x)
		if s.wrErr != nil && err != nil {
			s.rec.Done = l.d.clock.now()
			s.rec.ErrorKind, s.rec.Error = record.ErrConnect, "loadgen: write request: "+s.wrErr.Error()
		} else {
			w.receive(x, err)
		}
		// The connection goes back with the slot when the answer left it reusable and
		// nothing past it was read.
		if x.stop() && x.keep && s.wrErr == nil && l.ctx.Err() == nil && len(pc.pre) == 0 && cn.br.Buffered() == 0 {
			b.fd, _ = dupSocket(nc)
		}
		cn.Close()
		l.end(s)
		return b
	})
}

// dupSocket returns a duplicate of c's socket, out of the runtime's poller (which the
// original leaves when it is closed), non-blocking as the original.
func dupSocket(c net.Conn) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, errors.New("not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	nfd, derr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_DUPFD_CLOEXEC, 0)
		if e != 0 {
			derr = os.NewSyscallError("fcntl", e)
			return
		}
		nfd = int(r)
	}); err != nil {
		return -1, err
	}
	return nfd, derr
}

// prefixConn is a connection whose first bytes an event loop already read, before it
// handed the answer over: Read returns them first.
type prefixConn struct {
	net.Conn
	pre []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
