package loadgen

// Response reading: one exchange per request on a worker (connect, write, read the
// headers, then an error status, a whole body or an event stream), timestamping every
// read.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/record"
)

// result is what the exchange produced, before token counting.
type result struct {
	text      []byte // generated text (content then reasoning appended per chunk)
	ends      []int  // per chunk: end offset of its text in text
	reasoning []byte // the reasoning part of text, alone
	content   []byte // the content part of text, alone (kept only once there is reasoning)
	tool      []byte // the tool calls' argument text, alone (also in text and content)
	calls     []toolCall
	callAt    map[int]int // by tool call index, the latest of calls with it (tools.go)
	images    int         // images in a whole answer (image generation)
	// badCached: the answer's usage carried a cached_tokens that is not a whole number
	// >= 0, which was ignored (the run warns once).
	badCached bool
	// badServer names the first field of the server's per-request data (vLLM's
	// metrics, llama.cpp's timings, SGLang's meta_info) of the wrong type, which was
	// ignored (the run warns once); "" when none.
	badServer string
}

// usageCached records ch's usage.prompt_tokens_details.cached_tokens in rec, or notes
// in res one of the wrong type.
func usageCached(ch *openai.StreamChunk, rec *record.Client, res *result) {
	switch ch.Cached {
	case openai.CachedKnown:
		rec.CachedTokens = record.Some(ch.UsageCached)
	case openai.CachedBad:
		res.badCached = true
	}
}

