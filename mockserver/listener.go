package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
)

// Accept back-off after a failed accept (EMFILE, ENFILE, ENOBUFS, ECONNABORTED, …):
// doubling from acceptBackoffMin to acceptBackoffMax, as net/http's Server does.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// maxRefusing bounds the connections being answered 503 at once; past it, connections
// over Config.MaxConnections are closed without an answer.
const maxRefusing = 256

// guardListener is the server's listener. It never returns an accept error other than
// its own closing: on any other error (out of file descriptors, a connection aborted
// before it was accepted) it backs off and accepts again, so the server outlives
// resource exhaustion (fasthttp's Serve would return). It counts open connections and
// answers those over Config.MaxConnections with 503 and Retry-After.
type guardListener struct {
	*net.TCPListener
	s         *Server
	max       int64
	open      atomic.Int64
	refusing  atomic.Int64
	lastLog   time.Time
	acceptErr atomic.Uint64 // failed accepts, for tests and /metrics
}

func newGuardListener(ln *net.TCPListener, s *Server, max int) *guardListener {
	return &guardListener{TCPListener: ln, s: s, max: int64(max)}
}

func (l *guardListener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.TCPListener.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			l.acceptErr.Add(1)
			delay = min(max(2*delay, acceptBackoffMin), acceptBackoffMax)
			if now := time.Now(); now.Sub(l.lastLog) >= time.Second {
				l.lastLog = now
				l.s.logf("accept: %v; retrying in %v", err, delay)
			}
			time.Sleep(delay)
			continue
		}
		delay = 0
		if l.max > 0 && l.open.Load() >= l.max {
			if l.refusing.Add(1) > maxRefusing {
				l.refusing.Add(-1)
				c.Close()
				continue
			}
			l.s.wg.Add(1) // Close waits for its record
			go l.refuse(c)
			continue
		}
		l.open.Add(1)
		return &handedBack{TCPConn: c, release: l.release}, nil
	}
}

func (l *guardListener) release() { l.open.Add(-1) }

// refuseWait bounds how long a refused connection is read (its request head) and
// drained (so the answer is not lost to a reset).
const refuseWait = time.Second

// refuse answers one connection over the limit: it reads the request head, answers 503
// with Retry-After and closes. The request goes to the rejected-requests file.
func (l *guardListener) refuse(c *net.TCPConn) {
	defer l.s.wg.Done()
	defer l.refusing.Add(-1)
	defer c.Close()
	s := l.s
	now := time.Now()
	_ = c.SetDeadline(now.Add(refuseWait))
	buf := make([]byte, 4096)
	n, _ := c.Read(buf)
	retry := orInt(s.cfg.Faults.RetryAfterSeconds, DefaultRetryAfterSecs)
	msg := "the server has " + strconv.FormatInt(l.max, 10) + " connections open, its limit (--max-connections); retry later"
	body, _ := json.Marshal(openai.NewError(openai.ErrOverloaded, msg, "", ""))
	resp := "HTTP/1.1 503 Service Unavailable\r\nServer: " + serverName + "\r\nContent-Type: application/json\r\nRetry-After: " +
		strconv.Itoa(retry) + "\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	_, werr := c.Write(append([]byte(resp), body...))
	if n > 0 { // a request arrived and was answered: record it
		rec := record.Server{TS: float64(now.UnixNano()) / 1e9, RecvNS: now.UnixNano(), Seq: s.seq.Add(1),
			Endpoint: requestPath(buf[:n]), Status: 503, Rejected: "too_many_connections", TokenizationMode: record.ModeNone}
		rec.RequestID = "req-" + strconv.FormatUint(rec.Seq, 10)
		s.met.observe(&rec, time.Now())
		s.rec.put(recItem{rec: rec})
	}
	if werr == nil {
		_ = c.CloseWrite()
		for {
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
	}
}

// requestPath returns the path of an HTTP request line ("" if none).
func requestPath(head []byte) string {
	line, _, _ := bytes.Cut(head, []byte("\r\n"))
	f := bytes.Fields(line)
	if len(f) < 2 {
		return ""
	}
	p, _, _ := bytes.Cut(f[1], []byte("?"))
	return string(p)
}
