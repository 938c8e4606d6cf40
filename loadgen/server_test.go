package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// groundTruth is a fasthttp test server that streams OpenAI-style chat chunks on a
// fixed schedule and logs the real time each chunk was flushed, so client timings can
// be checked against what was actually emitted. The body's "model" selects a
// behaviour: "ok" (default), "fail500", "truncate" (no [DONE], closes), "nonjson",
// "nodone" (ends cleanly without [DONE]), "stall" (sends one chunk, then waits 5 s),
// "errorevent" (an {"error": …} data event mid-stream), "errorbody" (200 with an error
// object as JSON), "noheaders" (never answers), "empty" (a stream without content), "pairs" (every other write
// carries two content events).
type groundTruth struct {
	t      testing.TB
	ln     net.Listener
	srv    *fasthttp.Server
	URL    string
	Tokens int           // chunks per response (each " hello", one gpt2 token)
	TTFT   time.Duration // before the first content chunk
	ITL    time.Duration // between content chunks

	done     chan struct{}
	mu       sync.Mutex
	arrivals []time.Time
	arrived  map[string]time.Time // request id → arrival time (as in arrivals)
	emits    map[string][]emit    // request id → when each content chunk was written
	bodies   map[string][]byte
	conns    map[uint64]bool
	sources  map[string]int // remote IP → requests
	auth     string         // the last Authorization header
}

func newGroundTruth(t testing.TB) *groundTruth {
	t.Helper()
	g := &groundTruth{t: t, Tokens: 4, done: make(chan struct{}), emits: map[string][]emit{}, arrived: map[string]time.Time{}, bodies: map[string][]byte{}, conns: map[uint64]bool{}, sources: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = &tsListener{Listener: ln}
	g.ln = ln
	g.srv = &fasthttp.Server{Handler: g.handle, Concurrency: 1 << 20, ReadBufferSize: 16 << 10, Logger: quiet{}}
	go g.srv.Serve(ln) //nolint:errcheck
	g.URL = "http://" + ln.Addr().String()
	t.Cleanup(func() { close(g.done); _ = g.srv.Shutdown(); ln.Close() })
	return g
}

func modelOf(body []byte) string {
	i := bytes.Index(body, []byte(`"model":"`))
	if i < 0 {
		return ""
	}
	rest := body[i+9:]
	j := bytes.IndexByte(rest, '"')
	return string(rest[:j])
}

func (g *groundTruth) handle(ctx *fasthttp.RequestCtx) {
	now := time.Now()
	if c, ok := ctx.Conn().(*tsConn); ok && !c.last.IsZero() {
		now = c.last // when the request's bytes reached the host, not when we got the CPU
	}
	id := string(ctx.Request.Header.Peek("X-Request-Id"))
	body := append([]byte(nil), ctx.PostBody()...)
	g.mu.Lock()
	tokens, ttft, itl := g.Tokens, g.TTFT, g.ITL
	g.arrivals = append(g.arrivals, now)
	g.arrived[id] = now
	g.conns[ctx.ConnID()] = true
	g.sources[ctx.RemoteIP().String()]++
	g.auth = string(ctx.Request.Header.Peek("Authorization"))
	g.bodies[id] = body
	g.mu.Unlock()
	model := modelOf(body)
	switch model {
	case "fail500":
		ctx.SetStatusCode(500)
		ctx.SetBodyString(`{"error":{"message":"boom"}}`)
		return
	case "errorbody": // 200, but the body is an error object (streamed request or not)
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"error":{"message":"overloaded","type":"server_error","code":503}}`)
		return
	case "noheaders": // never answers
		select {
		case <-g.done:
		case <-time.After(5 * time.Second):
		}
		return
	}
	stream := bytes.Contains(body, []byte(`"stream":true`))
	words := string(bytes.Repeat([]byte(" hello"), tokens))
	switch path := string(ctx.Path()); path {
	case "/v1/embeddings":
		ctx.SetBodyString(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":5,"total_tokens":5}}`)
		return
	case "/v1/ranking":
		ctx.SetBodyString(`{"rankings":[{"index":1,"logit":0.9},{"index":0,"logit":0.1}]}`)
		return
	case "/v1/rerank":
		ctx.SetBodyString(`{"results":[{"index":0,"relevance_score":0.9}],"usage":{"total_tokens":9}}`)
		return
	case "/v1/completions":
		if !stream {
			ctx.SetBodyString(`{"object":"text_completion","choices":[{"index":0,"text":"` + words + `","finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":` + strconv.Itoa(tokens) + `,"total_tokens":9}}`)
			return
		}
		ctx.SetContentType("text/event-stream")
		n := tokens
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			for range n {
				fmt.Fprint(w, `data: {"object":"text_completion","choices":[{"index":0,"text":" hello"}]}`+"\n\n")
				_ = w.Flush()
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
		})
		return
	case "/v1/responses":
		if !stream {
			ctx.SetBodyString(`{"object":"response","output":[{"type":"message","content":[{"type":"output_text","text":"` + words + `"}]}],"usage":{"input_tokens":3,"output_tokens":` + strconv.Itoa(tokens) + `}}`)
			return
		}
		ctx.SetContentType("text/event-stream")
		n := tokens
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			fmt.Fprint(w, "event: response.created\ndata: {\"type\":\"response.created\"}\n\n")
			for range n {
				fmt.Fprint(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\" hello\"}\n\n")
				_ = w.Flush()
			}
			fmt.Fprintf(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":%d}}}\n\n", n)
		})
		return
	}
	if !stream {
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"` +
			string(bytes.Repeat([]byte(" hello"), tokens)) + `"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":` +
			strconv.Itoa(tokens) + `,"total_tokens":7}}`)
		return
	}
	ctx.SetContentType("text/event-stream")
	n := tokens
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		emits := make([]emit, 0, n)
		defer func() {
			g.mu.Lock()
			g.emits[id] = emits
			g.mu.Unlock()
		}()
		fmt.Fprint(w, `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n")
		if w.Flush() != nil {
			return
		}
		start := now
		if model == "empty" {
			n = 0 // a well-formed stream without content
		}
		for i := range n {
			due := start.Add(ttft + time.Duration(i)*itl)
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
			before := time.Now()
			switch {
			case model == "nonjson" && i == 1:
				fmt.Fprint(w, "data: {not json\n\n")
			case model == "pairs" && i%2 == 0:
				// Two content events in one write: the first's time can only be bounded.
				fmt.Fprint(w, `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" hello"}}]}`+"\n\n")
				w.WriteString(`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" hello"}}]}` + "\n\n")
			case model == "errorevent" && i == 1:
				fmt.Fprint(w, `data: {"error":{"message":"engine died","code":500}}`+"\n\n")
			default:
				fmt.Fprint(w, `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" hello"}}]}`+"\n\n")
			}
			if w.Flush() != nil {
				return
			}
			emits = append(emits, emit{before, time.Now()})
			if model == "stall" {
				select {
				case <-g.done:
				case <-time.After(5 * time.Second):
				}
				return
			}
			if model == "truncate" && i == n/2 {
				ctx.Conn().Close()
				return
			}
		}
		if model == "nodone" {
			return
		}
		fmt.Fprintf(w, `data: {"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", n, n+3)
		fmt.Fprint(w, "data: [DONE]\n\n")
		_ = w.Flush()
	})
}

