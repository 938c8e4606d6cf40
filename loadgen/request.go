package loadgen

// Request writing: the headers every request of a run shares, rendered once, and one
// request written with one system call (bodies are built in body.go); the run clock
// requests are timed with.

import (
	"net"
	"strconv"
	"strings"
	"time"
)

// inlineBody is the largest body copied behind the headers into one buffer; a larger
// one is written from where it is, with the headers, in one writev.
const inlineBody = 64 << 10

// headerBlock is the part of the request headers every request of a run shares,
// rendered once: the configured headers (and API key), and which of the headers
// loadgen sets itself they replace (a configured header wins, as with Header.Set),
// except a body's own Content-Type (a multipart body's, which names its boundary).
type headerBlock struct {
	lines               []byte // "Name: value\r\n" each, but Content-Type
	ctype               []byte // the configured Content-Type line; nil = none
	host, accept, reqID bool
	session             string // Config.SessionHeader's name; "" = none
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
			h.ctype = append(append(append(append(h.ctype[:0], k...), ": "...), v...), "\r\n"...)
			continue
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
	switch {
	case c.ctype != "": // the body's own type: a configured one would lose its boundary
		dst = append(append(append(dst, "Content-Type: "...), c.ctype...), "\r\n"...)
	case h.ctype != nil:
		dst = append(dst, h.ctype...)
	default:
		dst = append(dst, "Content-Type: application/json\r\n"...)
	}
	if c.stream && !h.accept {
		dst = append(dst, "Accept: text/event-stream\r\n"...)
	}
	if c.requestID != "" && !h.reqID {
		dst = append(append(append(dst, "X-Request-Id: "...), c.requestID...), "\r\n"...)
	}
	if h.session != "" && c.session != "" {
		dst = append(append(append(append(dst, h.session...), ": "...), c.session...), "\r\n"...)
	}
	dst = append(dst, h.lines...)
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(c.body)), 10)
	return append(dst, "\r\n\r\n"...)
}

// writeRequest writes c's request to cn in one system call (on plain TCP): the
// headers and body rendered into w.wbuf, or the headers and a large body in one writev.
// A non-streaming request on a connection that can (see sendWaiter) is written and
// then waited on until the answer can be read, sparing the read that would find
// nothing yet. now is the run-clock time of the send; written is when the request was
// written.
func (w *worker) writeRequest(cn *conn, c *call, now time.Duration) (written time.Duration, err error) {
	w.wbuf = appendHead(w.wbuf[:0], c)
	if len(c.body) > inlineBody {
		bufs := net.Buffers{w.wbuf, c.body}
		_, err = bufs.WriteTo(cn.Conn)
		return cn.clock.now(), err
	}
	w.wbuf = append(w.wbuf, c.body...)
	if sw := cn.sendWaiter(c, now); sw != nil {
		rest, err := sw.writeThenWait(w.wbuf, cn.clock)
		if err != nil || len(rest) == 0 {
			return sw.written, err
		}
		_, err = cn.Conn.Write(rest)
		return cn.clock.now(), err
	}
	_, err = cn.Conn.Write(w.wbuf)
	return cn.clock.now(), err
}

// answerWait bounds the read of an answer after a failed write (see answeredAnyway).
const answerWait = time.Second

// answeredAnyway reads a response the server sent before it stopped reading the
// request, true if one arrived (in w.resp).
func (w *worker) answeredAnyway(cn *conn, c *call) bool {
	w.plain = plainAnswer{}
	w.resp.Reset()
	w.resp.StreamBody = c.stream
	_ = cn.Conn.SetReadDeadline(time.Now().Add(answerWait))
	return w.resp.Read(cn.br) == nil
}

// runClock is the run's monotonic clock: durations since start.
type runClock struct {
	start time.Time
	self  *selfMeter // the client's self-measurement; nil in tests that build a clock alone
}

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
	w         *worker // the worker state to perform it with (httpSender)
	target    *target
	body      []byte
	requestID string
	session   string // the session header's value (Config.SessionHeader); "" = none
	// own, when set, is the session's own connection (ReuseSticky): the request takes
	// it when there is one and leaves its connection there afterwards, not in the pool;
	// noReuse closes the connection after the request (ReuseNever).
	own     **conn
	noReuse bool
	stream  bool
	api     adapter       // the API kind: how the answer is read
	ctype   string        // the body's Content-Type; "" = application/json
	hdr     *headerBlock  // shared headers; nil = none
	timeout time.Duration // total; 0 = none
	idle    time.Duration // between chunks once the first byte arrived; 0 = none
	// firstOutput, if set, is called once, at the first chunk that carries output
	// (Config.PrefillConcurrency releases its slot there); the caller clears it.
	firstOutput func()
	// pre is the connection an open-loop request took before its due time (reused:
	// from the pool), or preErr why it could not (see prepareSend); gate is released
	// once the request is written.
	pre       *conn
	preReused bool
	preErr    error
	gate      *sendGate
}
