package mockbench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
)

// Result is what [Drive] measured.
type Result struct {
	Tokens   int64 // content events received (streaming) or usage.completion_tokens
	Requests int64 // responses completed
	Errors   int64
	Elapsed  time.Duration
}

// TokensPerSec returns Tokens / Elapsed.
func (r Result) TokensPerSec() float64 { return float64(r.Tokens) / r.Elapsed.Seconds() }

// RequestsPerSec returns Requests / Elapsed.
func (r Result) RequestsPerSec() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// Drive runs `conc` closed-loop workers, each on its own keep-alive connection, that
// POST body to rawURL for d (streams still open at the end are cut; their tokens so far
// count). Streaming responses are read as SSE (sse.Reader +
// openai.ChunkParser, as a load generator reads them) and every event carrying text
// counts as a token. The client is a minimal HTTP/1.1 one (no pooling layer, no pipes),
// so that the server, not the client, is what the numbers compare.
func Drive(rawURL string, body []byte, conc int, d time.Duration, stream bool) Result {
	return DriveCounting(rawURL, body, conc, d, stream, 0, nil)
}

// DriveCounting is [Drive] with the workers' first requests spread evenly over spread
// (worker i starts at i·spread/conc), so that paced streams tick out of phase as
// independent users' would; and, when live is not nil, every streamed token added to
// live as it arrives, so a caller can read the count mid-run (to leave a warm-up out).
// Without live, tokens are summed per response, keeping shared counters off the
// per-token path.
func DriveCounting(rawURL string, body []byte, conc int, d time.Duration, stream bool, spread time.Duration, live *atomic.Int64) Result {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Result{Errors: 1}
	}
	head := fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), u.Host, len(body))
	req := append(head, body...)
	var tokens, reqs, errs atomic.Int64
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range conc {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * spread / time.Duration(conc))
			var c *conn
			var p openai.ChunkParser
			var ch openai.StreamChunk
			for time.Now().Before(deadline) {
				if c == nil {
					nc, err := net.Dial("tcp", u.Host)
					if err != nil {
						errs.Add(1)
						time.Sleep(time.Millisecond)
						continue
					}
					nc.SetDeadline(deadline) // a stream still running at the deadline is cut there
					c = newConn(nc)
				}
				n, err := c.do(req, stream, &p, &ch, live)
				tokens.Add(n)
				if err != nil {
					if time.Now().Before(deadline) {
						errs.Add(1)
					}
					c.nc.Close()
					c = nil
					continue
				}
				reqs.Add(1)
			}
			if c != nil {
				c.nc.Close()
			}
		})
	}
	wg.Wait()
	return Result{Tokens: tokens.Load(), Requests: reqs.Load(), Errors: errs.Load(), Elapsed: min(time.Since(start), d)}
}

type conn struct {
	nc  net.Conn
	br  *bufio.Reader
	ck  chunked
	sse *sse.Reader
}

func newConn(nc net.Conn) *conn {
	c := &conn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}
	c.ck.br = c.br
	c.sse = sse.NewReader(&c.ck)
	return c
}

var errStatus = errors.New("mockbench: status is not 200")

// do sends one request and reads its response, returning the tokens counted (a
// non-streaming answer's usage.completion_tokens); a streamed token is also added to
// live (if not nil) as it arrives.
func (c *conn) do(req []byte, stream bool, p *openai.ChunkParser, ch *openai.StreamChunk, live *atomic.Int64) (int64, error) {
	if _, err := c.nc.Write(req); err != nil {
		return 0, err
	}
	status, clen, isChunked, err := c.readHead()
	if err != nil {
		return 0, err
	}
	if status != 200 {
		return 0, errStatus
	}
	if !stream || !isChunked {
		var b []byte
		if isChunked {
			c.ck.reset()
			b, err = io.ReadAll(&c.ck)
		} else {
			b = make([]byte, clen)
			_, err = io.ReadFull(c.br, b)
		}
		if err != nil {
			return 0, err
		}
		if p.Parse(b, ch) != nil {
			return 0, nil
		}
		return int64(ch.Usage.CompletionTokens), nil
	}
	c.ck.reset()
	c.sse.Reset(&c.ck)
	n := int64(0)
	for {
		ev, err := c.sse.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if sse.IsDone(ev.Data) {
			continue
		}
		if p.Parse(ev.Data, ch) == nil && len(ch.Text) > 0 {
			n++
			if live != nil {
				live.Add(1)
			}
		}
	}
}

func (c *conn) readHead() (status, clen int, isChunked bool, err error) {
	clen = -1
	for i := 0; ; i++ {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if i == 0 {
			if len(line) < 12 {
				return 0, 0, false, fmt.Errorf("mockbench: bad status line %q", line)
			}
			status, _ = strconv.Atoi(string(line[9:12]))
			continue
		}
		if len(line) == 0 {
			return status, clen, isChunked, nil
		}
		k, v, _ := bytes.Cut(line, []byte(":"))
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			clen, _ = strconv.Atoi(string(v))
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			isChunked = bytes.EqualFold(v, []byte("chunked"))
		}
	}
}

// chunked decodes an HTTP/1.1 chunked body from br, returning io.EOF after the last
// chunk (and its trailer).
type chunked struct {
	br   *bufio.Reader
	left int
	done bool
}

func (c *chunked) reset() { c.left, c.done = 0, false }

func (c *chunked) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		n, err := strconv.ParseInt(string(bytes.TrimRight(line, "\r\n")), 16, 64)
		if err != nil {
			return 0, fmt.Errorf("mockbench: bad chunk size %q", line)
		}
		if n == 0 {
			for { // trailer up to the empty line
				line, err := c.br.ReadSlice('\n')
				if err != nil {
					return 0, err
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					break
				}
			}
			c.done = true
			return 0, io.EOF
		}
		c.left = int(n)
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.left -= n
	if c.left == 0 && err == nil {
		if _, err := c.br.Discard(2); err != nil {
			return n, err
		}
	}
	return n, err
}
