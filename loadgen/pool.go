package loadgen

// The connection pool: one per target URL, connections owned by loadgen so that each
// request sets its own idle and total read deadlines.

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// target is one server URL with its own connection pool. Connections are owned by
// loadgen (not fasthttp.Client) so each request can set its own read deadlines: an
// idle deadline between chunks and a total deadline, independently.
type target struct {
	url      string // full endpoint URL
	uri      string // request target: path and query
	host     string // Host header
	addr     string // host:port to dial
	tls      bool
	kernelTS bool // take chunk times from the kernel's receive timestamps (Linux, plain TCP)
	dialer   *dialer
	pending  atomic.Int64 // requests in flight (least-outstanding routing)
	// runCtx is the run's context: each connection watches it once (see conn.watch)
	// instead of each request registering and removing a callback.
	runCtx context.Context

	mu   sync.Mutex
	idle []*conn
}

func newTarget(raw string, d *dialer) (*target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("loadgen: url %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("loadgen: url %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("loadgen: url %q: no host", raw)
	}
	addr := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			addr += ":443"
		} else {
			addr += ":80"
		}
	}
	return &target{url: raw, uri: u.RequestURI(), host: u.Host, addr: addr, tls: u.Scheme == "https", dialer: d}, nil
}

// conn is a pooled connection. first is the run-clock time of the first byte read
// since the request was written (0 = none yet).
type conn struct {
	net.Conn
	br    *bufio.Reader
	clock *runClock
	// ks reads with the kernel's receive timestamps. It is set up the first time the
	// connection carries a streaming request, and used (stamp) only for those: a
	// non-streaming response is timed by its first and last reads, and a plain read is
	// cheaper than recvmsg with control messages.
	ks   *kernelStamper
	noKS bool // the kernel refused timestamps on this connection
	// sw writes a request and waits for its answer without a read (see sendWaiter);
	// set up at the first non-streaming request, noSW when the connection cannot.
	sw   *sendWaiter
	noSW bool
	// idleFrom is when the connection went back to the pool (run clock; 0 = new).
	idleFrom time.Duration
	stamp    bool // this request's reads use ks
	// deadlineAt is the connection's read and write deadline (zero = none);
	// deadlineUnknown: a stream's reads have moved the read deadline since.
	deadlineAt      time.Time
	deadlineUnknown bool
	// watch is the run context whose cancellation cancels this connection's reads
	// (for its whole life); unwatch deregisters that.
	watch   context.Context
	unwatch func() bool
	armed   bool
	first   time.Duration
	last    time.Duration // run-clock time of the bytes of the latest read
	reads   int           // reads that returned data (events parsed between two share a time)
	dialed  dialTimes     // how the connection was opened (the first request's phases)
}

// setTotalDeadline makes the connection's deadline at least d and at most timeout/1024
// after it (zero d: no deadline). A keep-alive connection keeps its deadline while it
// stays within that window, which spares a runtime timer update per request.
func (c *conn) setTotalDeadline(d time.Time, timeout time.Duration) {
	if d.IsZero() {
		if !c.deadlineAt.IsZero() || c.deadlineUnknown {
			_ = c.SetDeadline(time.Time{})
			c.deadlineAt, c.deadlineUnknown = time.Time{}, false
		}
		return
	}
	slack := timeout / 1024
	if !c.deadlineUnknown && !c.deadlineAt.IsZero() && !c.deadlineAt.Before(d) && c.deadlineAt.Sub(d) <= slack {
		return
	}
	c.deadlineAt, c.deadlineUnknown = d.Add(slack), false
	_ = c.SetDeadline(c.deadlineAt)
}

// setHeaderDeadline bounds the wait for the response headers by d, or by total when
// that comes first; the next request sets its own deadline afresh.
func (c *conn) setHeaderDeadline(d, total time.Time) {
	if !total.IsZero() && total.Before(d) {
		d = total
	}
	_ = c.SetReadDeadline(d)
	c.deadlineUnknown = true
}

// useKernelTimestamps makes this request's reads use kernel receive timestamps when
// on is true and the kernel supports them; it reports whether they are used.
func (c *conn) useKernelTimestamps(on bool) bool {
	if on && c.ks == nil && !c.noKS {
		c.ks = newKernelStamper(c.Conn)
		c.noKS = c.ks == nil
	}
	c.stamp = on && c.ks != nil
	return c.stamp
}

// sendWaitIdle is the longest a pooled connection may have been idle for its next
// request to be written by its sendWaiter. A server closing an idle connection may
// half-close it and keep reading for a while (a lingering close): its FIN, seen before
// the waiter cleared the readiness, would not end the wait, where the ordinary read
// meets the end of the stream at once and the request is retried on a fresh
// connection. Servers' keep-alive timeouts are seconds; a busy connection idles for
// microseconds.
const sendWaitIdle = 500 * time.Millisecond

// sendWaiter returns the connection's sendWaiter for call c sent at now (run clock),
// or nil when c is written the ordinary way: a stream (its header deadline is set
// after the write), an open-loop request whose gate opens at its write (see sendGate;
// a sendWaiter returns only once the answer is there), bytes already buffered (the
// answer may be there), a connection idle for sendWaitIdle or more, or one that is
// not plain TCP.
func (c *conn) sendWaiter(call *call, now time.Duration) *sendWaiter {
	if call.stream || call.gate != nil || c.noSW || c.br.Buffered() > 0 || c.idleFrom > 0 && now-c.idleFrom >= sendWaitIdle {
		return nil
	}
	if c.sw == nil {
		c.sw = newSendWaiter(c.Conn)
		c.noSW = c.sw == nil
	}
	return c.sw
}

