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

// do performs c and fills rec (timestamps, status, error, chunks, usage) and res.
// It never returns an error: every failure is recorded in rec.
func (w *worker) do(ctx context.Context, clock *runClock, c *call, rec *record.Client, res *result) {
	rec.UsagePromptTokens, rec.UsageCompletionTokens = -1, -1
	var totalDeadline time.Time
	if c.timeout > 0 {
		totalDeadline = time.Now().Add(c.timeout)
	}
	var (
		cn      *conn
		reused  bool
		stamped bool
		err     error
	)
	var (
		stop func() bool
		resp = &w.resp
	)
	for attempt := 0; ; attempt++ {
		cn, reused, err = c.target.get(ctx, clock, totalDeadline)
		if err != nil {
			rec.Sent = clock.now()
			rec.Done = rec.Sent
			if ctx.Err() != nil {
				rec.ErrorKind, rec.Error = record.ErrCancelled, "loadgen: cancelled before connecting"
			} else {
				rec.ErrorKind, rec.Error = record.ErrConnect, "loadgen: dial "+c.target.addr+": "+err.Error()
			}
			return
		}
		cn.armed, cn.first = true, 0
		cn.setTotalDeadline(totalDeadline, c.timeout)
		if ctx.Err() != nil {
			// Cancelled, perhaps before the deadline just set replaced the one in the
			// past that cancellation set (a later cancellation sets it again).
			cn.Close()
			rec.Sent = clock.now()
			rec.Done = rec.Sent
			rec.ErrorKind, rec.Error = record.ErrCancelled, "loadgen: cancelled before sending"
			return
		}
		stamped = cn.useKernelTimestamps(c.stream && c.target.kernelTS)
		rec.Sent = clock.now()
		err = w.writeRequest(cn.Conn, c)
		if err != nil && ctx.Err() == nil && (!reused || attempt > 0) && w.answeredAnyway(cn, c) {
			// The server answered, then cut the write short (a 413 for a body over its
			// limit): record its answer, not a connect error.
			err, stop = nil, noStop
			break
		}
		if err != nil {
			cn.Close()
			if ctx.Err() != nil {
				rec.Done = clock.now()
				rec.ErrorKind, rec.Error = errKind(ctx, err, totalDeadline)
				return
			}
			if !reused || attempt > 0 {
				rec.Done = clock.now()
				rec.ErrorKind, rec.Error = record.ErrConnect, "loadgen: write request: "+err.Error()
				return
			}
			continue // a stale keep-alive connection: retry once on a fresh one
		}
		// Cancellation interrupts blocked reads by moving the deadline into the past:
		// the connection watches the run's context; a request's own context (see
		// Config.CancelFraction) is watched for this request.
		stop = noStop
		if ctx.Done() != nil && ctx != cn.watch {
			stop = context.AfterFunc(ctx, cn.cancelReads)
		}
		resp.Reset()
		resp.StreamBody = c.stream
		if c.stream && c.idle > 0 {
			// A stream's headers come before the first token: the idle timeout bounds
			// the wait for them too (the total one still caps it). A non-streaming
			// answer is generated whole before its headers, so only the total bounds it.
			cn.setHeaderDeadline(time.Now().Add(c.idle), totalDeadline)
		}
		err = resp.Read(cn.br)
		if err != nil && reused && attempt == 0 && cn.first == 0 && ctx.Err() == nil && isClosed(err) {
			// The server closed the idle connection as we reused it (nothing came
			// back): retry once on a fresh connection, as net/http does.
			stop()
			cn.Close()
			continue
		}
		break
	}
	keep := false
	defer func() {
		if stop() && keep && ctx.Err() == nil {
			c.target.put(cn)
		} else {
			cn.Close()
		}
	}()
	if cn.first > 0 {
		rec.FirstByte = cn.first
	}
	if stamped {
		rec.Clock = record.ClockKernel
	}
	if err != nil {
		rec.Done = clock.now()
		rec.ErrorKind, rec.Error = errKind(ctx, err, totalDeadline)
		if rec.ErrorKind == record.ErrTimeout && rec.Error != "loadgen: total timeout" {
			rec.Error = "loadgen: idle timeout waiting for the response headers"
		}
		return
	}
	rec.Status = resp.StatusCode()
	if rec.Status < 200 || rec.Status > 299 {
		body := w.readAll(resp, cn, c, totalDeadline)
		rec.Done = clock.now()
		rec.ResponseBytes = len(body)
		rec.ErrorKind = record.ErrHTTPStatus
		rec.Error = fmt.Sprintf("loadgen: HTTP %d: %s", rec.Status, snippet(body))
		keep = !resp.ConnectionClose() && w.drained
		return
	}
	if !c.stream || !isEventStream(resp) {
		var body []byte
		if c.stream {
			body = w.readAll(resp, cn, c, totalDeadline)
			if !w.drained {
				rec.Done = clock.now()
				rec.ErrorKind, rec.Error = errKind(ctx, w.readErr, totalDeadline)
				return
			}
		} else {
			body = resp.Body()
		}
		rec.Done = clock.now()
		rec.ResponseBytes = len(body)
		keep = !resp.ConnectionClose()
		w.parseBody(body, c, rec, res)
		resp.ReleaseBody(keptBody)
		return
	}

	// Streaming: timestamp every read, then split and parse events.
	tr := &w.tr
	*tr = timedReader{ctx: ctx, r: resp.BodyStream(), c: cn, clock: clock, idle: c.idle, total: totalDeadline}
	_ = cn.SetReadDeadline(totalDeadline)
	cn.deadlineUnknown = true
	w.sse.Reset(tr)
	sawDone := false
	prevRead := -1
	for {
		ev, err := w.sse.Next()
		if err != nil {
			rec.Done = clock.now()
			rec.ResponseBytes = int(w.sse.Bytes())
			if err == io.EOF {
				if !sawDone && c.endpoint != EndpointResponses && c.endpoint != EndpointMessages && rec.ErrorKind == "" {
					rec.ErrorKind, rec.Error = record.ErrMalformed, "loadgen: stream ended without [DONE]"
				}
				keep = rec.ErrorKind == "" && !resp.ConnectionClose()
				_ = resp.CloseBodyStream()
				return
			}
			if rec.ErrorKind == "" || rec.ErrorKind == record.ErrMalformed {
				rec.ErrorKind, rec.Error = errKind(ctx, err, totalDeadline)
			}
			_ = resp.CloseBodyStream()
			return
		}
		t := tr.last
		if string(ev.Data) == "[DONE]" {
			sawDone = true
			continue
		}
		if sawDone {
			continue
		}
		if err := w.parser.Parse(ev.Data, &w.chunk); err != nil {
			if rec.ErrorKind == "" {
				rec.ErrorKind, rec.Error = record.ErrMalformed, "loadgen: non-JSON event: "+snippet(ev.Data)
			}
			continue
		}
		ch := &w.chunk
		if bad := errorEvent(ch, ev.Type, ev.Data); bad != "" && rec.ErrorKind == "" {
			rec.ErrorKind, rec.Error = record.ErrErrorBody, "loadgen: error event: "+snippet(ev.Data)
		}
		res.add(ch.Text, ch.Reasoning)
		res.ends = append(res.ends, len(res.text))
		if c.firstOutput != nil && len(res.text) > 0 {
			c.firstOutput()
			c.firstOutput = nil
		}
		if len(ch.Text) > 0 && rec.FirstOutput == 0 {
			rec.FirstOutput = t
		}
		if cn.reads == prevRead && len(rec.Chunks) > 0 {
			// Same read as the previous event: that one's time is only an upper bound.
			rec.Chunks[len(rec.Chunks)-1].Batched = true
		}
		choices := ch.Choices > 0 || c.endpoint == EndpointMessages && string(ch.Type) == "content_block_delta"
		rec.Chunks = append(rec.Chunks, record.Chunk{T: t, Choices: choices})
		prevRead = cn.reads
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
