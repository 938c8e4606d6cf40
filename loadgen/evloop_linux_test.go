//go:build linux

package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/record"
)

// runLooped runs cfg and returns its outcome and how many requests the event loops
// sent and finished themselves. It fails the test when the event loops are off
// (-evloop=off): these tests are about them.
func runLooped(t *testing.T, ctx context.Context, cfg Config) (*Outcome, int64, error) {
	t.Helper()
	if forceGoroutines {
		t.Skip("the event loops are off (-evloop=off)")
	}
	r, err := newRunner(ctx, cfg, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.run(ctx)
	return out, r.evServed.Load(), err
}

// runLoopedPlain runs the non-streaming requests stop allows at concurrency c against
// the plain HTTP server at addr, and fails the test unless the run ended without error
// and the event loops sent and finished every one of them.
func runLoopedPlain(t *testing.T, addr string, c int, stop Stop) *Outcome {
	t.Helper()
	out, served, err := runLooped(t, context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://" + addr}}, Load: Load{Concurrency: c}, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if served != int64(stop.Requests) {
		t.Errorf("%d by the event loops, want %d", served, stop.Requests)
	}
	return out
}

// serveHello answers every request on a connection with the plain " hello"
// completion, keeping the connection, and counts connections.
func serveHello(t testing.TB, conns *atomic.Int64) string {
	return serveRaw(t, func(c net.Conn) {
		if conns != nil {
			conns.Add(1)
		}
		br := bufio.NewReader(c)
		for {
			var req fasthttp.Request
			if req.Read(br) != nil {
				return
			}
			body := `{"choices":[{"index":0,"message":{"role":"assistant","content":" hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
	})
}

// TestEventLoopSends: a closed-loop non-streaming run against plain HTTP servers goes
// through the event loops, over kept-alive connections, round-robin over two URLs,
// and records what the goroutine way records.
func TestEventLoopSends(t *testing.T) {
	var conns atomic.Int64
	a, b := serveHello(t, &conns), serveHello(t, &conns)
	cfg := Config{Target: Target{NoStream: true, URLs: []string{"http://" + a, "http://" + b}}, Load: Load{Concurrency: 4}, Stop: Stop{Requests: 400}}
	out, served, err := runLooped(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if served != 400 || len(out.Records) != 400 {
		t.Fatalf("%d requests by the event loops, %d records; want 400, 400", served, len(out.Records))
	}
	urls := map[string]int{}
	reused := 0
	for _, r := range out.Records {
		if !r.OK() || r.Status != 200 || r.OSL != 1 || r.UsageCompletionTokens != 1 || r.FinishReason != "stop" || r.ResponseBytes == 0 {
			t.Fatalf("record %d: %s %q status %d OSL %d usage %d finish %q bytes %d", r.Index, r.ErrorKind, r.Error, r.Status, r.OSL, r.UsageCompletionTokens, r.FinishReason, r.ResponseBytes)
		}
		if !(r.Scheduled <= r.Sent && r.Sent <= r.Written && r.Written <= r.FirstByte && r.FirstByte <= r.Done && r.FirstOutput == r.Done) {
			t.Fatalf("record %d: times out of order: scheduled %v sent %v written %v first byte %v done %v first output %v", r.Index, r.Scheduled, r.Sent, r.Written, r.FirstByte, r.Done, r.FirstOutput)
		}
		urls[r.URL]++
		if r.ConnReused {
			reused++
		} else if r.Connecting <= 0 {
			t.Errorf("record %d: a new connection without its connect time", r.Index)
		}
	}
	if len(urls) != 2 || urls["http://"+a+"/v1/chat/completions"] != 200 {
		t.Errorf("records by URL %v; want 200 each", urls)
	}
	if n := conns.Load(); n > 8 || reused != 400-int(n) {
		t.Errorf("%d connections, %d reused requests; want at most 8 (4 workers x 2 URLs), the rest reused", n, reused)
	}
	if m := out.Metrics.Value(record.MetricRequestCount); m != 400 {
		t.Errorf("metrics count %v requests, want 400", m)
	}
}

// TestEventLoopTimeout: a server that never answers; each request ends at its total
// timeout, recorded as the goroutine way records it, and the run ends.
func TestEventLoopTimeout(t *testing.T) {
	cfg := Config{Target: Target{NoStream: true, URLs: []string{staller(t)}}, Load: Load{Concurrency: 2}, Stop: Stop{Requests: 4, Timeout: 150 * time.Millisecond}}
	out, served, err := runLooped(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if served != 4 || len(out.Records) != 4 {
		t.Fatalf("%d by the event loops, %d records; want 4, 4", served, len(out.Records))
	}
	for _, r := range out.Records {
		if r.ErrorKind != record.ErrTimeout || r.Error != "loadgen: total timeout" || r.Done-r.Scheduled < 150*time.Millisecond || r.FirstByte != 0 {
			t.Errorf("record %d: %s %q after %v (first byte %v); want a total timeout 150ms after the start, no byte", r.Index, r.ErrorKind, r.Error, r.Done-r.Scheduled, r.FirstByte)
		}
	}
}

// TestEventLoopCancel: cancelling the run's context ends the requests in flight at
// once, recorded as cancelled, and the run returns interrupted.
func TestEventLoopCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	cfg := Config{Target: Target{NoStream: true, URLs: []string{staller(t)}}, Load: Load{Concurrency: 3}, Stop: Stop{Requests: 10, Timeout: time.Minute}}
	start := time.Now()
	out, _, err := runLooped(t, ctx, cfg)
	if err == nil || !out.Interrupted {
		t.Fatalf("err %v, interrupted %v; want the context's error, interrupted", err, out.Interrupted)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %v after its cancellation at 100ms", d)
	}
	if len(out.Records) != 3 {
		t.Fatalf("%d records; want the 3 in flight", len(out.Records))
	}
	for _, r := range out.Records {
		if r.ErrorKind != record.ErrCancelled || !strings.HasPrefix(r.Error, "loadgen: cancelled: ") {
			t.Errorf("record %d: %s %q; want cancelled", r.Index, r.ErrorKind, r.Error)
		}
	}
}

// TestEventLoopDuration: a run with a duration stops by itself, every record finished.
func TestEventLoopDuration(t *testing.T) {
	cfg := Config{Target: Target{NoStream: true, URLs: []string{"http://" + serveHello(t, nil)}}, Load: Load{Concurrency: 3}, Stop: Stop{Duration: 300 * time.Millisecond}}
	out, served, err := runLooped(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if served == 0 || int(served) != len(out.Records) || out.Sent != len(out.Records) {
		t.Fatalf("%d by the event loops, %d records, %d sent", served, len(out.Records), out.Sent)
	}
	for _, r := range out.Records {
		if !r.OK() {
			t.Fatalf("record %d: %s %q", r.Index, r.ErrorKind, r.Error)
		}
	}
}

// TestEventLoopServerCloses: a server that cuts an answer short, or closes the
// connection before answering, gives a reset; one that closes a kept-alive connection
// after each answer without saying so has the next request on it retried once on a
// fresh connection (so every request succeeds).
func TestEventLoopServerCloses(t *testing.T) {
	const body = `{"choices":[{"index":0,"message":{"role":"assistant","content":" hello"}}]}`
	t.Run("mid-answer", func(t *testing.T) {
		addr := serveRaw(t, func(c net.Conn) {
			var req fasthttp.Request
			if req.Read(bufio.NewReader(c)) == nil {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:10])
			}
		})
		out := runLoopedPlain(t, addr, 2, Stop{Requests: 4})
		for _, r := range out.Records {
			if r.ErrorKind != record.ErrReset || !strings.Contains(r.Error, "unexpected EOF") || r.FirstByte == 0 {
				t.Errorf("record %d: %s %q (first byte %v); want a reset after the first byte", r.Index, r.ErrorKind, r.Error, r.FirstByte)
			}
		}
	})
	t.Run("before answering", func(t *testing.T) {
		addr := serveRaw(t, func(c net.Conn) {
			var req fasthttp.Request
			_ = req.Read(bufio.NewReader(c))
		})
		out, _, err := runLooped(t, context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://" + addr}}, Load: Load{Concurrency: 2}, Stop: Stop{Requests: 4}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Records {
			if r.ErrorKind != record.ErrReset || r.FirstByte != 0 || r.ConnReused {
				t.Errorf("record %d: %s %q (first byte %v, reused %v); want a reset before any byte on a new connection", r.Index, r.ErrorKind, r.Error, r.FirstByte, r.ConnReused)
			}
		}
	})
	t.Run("after each answer", func(t *testing.T) {
		var conns atomic.Int64
		addr := serveRaw(t, func(c net.Conn) {
			conns.Add(1)
			if answerHello(c) {
				time.Sleep(5 * time.Millisecond) // the client reuses the connection meanwhile
			}
		})
		out := runLoopedPlain(t, addr, 2, Stop{Requests: 20})
		for _, r := range out.Records {
			if !r.OK() {
				t.Errorf("record %d: %s %q; want the closed connection retried", r.Index, r.ErrorKind, r.Error)
			}
		}
		if conns.Load() < 20 {
			t.Errorf("%d connections for 20 requests answered one per connection", conns.Load())
		}
	})
	t.Run("lingering after each answer", func(t *testing.T) {
		// The server half-closes after its answer and reads on for a while (a lingering
		// close), answering nothing: the request written on it is retried elsewhere.
		addr := serveRaw(t, func(c net.Conn) {
			if !answerHello(c) {
				return
			}
			_ = c.(*net.TCPConn).CloseWrite()
			_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = io.Copy(io.Discard, c)
		})
		out := runLoopedPlain(t, addr, 1, Stop{Requests: 4, Timeout: 5 * time.Second})
		for _, r := range out.Records {
			if !r.OK() {
				t.Errorf("record %d: %s %q; want the half-closed connection retried", r.Index, r.ErrorKind, r.Error)
			}
		}
	})
}

// TestEventLoopHandsOver: answers the loop does not read itself (chunked, HTTP/1.0)
// are read the goroutine way, and the slot comes back to the loop: the plain answers
// after them are the loop's again. A conversation of several turns goes the goroutine
// way too.
func TestEventLoopHandsOver(t *testing.T) {
	const small = `{"choices":[{"index":0,"message":{"role":"assistant","content":"hello hello"},"finish_reason":"stop"}]}`
	var next atomic.Int64
	addr := serveRaw(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			var req fasthttp.Request
			if req.Read(br) != nil {
				return
			}
			switch next.Add(1) % 4 {
			case 1:
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(small), small)
			case 2:
				fmt.Fprintf(c, "HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(small), small)
				return
			default:
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(small), small)
			}
		}
	})
	out, served, err := runLooped(t, context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://" + addr}}, Load: Load{Concurrency: 1}, Stop: Stop{Requests: 40}})
	if err != nil {
		t.Fatal(err)
	}
	if served != 20 || len(out.Records) != 40 {
		t.Errorf("%d by the event loops, %d records; want 20 (the plain answers), 40", served, len(out.Records))
	}
	for _, r := range out.Records {
		if !r.OK() || r.OSL != 2 || r.ResponseBytes != len(small) {
			t.Errorf("record %d: %s %q OSL %d, %d bytes", r.Index, r.ErrorKind, r.Error, r.OSL, r.ResponseBytes)
		}
	}

	out, served, err = runLooped(t, context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://" + serveHello(t, nil)}},
		Workload: Workload{Turns: distribution.Spec{Distribution: distribution.Fixed{Value: 2}}}, Load: Load{Concurrency: 2}, Stop: Stop{Requests: 6}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Records) != 6 || served != 0 {
		t.Fatalf("%d records, %d by the event loops; want 6, 0 (two-turn conversations go the goroutine way)", len(out.Records), served)
	}
	for _, r := range out.Records {
		if !r.OK() || r.Conversation == "" {
			t.Errorf("record %d: %s %q, conversation %q", r.Index, r.ErrorKind, r.Error, r.Conversation)
		}
	}
}

// TestEventLoopManyRequests: 100k requests through the event loops, records to a file
// and discarded: memory, goroutines and open descriptors do not grow with requests.
func TestEventLoopManyRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("100k requests")
	}
	url := "http://" + serveHello(t, nil)
	run := func(n int) (heap uint64, goroutines, fds int) {
		cfg := Config{Target: Target{NoStream: true, URLs: []string{url}}, Load: Load{Concurrency: 8}, Stop: Stop{Requests: n},
			Recording: Recording{RecordFile: filepath.Join(t.TempDir(), "r.jsonl"), DiscardRecords: true}}
		out, served, err := runLooped(t, context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if int(served) != n || out.Metrics.Value(record.MetricRequestCount) != float64(n) || len(out.Metrics.Errors) != 0 {
			t.Fatalf("%d by the event loops, %v counted, errors %v; want %d, none", served, out.Metrics.Value(record.MetricRequestCount), out.Metrics.Errors, n)
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		ents, _ := os.ReadDir("/proc/self/fd")
		return m.HeapInuse, runtime.NumGoroutine(), len(ents)
	}
	h1, g1, f1 := run(10_000)
	h2, g2, f2 := run(100_000)
	if h2 > h1+8<<20 || g2 > g1+2 || f2 > f1+2 {
		t.Errorf("after 10k requests: heap %d KiB, %d goroutines, %d fds; after 100k: %d KiB, %d, %d", h1>>10, g1, f1, h2>>10, g2, f2)
	}
}

// TestEventLoopLargeBody: a body larger than the socket's send buffer is written in
// parts as the server reads it (epoll reports the socket writable), and the answer is
// recorded; a server that reads nothing leaves the write unfinished until the total
// timeout, recorded as such.
func TestEventLoopLargeBody(t *testing.T) {
	big := strings.Repeat("w ", 4<<20) // 8 MiB
	f := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(f, []byte(`{"model":"m","messages":[{"role":"user","content":"`+big+`"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64 // body bytes the server read
	reader := serveRaw(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			var req fasthttp.Request
			if req.Read(br) != nil {
				return
			}
			got.Add(int64(len(req.Body())))
			body := `{"choices":[{"index":0,"message":{"role":"assistant","content":" hello"}}]}`
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
	})
	cfg := Config{Target: Target{NoStream: true, URLs: []string{"http://" + reader}}, Workload: Workload{InputFile: f, InputFormat: FormatPayloads}, Load: Load{Concurrency: 2}, Stop: Stop{Requests: 2}}
	out, served, err := runLooped(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if served != 2 || got.Load() != 2*int64(len(big)+len(`{"model":"m","messages":[{"role":"user","content":""}]}`)) {
		t.Errorf("%d by the event loops, the server read %d body bytes; want 2, 2 whole bodies", served, got.Load())
	}
	for _, r := range out.Records {
		if !r.OK() || r.Written <= r.Sent {
			t.Errorf("record %d: %s %q, sent %v written %v", r.Index, r.ErrorKind, r.Error, r.Sent, r.Written)
		}
	}

	ctx := t.Context()
	cfg.URLs = []string{"http://" + serveRaw(t, func(c net.Conn) { <-ctx.Done() })} // reads nothing
	cfg.Requests, cfg.Timeout = 2, 300*time.Millisecond
	out, _, err = runLooped(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Records {
		if r.ErrorKind != record.ErrTimeout || r.Error != "loadgen: total timeout" || r.Written != 0 {
			t.Errorf("record %d: %s %q, written %v; want a total timeout before the request was written", r.Index, r.ErrorKind, r.Error, r.Written)
		}
	}
}

// TestTransportChosenByConfig: the goroutine transport sends every request the
// goroutine way where the event loops would have taken them all; EventLoops caps the
// loops; a transport that is not one of Transports, or a negative cap, is refused.
func TestTransportChosenByConfig(t *testing.T) {
	addr := serveHello(t, nil)
	cfg := Config{Target: Target{NoStream: true, URLs: []string{"http://" + addr}}, Load: Load{Concurrency: 4}, Stop: Stop{Requests: 40}}
	if _, served, err := runLooped(t, context.Background(), cfg); err != nil || served != 40 {
		t.Fatalf("auto: %d of 40 by the event loops (%v), want all", served, err)
	}
	cfg.Transport = TransportGoroutines
	out, served, err := runLooped(t, context.Background(), cfg)
	if n := out.Metrics.Value(record.MetricRequestCount); err != nil || served != 0 || n != 40 {
		t.Errorf("goroutines: %d by the event loops, %v requests (%v), want 0 and 40", served, n, err)
	}
	if got := loops(2, 8); got != 2 {
		t.Errorf("loops(2, 8) = %d, want 2", got)
	}
	if got := loops(0, 1); got != 1 {
		t.Errorf("loops(0, 1) = %d, want 1", got)
	}
	for _, bad := range []Target{{Transport: "epoll"}, {EventLoops: -1}} {
		c := cfg
		c.Transport, c.EventLoops = bad.Transport, bad.EventLoops
		err := c.Validate()
		want := map[bool]string{true: `transport "epoll"`, false: "event_loops -1"}[bad.Transport != ""]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want an error naming %s", bad, err, want)
		}
	}
}