func (c *conn) Read(p []byte) (int, error) {
	var (
		n   int
		err error
	)
	if c.stamp {
		var ts time.Time
		n, ts, err = c.ks.read(p)
		if n > 0 {
			k, now := c.clock.fromWall(ts), c.clock.now()
			c.last = stampTime(c.last, k, now)
			if c.clock.self != nil && !ts.IsZero() {
				c.clock.self.readDelay.add(now - k)
			}
		}
	} else {
		n, err = c.Conn.Read(p)
		if n > 0 {
			c.last = c.clock.now()
		}
	}
	if n > 0 {
		c.reads++
	}
	if n > 0 && c.armed && c.first == 0 {
		c.first = c.last
		c.armed = false
	}
	return n, err
}

// dialer dials with a connect timeout, spreading local source addresses round-robin,
// and times each new connection's phases.
type dialer struct {
	timeout time.Duration
	local   []net.Addr
	next    atomic.Uint64
	tls     *tls.Config                         // https connections' settings (roots, verification); nil = the system's
	dial    func(addr string) (net.Conn, error) // test hook (in-memory listeners)
}

// dialTimes are how long a new connection took to open: the name lookup, the TCP
// connect and the TLS handshake (connect includes tls, as HAR's connect does).
type dialTimes struct{ dns, connect, tls time.Duration }

// dialConn opens a connection to addr (host:port): it resolves the host itself (not
// inside net.Dialer), so the lookup is timed apart from the connect, then tries the
// addresses in the resolver's order until one connects.
func (d *dialer) dialConn(ctx context.Context, addr string, useTLS bool, host string) (net.Conn, dialTimes, error) {
	var dt dialTimes
	t0 := time.Now()
	if d.dial != nil {
		c, err := d.dial(addr)
		dt.connect = time.Since(t0)
		return c, dt, err
	}
	nd := net.Dialer{Timeout: d.timeout}
	if len(d.local) > 0 {
		nd.LocalAddr = d.local[d.next.Add(1)%uint64(len(d.local))]
		nd.Control = bindNoPort
	}
	h, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, dt, err
	}
	ips := []string{h}
	if net.ParseIP(h) == nil {
		found, err := net.DefaultResolver.LookupIPAddr(ctx, h)
		if err != nil {
			return nil, dt, err
		}
		ips = ips[:0]
		for _, ip := range found {
			ips = append(ips, ip.String())
		}
		dt.dns = time.Since(t0)
		t0 = time.Now()
	}
	var c net.Conn
	for i, ip := range ips {
		var e error
		if c, e = nd.DialContext(ctx, "tcp", net.JoinHostPort(ip, port)); e == nil {
			break
		}
		if i == 0 {
			err = e
		}
	}
	if c == nil {
		return nil, dt, err
	}
	dt.connect = time.Since(t0)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if useTLS {
		t1 := time.Now()
		var cfg *tls.Config
		if d.tls != nil {
			cfg = d.tls.Clone()
		} else {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		cfg.ServerName = serverName(host)
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, dt, err
		}
		dt.tls = time.Since(t1)
		dt.connect += dt.tls
		return tc, dt, nil
	}
	return c, dt, nil
}

// serverName is the TLS server name of a URL's host (host or host:port; an IPv6
// address in brackets).
func serverName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.Trim(host, "[]")
}

// get returns an idle connection (reused = true) or dials one, bounded by deadline.
func (t *target) get(ctx context.Context, clock *runClock, deadline time.Time) (*conn, bool, error) {
	t.mu.Lock()
	if n := len(t.idle); n > 0 {
		c := t.idle[n-1]
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		return c, true, nil
	}
	t.mu.Unlock()
	c, err := t.dial(ctx, clock, deadline)
	return c, false, err
}

// dial opens a new connection, bounded by deadline.
func (t *target) dial(ctx context.Context, clock *runClock, deadline time.Time) (*conn, error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	nc, dt, err := t.dialer.dialConn(ctx, t.addr, t.tls, t.host)
	if err != nil {
		return nil, err
	}
	return t.newConn(nc, clock, dt), nil
}

// newConn makes nc, opened as dt says, one of t's connections, watching the run's
// context.
func (t *target) newConn(nc net.Conn, clock *runClock, dt dialTimes) *conn {
	c := &conn{Conn: nc, clock: clock, dialed: dt}
	c.br = bufio.NewReaderSize(c, connReadBuffer)
	if t.runCtx != nil && t.runCtx.Done() != nil {
		c.watch, c.unwatch = t.runCtx, context.AfterFunc(t.runCtx, c.cancelReads)
	}
	return c
}

// Close stops watching the run context and closes the connection.
func (c *conn) Close() error {
	if c.unwatch != nil {
		c.unwatch()
		c.unwatch = nil
	}
	return c.Conn.Close()
}

// connReadBuffer is each connection's read buffer: response headers must fit in it.
// A request is rendered into its worker's buffer and written with one system call,
// so an open stream costs one read buffer and no write buffer.
const connReadBuffer = 4 << 10

func (t *target) put(c *conn) {
	t.mu.Lock()
	t.idle = append(t.idle, c)
	t.mu.Unlock()
}

func (t *target) closeIdle() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
}

// cancelReads makes blocked and future reads fail at once (the deadline moves into
// the past); the connection is then closed, never reused.
func (c *conn) cancelReads() {
	_ = c.SetDeadline(time.Unix(1, 0))
}
