package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/record"
	"github.com/valyala/fasthttp"
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
	ks    *kernelStamper
	noKS  bool // the kernel refused timestamps on this connection
	stamp bool // this request's reads use ks
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

func (c *conn) Read(p []byte) (int, error) {
	var (
		n   int
		err error
	)
	if c.stamp {
		var ts time.Time
		n, ts, err = c.ks.read(p)
		if n > 0 {
			c.last = stampTime(c.last, c.clock.fromWall(ts), c.clock.now())
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

// dialer dials with a connect timeout, spreading local source addresses round-robin.
type dialer struct {
	timeout time.Duration
	local   []net.Addr
	next    atomic.Uint64
	dial    func(addr string) (net.Conn, error) // test hook (in-memory listeners)
}

func (d *dialer) dialConn(ctx context.Context, addr string, useTLS bool, host string) (net.Conn, error) {
	if d.dial != nil {
		return d.dial(addr)
	}
	nd := net.Dialer{Timeout: d.timeout}
	if len(d.local) > 0 {
		nd.LocalAddr = d.local[d.next.Add(1)%uint64(len(d.local))]
		nd.Control = bindNoPort
	}
	c, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if useTLS {
		h, _, _ := strings.Cut(host, ":")
		tc := tls.Client(c, &tls.Config{ServerName: h, MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return tc, nil
	}
	return c, nil
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
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	nc, err := t.dialer.dialConn(ctx, t.addr, t.tls, t.host)
	if err != nil {
		return nil, false, err
	}
	c := &conn{Conn: nc, clock: clock}
	c.br = bufio.NewReaderSize(c, connReadBuffer)
	if t.runCtx != nil && t.runCtx.Done() != nil {
		c.watch, c.unwatch = t.runCtx, context.AfterFunc(t.runCtx, c.cancelReads)
	}
	return c, false, nil
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

// inlineBody is the largest body copied behind the headers into one buffer; a larger
// one is written from where it is, with the headers, in one writev.
const inlineBody = 64 << 10

// headerBlock is the part of the request headers every request of a run shares,
// rendered once: the configured headers (and API key), and which of the headers
// loadgen sets itself they replace (a configured header wins, as with Header.Set).
type headerBlock struct {
	lines                      []byte // "Name: value\r\n" each
	host, ctype, accept, reqID bool
}

// newHeaderBlock renders hs. Content-Length is always the body's length, so a
// configured one is dropped; CR and LF in values become spaces (no header injection).
func newHeaderBlock(hs [][2]string) *headerBlock {
	h := &headerBlock{}
	clean := strings.NewReplacer("\r", " ", "\n", " ")
	for _, kv := range hs {
		k, v := clean.Replace(strings.TrimSpace(kv[0])), clean.Replace(kv[1])
		switch {
		case k == "", strings.EqualFold(k, "Content-Length"), strings.EqualFold(k, "Transfer-Encoding"):
			continue
		case strings.EqualFold(k, "Host"):
			h.host = true
		case strings.EqualFold(k, "Content-Type"):
			h.ctype = true
		case strings.EqualFold(k, "Accept"):
			h.accept = true
		case strings.EqualFold(k, "X-Request-Id"):
			h.reqID = true
		}
		h.lines = append(append(append(append(h.lines, k...), ": "...), v...), "\r\n"...)
	}
	return h
}

var noHeaders = &headerBlock{}

// appendHead appends c's request line and headers (up to the blank line) to dst.
func appendHead(dst []byte, c *call) []byte {
	h := c.hdr
	if h == nil {
		h = noHeaders
	}
	dst = append(append(append(dst, "POST "...), c.target.uri...), " HTTP/1.1\r\n"...)
	if !h.host {
		dst = append(append(append(dst, "Host: "...), c.target.host...), "\r\n"...)
	}
	if !h.ctype {
		dst = append(dst, "Content-Type: application/json\r\n"...)
	}
	if c.stream && !h.accept {
		dst = append(dst, "Accept: text/event-stream\r\n"...)
	}
	if c.requestID != "" && !h.reqID {
		dst = append(append(append(dst, "X-Request-Id: "...), c.requestID...), "\r\n"...)
	}
	dst = append(dst, h.lines...)
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(c.body)), 10)
	return append(dst, "\r\n\r\n"...)
}

// writeRequest writes c's request to cn in one system call (on plain TCP): the
// headers and body rendered into w.wbuf, or the headers and a large body in one writev.
func (w *worker) writeRequest(cn net.Conn, c *call) error {
	w.wbuf = appendHead(w.wbuf[:0], c)
	if len(c.body) > inlineBody {
		bufs := net.Buffers{w.wbuf, c.body}
		_, err := bufs.WriteTo(cn)
		return err
	}
	w.wbuf = append(w.wbuf, c.body...)
	_, err := cn.Write(w.wbuf)
	return err
}

// answerWait bounds the read of an answer after a failed write (see answeredAnyway).
const answerWait = time.Second

// answeredAnyway reads a response the server sent before it stopped reading the
// request, true if one arrived (in w.resp).
func (w *worker) answeredAnyway(cn *conn, c *call) bool {
	w.resp.Reset()
	w.resp.StreamBody = c.stream
	_ = cn.Conn.SetReadDeadline(time.Now().Add(answerWait))
	return w.resp.Read(cn.br) == nil
}

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

// runClock is the run's monotonic clock: durations since start.
type runClock struct{ start time.Time }

func (c *runClock) now() time.Duration { return time.Since(c.start) }

// fromWall converts a wall-clock instant (a kernel timestamp) to the run clock with one
// wall↔monotonic offset for the whole run: the wall reading taken with the monotonic
// one at start. (Recomputing the offset on every read, as this once did, let two reads
// on one stream disagree by the scheduling delay between their clock readings, so a
// chunk could be timed up to ~17 ms before the one read before it.) A zero ts means
// "now".
func (c *runClock) fromWall(ts time.Time) time.Duration {
	if ts.IsZero() {
		return c.now()
	}
	return time.Duration(ts.UnixNano() - c.start.UnixNano())
}

// stampTime returns the run time of a read whose kernel timestamp converts to kernel,
// given the previous read's time on the connection (prev) and the monotonic clock now:
// never before prev (a stream's chunks are timed in order even if the wall clock is
// stepped back) and never after now (nor if it is stepped forward).
func stampTime(prev, kernel, now time.Duration) time.Duration {
	return min(max(kernel, prev), now)
}

// call is one HTTP exchange to perform.
type call struct {
	target    *target
	body      []byte
	requestID string
	stream    bool
	endpoint  Endpoint
	hdr       *headerBlock  // shared headers; nil = none
	timeout   time.Duration // total; 0 = none
	idle      time.Duration // between chunks once the first byte arrived; 0 = none
	// firstOutput, if set, is called once, at the first chunk that carries output
	// (Config.PrefillConcurrency releases its slot there); the caller clears it.
	firstOutput func()
}

// result is what the exchange produced, before token counting.
type result struct {
	text      []byte // generated text (content then reasoning appended per chunk)
	ends      []int  // per chunk: end offset of its text in text
	reasoning []byte // the reasoning part of text, alone
	content   []byte // the content part of text, alone (kept only once there is reasoning)
}

// add appends one event's content and reasoning text.
func (res *result) add(content, reasoning []byte) {
	if len(reasoning) > 0 && len(res.reasoning) == 0 {
		// The first reasoning: the content so far is all of text.
		res.content = append(res.content[:0], res.text...)
	}
	res.text = append(res.text, content...)
	res.text = append(res.text, reasoning...)
	if len(res.reasoning) > 0 || len(reasoning) > 0 {
		res.content = append(res.content, content...)
	}
	res.reasoning = append(res.reasoning, reasoning...)
}

// errKind classifies err for a record: cancellation wins, then timeouts.
func errKind(ctx context.Context, err error, totalDeadline time.Time) (string, string) {
	if ctx.Err() != nil {
		return record.ErrCancelled, "loadgen: cancelled: " + context.Cause(ctx).Error()
	}
	if isTimeout(err) {
		if !totalDeadline.IsZero() && !time.Now().Before(totalDeadline) {
			return record.ErrTimeout, "loadgen: total timeout"
		}
		return record.ErrTimeout, "loadgen: idle timeout between chunks"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return record.ErrReset, "loadgen: connection closed: " + err.Error()
	}
	var bc fasthttp.ErrBrokenChunk
	if errors.As(err, &bc) {
		return record.ErrMalformed, "loadgen: broken chunked encoding: " + err.Error()
	}
	return record.ErrReset, "loadgen: " + err.Error()
}

// isTimeout reports a deadline that expired: a net.Error timeout, or fasthttp's own
// ErrTimeout, which it returns for a read deadline hit while reading the response
// headers and which is not a net.Error.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, fasthttp.ErrTimeout)
}

// isClosed reports errors of a connection the peer closed.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// timedReader sets the connection's read deadline before each read (the idle
// deadline, capped by the total one) and notes when each read returned.
type timedReader struct {
	ctx   context.Context
	r     io.Reader
	c     *conn
	clock *runClock
	idle  time.Duration
	total time.Time
	last  time.Duration
}

func (t *timedReader) Read(p []byte) (int, error) {
	if err := t.ctx.Err(); err != nil {
		// Cancelled between reads: the idle deadline set below would replace the one
		// in the past that cancellation set.
		return 0, err
	}
	if t.idle > 0 {
		d := time.Now().Add(t.idle)
		if !t.total.IsZero() && t.total.Before(d) {
			d = t.total
		}
		_ = t.c.SetReadDeadline(d)
	}
	n, err := t.r.Read(p)
	if n > 0 {
		// The event completed by these bytes arrived with the connection's latest read
		// (bytes already buffered arrived with it or before).
		t.last = t.c.last
	}
	return n, err
}

// exchange state reused per worker.
type worker struct {
	wbuf   []byte // the request being written
	resp   fasthttp.Response
	sse    *sse.Reader
	parser openai.ChunkParser
	chunk  openai.StreamChunk
	tr     timedReader

	buf     []byte
	drained bool
	readErr error
	x       exchange // the exchange in progress
}

func newWorker() *worker {
	w := &worker{sse: sse.NewReaderSize(nil, 1024, 0)}
	// Keep the body buffer between responses (not a pool round trip per response);
	// one past keptBody is let go after use.
	w.resp.KeepBodyBuffer = true
	return w
}

// keptBody is the largest response body buffer a worker keeps for the next response.
const keptBody = 64 << 10

// exchange is the state of one request/response exchange on a worker.
type exchange struct {
	ctx     context.Context
	clock   *runClock
	c       *call
	rec     *record.Client
	res     *result
	total   time.Time // the total deadline (zero: none)
	cn      *conn
	reused  bool        // cn came from the idle pool
	stamped bool        // cn reads carry kernel timestamps
	stop    func() bool // stops watching ctx for this request
	keep    bool        // cn may go back to the pool
	// While reading a stream:
	sawDone  bool
	prevRead int // cn.reads at the previous event
}

// do performs c and fills rec (timestamps, status, error, chunks, usage) and res.
// It never returns an error: every failure is recorded in rec.
func (w *worker) do(ctx context.Context, clock *runClock, c *call, rec *record.Client, res *result) {
	rec.UsagePromptTokens, rec.UsageCompletionTokens = -1, -1
	w.x = exchange{ctx: ctx, clock: clock, c: c, rec: rec, res: res}
	x := &w.x
	if c.timeout > 0 {
		x.total = time.Now().Add(c.timeout)
	}
	ok, err := w.send(x)
	if !ok {
		return
	}
	defer x.release()
	w.receive(x, err)
}

// release returns the connection to the pool when the response left it reusable,
// and closes it otherwise.
func (x *exchange) release() {
	if x.stop() && x.keep && x.ctx.Err() == nil {
		x.c.target.put(x.cn)
	} else {
		x.cn.Close()
	}
}

// send connects, writes the request and reads the response headers, retrying once on
// a fresh connection when a reused keep-alive one turns out to be stale. ok is false
// when the exchange ended, recorded, before a response; err is the header read's.
func (w *worker) send(x *exchange) (ok bool, err error) {
	for attempt := 0; ; attempt++ {
		if !w.connect(x) {
			return false, nil
		}
		retryable := x.reused && attempt == 0
		if err := w.writeRequest(x.cn.Conn, x.c); err != nil {
			if x.ctx.Err() == nil && !retryable && w.answeredAnyway(x.cn, x.c) {
				// The server answered, then cut the write short (a 413 for a body over
				// its limit): record its answer, not a connect error.
				x.stop = noStop
				return true, nil
			}
			if w.writeFailed(x, err, retryable) {
				continue // a stale keep-alive connection: retry once on a fresh one
			}
			return false, nil
		}
		err = w.readHead(x)
		if err != nil && retryable && x.cn.first == 0 && x.ctx.Err() == nil && isClosed(err) {
			// The server closed the idle connection as we reused it (nothing came
			// back): retry once on a fresh connection, as net/http does.
			x.stop()
			x.cn.Close()
			continue
		}
		return true, err
	}
}

// connect takes a connection for x (pooled or new) and arms its deadlines; false if
// the exchange ended there (recorded).
func (w *worker) connect(x *exchange) bool {
	rec := x.rec
	cn, reused, err := x.c.target.get(x.ctx, x.clock, x.total)
	if err != nil {
		rec.Sent = x.clock.now()
		rec.Done = rec.Sent
		if x.ctx.Err() != nil {
			rec.ErrorKind, rec.Error = record.ErrCancelled, "loadgen: cancelled before connecting"
		} else {
			rec.ErrorKind, rec.Error = record.ErrConnect, "loadgen: dial "+x.c.target.addr+": "+err.Error()
		}
		return false
	}
	x.cn, x.reused = cn, reused
	cn.armed, cn.first = true, 0
	cn.setTotalDeadline(x.total, x.c.timeout)
	if x.ctx.Err() != nil {
		// Cancelled, perhaps before the deadline just set replaced the one in the
		// past that cancellation set (a later cancellation sets it again).
		cn.Close()
		rec.Sent = x.clock.now()
		rec.Done = rec.Sent
		rec.ErrorKind, rec.Error = record.ErrCancelled, "loadgen: cancelled before sending"
		return false
	}
	x.stamped = cn.useKernelTimestamps(x.c.stream && x.c.target.kernelTS)
	rec.Sent = x.clock.now()
	return true
}

// writeFailed closes the connection a write failed on and reports whether to retry
// on a fresh one; if not, the failure is recorded.
func (w *worker) writeFailed(x *exchange, err error, retryable bool) (retry bool) {
	x.cn.Close()
	rec := x.rec
	if x.ctx.Err() != nil {
		rec.Done = x.clock.now()
		rec.ErrorKind, rec.Error = errKind(x.ctx, err, x.total)
		return false
	}
	if !retryable {
		rec.Done = x.clock.now()
		rec.ErrorKind, rec.Error = record.ErrConnect, "loadgen: write request: "+err.Error()
		return false
	}
	return true
}

// readHead reads the response headers into w.resp.
func (w *worker) readHead(x *exchange) error {
	ctx, cn, c := x.ctx, x.cn, x.c
	// Cancellation interrupts blocked reads by moving the deadline into the past:
	// the connection watches the run's context; a request's own context (see
	// Config.CancelFraction) is watched for this request.
	x.stop = noStop
	if ctx.Done() != nil && ctx != cn.watch {
		x.stop = context.AfterFunc(ctx, cn.cancelReads)
	}
	resp := &w.resp
	resp.Reset()
	resp.StreamBody = c.stream
	if c.stream && c.idle > 0 {
		// A stream's headers come before the first token: the idle timeout bounds
		// the wait for them too (the total one still caps it). A non-streaming
		// answer is generated whole before its headers, so only the total bounds it.
		cn.setHeaderDeadline(time.Now().Add(c.idle), x.total)
	}
	return resp.Read(cn.br)
}

// receive records the response whose headers were read with err: an error status,
// a whole body, or an event stream.
func (w *worker) receive(x *exchange, err error) {
	rec := x.rec
	if x.cn.first > 0 {
		rec.FirstByte = x.cn.first
	}
	if x.stamped {
		rec.Clock = record.ClockKernel
	}
	if err != nil {
		rec.Done = x.clock.now()
		rec.ErrorKind, rec.Error = errKind(x.ctx, err, x.total)
		if rec.ErrorKind == record.ErrTimeout && rec.Error != "loadgen: total timeout" {
			rec.Error = "loadgen: idle timeout waiting for the response headers"
		}
		return
	}
	rec.Status = w.resp.StatusCode()
	switch {
	case rec.Status < 200 || rec.Status > 299:
		w.readFailure(x)
	case !x.c.stream || !isEventStream(&w.resp):
		w.readWhole(x)
	default:
		w.readStream(x)
	}
}

// readFailure records a non-2xx answer with the start of its body.
func (w *worker) readFailure(x *exchange) {
	rec, resp := x.rec, &w.resp
	body := w.readAll(resp, x.cn, x.c, x.total)
	rec.Done = x.clock.now()
	rec.ResponseBytes = len(body)
	rec.ErrorKind = record.ErrHTTPStatus
	rec.Error = fmt.Sprintf("loadgen: HTTP %d: %s", rec.Status, snippet(body))
	x.keep = !resp.ConnectionClose() && w.drained
}

// readWhole reads and parses a whole (non-event-stream) body.
func (w *worker) readWhole(x *exchange) {
	rec, resp := x.rec, &w.resp
	var body []byte
	if x.c.stream {
		body = w.readAll(resp, x.cn, x.c, x.total)
		if !w.drained {
			rec.Done = x.clock.now()
			rec.ErrorKind, rec.Error = errKind(x.ctx, w.readErr, x.total)
			return
		}
	} else {
		body = resp.Body()
	}
	rec.Done = x.clock.now()
	rec.ResponseBytes = len(body)
	x.keep = !resp.ConnectionClose()
	w.parseBody(body, x.c, rec, x.res)
	resp.ReleaseBody(keptBody)
}

// readStream timestamps every read of an event stream, then splits and parses its
// events until it ends.
func (w *worker) readStream(x *exchange) {
	cn := x.cn
	tr := &w.tr
	*tr = timedReader{ctx: x.ctx, r: w.resp.BodyStream(), c: cn, clock: x.clock, idle: x.c.idle, total: x.total}
	_ = cn.SetReadDeadline(x.total)
	cn.deadlineUnknown = true
	w.sse.Reset(tr)
	x.sawDone, x.prevRead = false, -1
	for {
		ev, err := w.sse.Next()
		if err != nil {
			w.streamEnded(x, err)
			return
		}
		w.event(x, ev)
	}
}

// streamEnded records how a stream ended: at EOF (a stream of OpenAI chunks must have
// sent [DONE] first) or with a read error.
func (w *worker) streamEnded(x *exchange, err error) {
	rec, resp := x.rec, &w.resp
	rec.Done = x.clock.now()
	rec.ResponseBytes = int(w.sse.Bytes())
	if err == io.EOF {
		if !x.sawDone && x.c.endpoint != EndpointResponses && x.c.endpoint != EndpointMessages && rec.ErrorKind == "" {
			rec.ErrorKind, rec.Error = record.ErrMalformed, "loadgen: stream ended without [DONE]"
		}
		x.keep = rec.ErrorKind == "" && !resp.ConnectionClose()
		_ = resp.CloseBodyStream()
		return
	}
	if rec.ErrorKind == "" || rec.ErrorKind == record.ErrMalformed {
		rec.ErrorKind, rec.Error = errKind(x.ctx, err, x.total)
	}
	_ = resp.CloseBodyStream()
}

// event parses one stream event and records its chunk.
func (w *worker) event(x *exchange, ev sse.Event) {
	rec := x.rec
	t := w.tr.last
	if string(ev.Data) == "[DONE]" {
		x.sawDone = true
		return
	}
	if x.sawDone {
		return
	}
	if err := w.parser.Parse(ev.Data, &w.chunk); err != nil {
		if rec.ErrorKind == "" {
			rec.ErrorKind, rec.Error = record.ErrMalformed, "loadgen: non-JSON event: "+snippet(ev.Data)
		}
		return
	}
	ch := &w.chunk
	if bad := errorEvent(ch, ev.Type, ev.Data); bad != "" && rec.ErrorKind == "" {
		rec.ErrorKind, rec.Error = record.ErrErrorBody, "loadgen: error event: "+snippet(ev.Data)
	}
	res := x.res
	res.add(ch.Text, ch.Reasoning)
	res.ends = append(res.ends, len(res.text))
	if x.c.firstOutput != nil && len(res.text) > 0 {
		x.c.firstOutput()
		x.c.firstOutput = nil
	}
	if len(ch.Text) > 0 && rec.FirstOutput == 0 {
		rec.FirstOutput = t
	}
	x.chunk(ch, t)
}

// chunk records one parsed chunk that arrived at t: its time (batched when it came in
// the same read as the previous one), finish reason and usage.
func (x *exchange) chunk(ch *openai.StreamChunk, t time.Duration) {
	rec, c := x.rec, x.c
	if x.cn.reads == x.prevRead && len(rec.Chunks) > 0 {
		// Same read as the previous event: that one's time is only an upper bound.
		rec.Chunks[len(rec.Chunks)-1].Batched = true
	}
	choices := ch.Choices > 0 || c.endpoint == EndpointMessages && string(ch.Type) == "content_block_delta"
	rec.Chunks = append(rec.Chunks, record.Chunk{T: t, Choices: choices})
	x.prevRead = x.cn.reads
	if ch.FinishReason != nil {
		rec.FinishReason = string(ch.FinishReason)
	}
	if c.endpoint == EndpointMessages {
		messagesUsage(ch, rec)
	} else if ch.HasUsage {
		rec.UsagePromptTokens, rec.UsageCompletionTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
	}
	if ch.UsageReasoning > 0 {
		rec.UsageReasoningTokens = ch.UsageReasoning
	}
}

// noStop stands for context.AfterFunc's stop when the context cannot be cancelled.
func noStop() bool { return true }

// cancelReads makes blocked and future reads fail at once (the deadline moves into
// the past); the connection is then closed, never reused.
func (c *conn) cancelReads() {
	_ = c.SetDeadline(time.Unix(1, 0))
}

// errorEvent reports an in-stream error ("error" event type or Responses "error"/"response.failed").
func errorEvent(ch *openai.StreamChunk, typ, data []byte) string {
	switch string(typ) {
	case "error":
		return "error"
	}
	// vLLM, SGLang and OpenAI send {"error": {...}} as a data event.
	if ch.Choices == 0 && !ch.HasUsage && len(ch.Text) == 0 && bytes.HasPrefix(bytes.TrimSpace(data), []byte(`{"error"`)) {
		return "error"
	}
	switch string(ch.Type) {
	case "error", "response.failed":
		return string(ch.Type)
	}
	return ""
}

func isEventStream(resp *fasthttp.Response) bool {
	return strings.HasPrefix(string(resp.Header.ContentType()), "text/event-stream")
}

// readAll reads a streamed (or buffered) body whole; w.drained reports success.
func (w *worker) readAll(resp *fasthttp.Response, cn *conn, c *call, total time.Time) []byte {
	w.drained, w.readErr = true, nil
	if !resp.StreamBody {
		return resp.Body()
	}
	w.buf = w.buf[:0]
	r := resp.BodyStream()
	for {
		if len(w.buf) == cap(w.buf) {
			w.buf = append(w.buf, 0)[:len(w.buf)]
		}
		n, err := r.Read(w.buf[len(w.buf):cap(w.buf)])
		w.buf = w.buf[:len(w.buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			w.drained, w.readErr = false, err
			break
		}
	}
	_ = resp.CloseBodyStream()
	return w.buf
}

func snippet(b []byte) string {
	const max = 200
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// parseBody extracts text and usage from a non-streaming response body.
func (w *worker) parseBody(body []byte, c *call, rec *record.Client, res *result) {
	if err := w.parser.Parse(body, &w.chunk); err != nil {
		rec.ErrorKind, rec.Error = record.ErrMalformed, "loadgen: response is not JSON: "+snippet(body)
		return
	}
	ch := &w.chunk
	if errorEvent(ch, nil, body) != "" {
		// A 2xx whose body is an error object: the server failed the request but said
		// so in the body (seen from proxies and some servers), as a stream's error event.
		rec.ErrorKind, rec.Error = record.ErrErrorBody, "loadgen: error body with HTTP "+strconv.Itoa(rec.Status)+": "+snippet(body)
		return
	}
	text, reasoning := ch.Text, ch.Reasoning
	switch {
	case c.endpoint == EndpointResponses && len(text) == 0:
		text = []byte(responsesOutputText(body))
	case c.endpoint == EndpointMessages:
		t, r := messagesBody(body)
		text, reasoning = []byte(t), []byte(r)
	}
	res.add(text, reasoning)
	res.ends = append(res.ends, len(res.text))
	if len(text) > 0 {
		rec.FirstOutput = rec.Done
	}
	rec.Chunks = append(rec.Chunks, record.Chunk{T: rec.Done, Choices: ch.Choices > 0 || c.endpoint == EndpointMessages})
	if ch.FinishReason != nil {
		rec.FinishReason = string(ch.FinishReason)
	}
	if ch.HasUsage {
		rec.UsagePromptTokens, rec.UsageCompletionTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
	}
	rec.UsageReasoningTokens = max(ch.UsageReasoning, 0)
}

// responsesOutputText extracts the text of a non-streaming Responses API body
// (output[].content[] parts of type "output_text"), concatenated.
func responsesOutputText(body []byte) string {
	var r struct {
		Output []struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	if json.Unmarshal(body, &r) != nil {
		return ""
	}
	var sb strings.Builder
	for _, o := range r.Output {
		for _, c := range o.Content {
			if c.Type == "output_text" {
				sb.WriteString(c.Text)
			}
		}
	}
	return sb.String()
}