// serverData records the server's per-request data ch carried in rec (the latest
// chunk's: llama.cpp may repeat its timings on every chunk), or notes in res a field
// of the wrong type, which the parser left out.
func serverData(ch *openai.StreamChunk, rec *record.Client, res *result) {
	if ch.Server != nil {
		rec.Server = *ch.Server
	}
	if ch.ServerBad != "" && res.badServer == "" {
		res.badServer = ch.ServerBad
	}
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

// cancelled is a record's error for a request ctx cancelled at the stage when names
// ("" once sent): it always says why (the context's cause, such as an abort's reason).
func cancelled(ctx context.Context, when string) string {
	msg := "loadgen: cancelled"
	if when != "" {
		msg += " " + when
	}
	if cause := context.Cause(ctx); cause != nil {
		msg += ": " + cause.Error()
	} else if expired(ctx) {
		msg += ": " + context.DeadlineExceeded.Error()
	}
	return msg
}

// errKind classifies err for a record: cancellation wins, then timeouts.
func errKind(ctx context.Context, err error, totalDeadline time.Time) (string, string) {
	if ctx.Err() != nil {
		return record.ErrCancelled, cancelled(ctx, "")
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
	plain   plainAnswer // the answer, when readPlain read it
	drained bool
	readErr error
	x       exchange // the exchange in progress
	// aheadDone receives the open-loop send loop's token when it has written a
	// request of this worker's (see sendGate).
	aheadDone chan struct{}
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
	total   time.Time     // the total deadline (zero: none)
	begin   time.Duration // when the connection step began (the blocked phase's start)
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
	x := w.begin(ctx, clock, c, rec, res)
	ok, err := w.send(x)
	if !ok {
		return
	}
	defer x.release()
	w.receive(x, err)
}

// begin starts the exchange of c on w (w.x): no usage counted yet, the connection
// step beginning now, and the total deadline.
func (w *worker) begin(ctx context.Context, clock *runClock, c *call, rec *record.Client, res *result) *exchange {
	rec.UsagePromptTokens, rec.UsageCompletionTokens = -1, -1
	w.x = exchange{ctx: ctx, clock: clock, c: c, rec: rec, res: res, begin: clock.now()}
	x := &w.x
	if c.timeout > 0 {
		// On the run clock (monotonic): no second clock reading.
		x.total = clock.start.Add(x.begin + c.timeout)
	}
	return x
}

// release returns the connection to the pool when the response left it reusable,
// and closes it otherwise.
func (x *exchange) release() {
	switch {
	case !x.stop() || !x.keep || x.ctx.Err() != nil || x.c.noReuse:
		x.cn.Close()
	case x.c.own != nil: // the session keeps it (ReuseSticky)
		x.cn.idleFrom = x.rec.Done
		if old := *x.c.own; old != nil && old != x.cn {
			old.Close()
		}
		*x.c.own = x.cn
	default:
		x.cn.idleFrom = x.rec.Done
		x.c.target.put(x.cn)
	}
}

// send connects, writes the request and reads the response headers, retrying once on
// a fresh connection when a reused keep-alive one turns out to be stale. ok is false
// when the exchange ended, recorded, before a response; err is the header read's.
func (w *worker) send(x *exchange) (ok bool, err error) {
	attempt := 0
	if x.c.gate != nil {
		// Prepared ahead: the open loop's send loop writes it (see sendAhead).
		var retry bool
		if ok, err, retry = w.sendAhead(x); !retry {
			return ok, err
		}
		attempt = 1 // a stale connection: one retry, on a fresh one
	}
	for ; ; attempt++ {
		if !w.connect(x) {
			return false, nil
		}
		retryable := x.reused && attempt == 0
		w.watch(x)
		written, err := w.writeRequest(x.cn, x.c, x.rec.Sent)
		if err != nil {
			if x.ctx.Err() == nil && !retryable && w.answeredAnyway(x.cn, x.c) {
				// The server answered, then cut the write short (a 413 for a body over
				// its limit): record its answer, not a connect error.
				return true, nil
			}
			x.stop()
			if w.writeFailed(x, err, retryable) {
				continue // a stale keep-alive connection: retry once on a fresh one
			}
			return false, nil
		}
		x.rec.Written = written
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
	cn, reused, err := x.c.conn(x.ctx, x.clock, x.total)
	if err != nil {
		x.connectFailed(err)
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
		rec.ErrorKind, rec.Error = record.ErrCancelled, cancelled(x.ctx, "before sending")
		return false
	}
	x.stamped = cn.useKernelTimestamps(x.c.stream && x.c.target.kernelTS)
	x.connected(reused, cn.dialed)
	return true
}

// connectFailed records that no connection could be had for x (err says why).
func (x *exchange) connectFailed(err error) {
	rec := x.rec
	rec.Sent = x.clock.now()
	rec.Done = rec.Sent
	if x.ctx.Err() != nil || expired(x.ctx) {
		rec.ErrorKind, rec.Error = record.ErrCancelled, cancelled(x.ctx, "before connecting")
	} else {
		rec.ErrorKind, rec.Error = record.ErrConnect, "loadgen: dial "+x.c.target.addr+": "+err.Error()
	}
}

// connected records that x has its connection, pooled (reused) or opened as dialed
// says: the send time and the phases before it.
func (x *exchange) connected(reused bool, dialed dialTimes) {
	rec := x.rec
	rec.Sent = x.clock.now()
	rec.ConnReused = reused
	rec.DNSLookup, rec.Connecting, rec.TLSHandshaking = 0, 0, 0
	if !reused {
		rec.DNSLookup, rec.Connecting, rec.TLSHandshaking = dialed.dns, dialed.connect, dialed.tls
	}
	rec.Blocked = max(rec.Sent-x.begin-rec.DNSLookup-rec.Connecting, 0)
}

// expired reports a context whose deadline has passed, though its timer may not have
// fired yet: a dial bounded by that deadline can fail (i/o timeout) just before the
// context reports itself done, and the request was cancelled all the same.
func expired(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
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

// watch makes the cancellation of x's context interrupt x's blocked writes and reads,
// from before the request is written (the write may wait for the answer, see
// sendWaiter): by moving the deadline into the past. The connection watches the run's
// context; a request's own context (see Config.CancelFraction) is watched for this
// request, until x.stop.
func (w *worker) watch(x *exchange) {
	x.stop = noStop
	if x.ctx.Done() != nil && x.ctx != x.cn.watch {
		x.stop = context.AfterFunc(x.ctx, x.cn.cancelReads)
	}
}

// readHead reads the response headers into w.resp, or a plain non-streaming answer
// whole into w.plain (see readPlain).
func (w *worker) readHead(x *exchange) error {
	if c := x.c; c.stream && c.idle > 0 {
		// A stream's headers come before the first token: the idle timeout bounds
		// the wait for them too (the total one still caps it). A non-streaming
		// answer is generated whole before its headers, so only the total bounds it.
		x.cn.setHeaderDeadline(time.Now().Add(c.idle), x.total)
	}
	return w.readHeadNow(x)
}

// readHeadNow is readHead with the connection's deadlines as they are.
func (w *worker) readHeadNow(x *exchange) error {
	cn, c := x.cn, x.c
	w.plain = plainAnswer{}
	if !c.stream {
		if handled, err := w.readPlain(cn.br); handled {
			return err
		}
	}
	resp := &w.resp
	resp.Reset()
	resp.StreamBody = c.stream
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
	rec.Status = w.status()
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
	x.keep = !w.connectionClose() && w.drained
}

// readWhole reads and parses a whole (non-event-stream) body.
func (w *worker) readWhole(x *exchange) {
	rec, resp := x.rec, &w.resp
	body := w.readAll(resp, x.cn, x.c, x.total) // a plain or buffered body: there already
	if !w.drained {
		rec.Done = x.clock.now()
		rec.ErrorKind, rec.Error = errKind(x.ctx, w.readErr, x.total)
		return
	}
	rec.Done = x.clock.now()
	rec.ResponseBytes = len(body)
	x.keep = !w.connectionClose()
	w.parseBody(body, x.c, rec, x.res)
	if !w.plain.ok {
		resp.ReleaseBody(keptBody)
	}
}

// status is the answer's status code.
func (w *worker) status() int {
	if w.plain.ok {
		return w.plain.status
	}
	return w.resp.StatusCode()
}

// connectionClose reports an answer that closes the connection after it.
func (w *worker) connectionClose() bool {
	if w.plain.ok {
		return w.plain.close
	}
	return w.resp.ConnectionClose()
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

// streamEnded records how a stream ended: at EOF (a stream of a kind that ends with
// [DONE] must have sent it first) or with a read error.
func (w *worker) streamEnded(x *exchange, err error) {
	rec, resp := x.rec, &w.resp
	rec.Done = x.clock.now()
	rec.ResponseBytes = int(w.sse.Bytes())
	if err == io.EOF {
		if !x.sawDone && x.c.api.endsWithDone() && rec.ErrorKind == "" {
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
	if sse.IsDone(ev.Data) {
		x.sawDone = true
		return
	}
	if x.sawDone {
		return
	}
	if err := x.c.api.parseEvent(&w.parser, ev.Type, ev.Data, &w.chunk); err != nil {
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
	if res.addTools(ch) && rec.FirstToolCall == 0 {
		rec.FirstToolCall = t
	}
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
// the same read as the previous one), finish reason and usage (as its kind reads it).
func (x *exchange) chunk(ch *openai.StreamChunk, t time.Duration) {
	rec, c := x.rec, x.c
	if x.cn.reads == x.prevRead && len(rec.Chunks) > 0 {
		// Same read as the previous event: that one's time is only an upper bound.
		rec.Chunks[len(rec.Chunks)-1].Batched = true
	}
	choices := c.api.event(ch, rec)
	rec.Chunks = append(rec.Chunks, record.Chunk{T: t, Choices: choices})
	x.prevRead = x.cn.reads
	if ch.FinishReason != nil {
		rec.FinishReason = finishReason(ch.FinishReason)
	}
	if ch.UsageReasoning > 0 {
		rec.UsageReasoningTokens = ch.UsageReasoning
	}
	usageCached(ch, rec, x.res)
	serverData(ch, rec, x.res)
}

// finishReason is b as a string, without allocating for the common reasons.
func finishReason(b []byte) string {
	switch string(b) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "end_turn":
		return "end_turn"
	case "max_tokens":
		return "max_tokens"
	case "tool_calls":
		return "tool_calls"
	}
	return string(b)
}

// noStop stands for context.AfterFunc's stop when the context cannot be cancelled.
func noStop() bool { return true }

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

// readAll reads a streamed, buffered or plain (see readPlain) body whole; w.drained
// reports success.
func (w *worker) readAll(resp *fasthttp.Response, cn *conn, c *call, total time.Time) []byte {
	w.drained, w.readErr = true, nil
	if w.plain.ok {
		return w.plain.body
	}
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

// parseBody extracts text and usage from a non-streaming response body, as its kind reads it.
func (w *worker) parseBody(body []byte, c *call, rec *record.Client, res *result) {
	res.images = 0
	content, choices, err := c.api.parseWhole(&w.parser, body, &w.chunk, res)
	rec.Images = res.images
	if err != nil {
		rec.ErrorKind, rec.Error = record.ErrMalformed, "loadgen: response is not JSON: "+snippet(body)
		return
	}
	ch := &w.chunk
	if errorEvent(ch, nil, body) != "" {
		// A 2xx whose body is an error object: the server failed the request but said
		// so in the body (seen from proxies and some servers), as a stream's error event.
		rec.ErrorKind, rec.Error = record.ErrErrorBody, "loadgen: error body with HTTP "+strconv.Itoa(rec.Status)+": "+snippet(body)
		res.text, res.reasoning, res.content = res.text[:0], res.reasoning[:0], res.content[:0]
		return
	}
	res.ends = append(res.ends, len(res.text))
	if content {
		rec.FirstOutput = rec.Done
	}
	rec.Chunks = append(rec.Chunks, record.Chunk{T: rec.Done, Choices: choices})
	if ch.FinishReason != nil {
		rec.FinishReason = finishReason(ch.FinishReason)
	}
	if ch.HasUsage {
		rec.UsagePromptTokens, rec.UsageCompletionTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
	}
	rec.UsageReasoningTokens = max(ch.UsageReasoning, 0)
	usageCached(ch, rec, res)
	serverData(ch, rec, res)
}
