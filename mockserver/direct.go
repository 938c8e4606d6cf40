package mockserver

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// A stream's body goes out through a streamOut. send queues one piece of the body (one
// SSE chunk, or several tokens' worth when tokens per chunk > 1); flush puts what is
// queued on the wire. The pacer flushes right before it sleeps, so a paced chunk leaves
// the moment its deadline passes, while chunks that are already due (zero latency, or a
// pacer running behind) share one write — as fasthttp's buffered writer coalesces them.
// end queues the last piece, ends the body and flushes.
type streamOut interface {
	send(p []byte) error
	flush() error
	end(p []byte) error
}

// coalesceLimit is how many queued bytes make send flush by itself. It only matters
// for chunks already due (zero latency, or a pacer behind): a paced chunk is flushed
// before the pacer sleeps. At 4 KiB a zero-latency stream spent most of its CPU in
// write system calls and their wake-ups of the reader (100 streams on 2 cores: 1.0–1.2M
// tokens/s, 0.73–0.95 × the minimal SSE loop); at 16 KiB 2.2–2.5M, 1.5–1.6 ×, and
// larger writes gained nothing more (bench/mock BenchmarkStream, docs/performance.md).
const coalesceLimit = 16 << 10

// pipeOut is fasthttp's body-stream writer: the handler's writer goroutine fills a pipe
// that the connection goroutine copies to the socket. It serves what directOut cannot
// (connections that are not TCP).
type pipeOut struct{ w *bufio.Writer }

func (o pipeOut) send(p []byte) error {
	_, err := o.w.Write(p)
	return err
}

func (o pipeOut) flush() error { return o.w.Flush() }

func (o pipeOut) end(p []byte) error {
	if err := o.send(p); err != nil {
		return err
	}
	return o.w.Flush()
}

// directOut writes an HTTP/1.1 chunked response straight to the connection the stream
// took over (see [Server.streamDirect]), from the goroutine that paces it: a paced
// token wakes one server goroutine instead of two and reaches the socket with one
// write system call. The response header goes out with the first write.
type directOut struct {
	c   net.Conn
	buf []byte // header (until the first write) and queued chunks
	err error
	raw bool // HTTP/1.0: no chunked framing; the body ends when the connection closes
}

func (o *directOut) frame(p []byte) {
	if len(p) == 0 {
		return
	}
	if o.raw {
		o.buf = append(o.buf, p...)
		return
	}
	o.buf = strconv.AppendUint(o.buf, uint64(len(p)), 16)
	o.buf = append(o.buf, "\r\n"...)
	o.buf = append(o.buf, p...)
	o.buf = append(o.buf, "\r\n"...)
}

func (o *directOut) send(p []byte) error {
	if o.err != nil {
		return o.err
	}
	o.frame(p)
	if len(o.buf) >= coalesceLimit {
		return o.flush()
	}
	return nil
}

func (o *directOut) flush() error {
	if o.err != nil || len(o.buf) == 0 {
		return o.err
	}
	_, o.err = o.c.Write(o.buf)
	o.buf = o.buf[:0]
	return o.err
}

func (o *directOut) end(p []byte) error {
	if o.err != nil {
		return o.err
	}
	o.frame(p)
	if !o.raw {
		o.buf = append(o.buf, "0\r\n\r\n"...)
	}
	return o.flush()
}

// directOK reports whether a stream can take its connection over: a TCP connection.
// HTTP/1.1 clients get a chunked body; HTTP/1.0 ones, which cannot read chunked framing,
// a close-delimited one.
func directOK(ctx *fasthttp.RequestCtx) bool {
	switch ctx.Conn().(type) {
	case *net.TCPConn, *handedBack:
		return true
	}
	return false
}

// streamDirect answers a streaming request by taking its connection over (fasthttp's
// hijack, with the connection kept): run writes the body through a directOut, and when
// it is done the connection goes back to fasthttp for the client's next request
// (keep-alive), unless the client asked to close, the stream was cut, or the server is
// shutting down.
func (s *Server) streamDirect(ctx *fasthttp.RequestCtx, run func(out streamOut) (reusable bool)) {
	ctx.Response.Header.SetServer(serverName)
	http10 := !ctx.Request.Header.IsHTTP11()
	keep := !http10 && !ctx.Request.Header.ConnectionClose()
	if http10 {
		ctx.Response.Header.SetContentLength(-2) // no Content-Length, no Transfer-Encoding
	} else {
		ctx.Response.Header.SetContentLength(-1)
	}
	if !keep {
		ctx.Response.Header.SetConnectionClose()
	}
	bp := bufPool.Get().(*[]byte)
	head := ctx.Response.Header.AppendBytes((*bp)[:0])
	ctx.HijackSetNoResponse(true)
	// fasthttp drops a hijack whose connection fails between the handler and the
	// takeover (a flush or SetDeadline error on a connection the client or a shutdown
	// sweep closed). The stream must still end and hand in its record, or shutdown
	// waits for it for the whole grace period: the connection's StateClosed runs it
	// against a dead output instead (see Server.connState). Whichever comes first wins.
	raw := ctx.Conn()
	s.pending.Store(raw, run)
	ctx.Hijack(func(hc net.Conn) {
		if _, mine := s.pending.LoadAndDelete(raw); !mine {
			hc.Close()
			return
		}
		s.live.add(hc)
		defer s.live.remove(hc)
		out := &directOut{c: hc, buf: head, raw: http10}
		reusable := run(out)
		*bp = out.buf[:0]
		bufPool.Put(bp)
		if !reusable || out.err != nil || !keep || s.closing.Load() {
			hc.Close()
			return
		}
		next, err := handBack(hc)
		if err != nil {
			hc.Close()
			return
		}
		s.live.swap(hc, next)
		defer s.live.remove(next)
		_ = s.fs.ServeConn(next)
	})
}