// emit brackets one chunk's write: the bytes left between Before (formatting began)
// and After (Flush returned). On a busy machine the writer can be descheduled inside
// that window, so it is the ground truth's own uncertainty.
type emit struct{ Before, After time.Time }

// set changes the server's behaviour under its lock (the handler reads it under the
// same lock; a TCP round trip is no happens-before edge for the race detector).
func (g *groundTruth) set(f func(*groundTruth)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f(g)
}

func (g *groundTruth) snapshot() ([]time.Time, map[string][]emit, map[string][]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := append([]time.Time(nil), g.arrivals...)
	e := map[string][]emit{}
	for k, v := range g.emits {
		e[k] = v
	}
	b := map[string][]byte{}
	for k, v := range g.bodies {
		b[k] = v
	}
	return a, e, b
}

// tsListener hands out connections that note the kernel receive time of their latest
// read, so the ground truth records arrivals free of its own scheduling delays.
type tsListener struct{ net.Listener }

func (l *tsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &tsConn{Conn: c, ks: newKernelStamper(c)}, nil
}

type tsConn struct {
	net.Conn
	ks   *kernelStamper
	last time.Time
}

func (c *tsConn) Read(p []byte) (int, error) {
	if c.ks == nil {
		n, err := c.Conn.Read(p)
		if n > 0 {
			c.last = time.Now()
		}
		return n, err
	}
	n, ts, err := c.ks.read(p)
	if n > 0 {
		c.last = ts
		if ts.IsZero() {
			c.last = time.Now()
		}
	}
	return n, err
}

// quiet discards fasthttp's log lines (connections closed by the client under test).
type quiet struct{}

func (quiet) Printf(string, ...any) {}

// runOK runs cfg with gpt2 and fails the test unless every request succeeded. It
// returns the outcome and the bodies the ground-truth server received, by request id.
func runOK(t *testing.T, g *groundTruth, cfg Config) (*Outcome, map[string][]byte) {
	t.Helper()
	out, err := Run(context.Background(), cfg, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Records {
		if !r.OK() {
			t.Fatalf("record %d: %s %s", r.Index, r.ErrorKind, r.Error)
		}
	}
	_, _, bodies := g.snapshot()
	return out, bodies
}