// serverName is the Server header of every response.
const serverName = "perfgate-mock"

// handedBack is every connection the server accepts (see [guardListener]), and what a
// stream gives back to fasthttp. It carries the request bytes fasthttp had read ahead
// before the stream took the connection (a pipelining client), and whether fasthttp is
// waiting for the next request on it (idle), so that shutdown can close it at once:
// fasthttp itself would treat it as new, and so busy, for five seconds. Closing it
// releases its place under Config.MaxConnections, once.
type handedBack struct {
	*net.TCPConn
	rest    []byte
	idle    atomic.Bool
	release func() // nil for connections not from the guard listener
	closed  atomic.Bool
}

func (c *handedBack) Close() error {
	if c.closed.CompareAndSwap(false, true) && c.release != nil {
		c.release()
	}
	return c.TCPConn.Close()
}

func (c *handedBack) Read(p []byte) (int, error) {
	if len(c.rest) > 0 {
		n := copy(p, c.rest)
		c.rest = c.rest[n:]
		return n, nil
	}
	return c.TCPConn.Read(p)
}

// connState follows fasthttp's view of handed-back connections, and ends a stream
// whose hijack fasthttp dropped when its connection closed.
func (s *Server) connState(c net.Conn, st fasthttp.ConnState) {
	if hb, ok := c.(*handedBack); ok {
		hb.idle.Store(st == fasthttp.StateIdle)
	}
	if st == fasthttp.StateClosed {
		if run, ok := s.pending.LoadAndDelete(c); ok {
			run.(func(streamOut) bool)(deadOut{})
		}
	}
}

// deadOut is the output of a stream whose connection was gone before it started: every
// write fails, so the stream records the client as gone.
type deadOut struct{}

func (deadOut) send([]byte) error { return net.ErrClosed }
func (deadOut) flush() error      { return net.ErrClosed }
func (deadOut) end([]byte) error  { return net.ErrClosed }

// handBack unwraps fasthttp's hijacked connection: the TCP connection, plus whatever
// the wrapper's read buffer still held. Serving the unwrapped connection again does not
// stack one more buffered reader per stream.
func handBack(hc net.Conn) (*handedBack, error) {
	u, ok := hc.(interface{ UnsafeConn() net.Conn })
	if !ok {
		return nil, errors.New("mockserver: hijacked connection does not expose its connection")
	}
	var hb *handedBack
	switch raw := u.UnsafeConn().(type) {
	case *net.TCPConn:
		hb = &handedBack{TCPConn: raw}
	case *handedBack:
		hb = raw
	default:
		return nil, fmt.Errorf("mockserver: cannot hand back a %T", raw)
	}
	// A deadline in the past makes the wrapper return only what it has buffered: the
	// socket itself is not read.
	if err := hb.TCPConn.SetReadDeadline(time.Unix(1, 0)); err != nil {
		return nil, err
	}
	var ahead []byte
	bp := aheadPool.Get().(*[]byte)
	defer aheadPool.Put(bp)
	buf := *bp
	for {
		n, err := hc.Read(buf)
		ahead = append(ahead, buf[:n]...)
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, err
			}
			break
		}
	}
	if err := hb.TCPConn.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	// What the wrapper buffered came out of rest or the socket before what rest holds.
	hb.rest = append(ahead, hb.rest...)
	hb.idle.Store(len(hb.rest) == 0)
	return hb, nil
}

// aheadPool holds handBack's read buffers: as large as fasthttp's read buffer, so a
// read finds whatever it holds or goes to the socket (which the past deadline stops).
var aheadPool = sync.Pool{New: func() any { b := make([]byte, readBufferSize); return &b }}

// liveConns is the set of connections streams have taken over, so that shutdown can
// close the idle ones at once and the rest after the grace period.
type liveConns struct {
	mu sync.Mutex
	m  map[net.Conn]struct{}
}

func (l *liveConns) add(c net.Conn) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[net.Conn]struct{}{}
	}
	l.m[c] = struct{}{}
	l.mu.Unlock()
}

func (l *liveConns) remove(c net.Conn) {
	l.mu.Lock()
	delete(l.m, c)
	l.mu.Unlock()
}

func (l *liveConns) swap(old, c net.Conn) {
	l.mu.Lock()
	delete(l.m, old)
	l.m[c] = struct{}{}
	l.mu.Unlock()
}

// close closes every connection in the set; with idleOnly, only handed-back
// connections waiting for a request.
func (l *liveConns) close(idleOnly bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.m {
		if hb, ok := c.(*handedBack); !idleOnly || ok && hb.idle.Load() {
			c.Close()
		}
	}
}
