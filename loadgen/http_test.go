package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
	"github.com/valyala/fasthttp"
)

// TestAppendHead checks the hand-rendered request against fasthttp's parser: a
// configured header replaces the one loadgen sets (once, not twice), CR/LF in a value
// cannot inject a header, and Content-Length is always the body's.
func TestAppendHead(t *testing.T) {
	tg, err := newTarget("http://127.0.0.1:8000/v1/chat/completions?x=1", &dialer{})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"model":"m"}`)
	hdr := newHeaderBlock([][2]string{
		{"content-type", "application/json; charset=utf-8"},
		{"X-Evil", "a\r\nInjected: yes"},
		{"Content-Length", "999"},
		{"Authorization", "Bearer k"},
	})
	for _, stream := range []bool{false, true} {
		c := &call{target: tg, body: body, requestID: "req-7", stream: stream, hdr: hdr}
		raw := append(appendHead(nil, c), body...)
		var req fasthttp.Request
		if err := req.Read(bufio.NewReader(bytes.NewReader(raw))); err != nil {
			t.Fatalf("stream=%v: fasthttp cannot parse %q: %v", stream, raw, err)
		}
		got := map[string]string{
			"method": string(req.Header.Method()), "uri": string(req.Header.RequestURI()), "host": string(req.Host()),
			"type": string(req.Header.ContentType()), "id": string(req.Header.Peek("X-Request-Id")),
			"auth": string(req.Header.Peek("Authorization")), "injected": string(req.Header.Peek("Injected")),
			"accept": string(req.Header.Peek("Accept")), "body": string(req.Body()),
		}
		want := map[string]string{
			"method": "POST", "uri": "/v1/chat/completions?x=1", "host": "127.0.0.1:8000",
			"type": "application/json; charset=utf-8", "id": "req-7", "auth": "Bearer k", "injected": "",
			"accept": "", "body": string(body),
		}
		if stream {
			want["accept"] = "text/event-stream"
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("stream=%v: %s = %q; want %q", stream, k, got[k], w)
			}
		}
		if n := strings.Count(strings.ToLower(string(raw)), "content-type:"); n != 1 {
			t.Errorf("stream=%v: %d Content-Type headers in %q; want 1", stream, n, raw)
		}
	}
	// A body with its own Content-Type (multipart, naming its boundary) keeps it over
	// the configured one; without one, the configured one is sent, once.
	for _, c := range []struct{ own, want string }{
		{"multipart/form-data; boundary=b0undary", "multipart/form-data; boundary=b0undary"},
		{"", "application/json; charset=utf-8"},
	} {
		raw := appendHead(nil, &call{target: tg, body: body, ctype: c.own, hdr: hdr})
		var req fasthttp.Request
		if err := req.Header.Read(bufio.NewReader(bytes.NewReader(raw))); err != nil {
			t.Fatalf("fasthttp cannot parse %q: %v", raw, err)
		}
		if got := string(req.Header.ContentType()); got != c.want {
			t.Errorf("body type %q, configured application/json; charset=utf-8: sent %q, want %q", c.own, got, c.want)
		}
		if n := strings.Count(strings.ToLower(string(raw)), "content-type:"); n != 1 {
			t.Errorf("body type %q: %d Content-Type headers in %q; want 1", c.own, n, raw)
		}
	}
}

// TestLargeBodyIsSentWhole sends a body past inlineBody (written with writev, not
// copied) and checks the server got it byte for byte.
func TestLargeBodyIsSentWhole(t *testing.T) {
	g := newGroundTruth(t)
	dir := t.TempDir()
	big := strings.Repeat("x", 3*inlineBody)
	payload := `{"model":"ok","messages":[{"role":"user","content":"` + big + `"}]}`
	f := filepath.Join(dir, "p.jsonl")
	if err := os.WriteFile(f, []byte(payload+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, bodies := runOK(t, g, Config{Target: Target{NoStream: true, URLs: []string{g.URL}}, Workload: Workload{InputFile: f, InputFormat: FormatPayloads}, Stop: Stop{Requests: 2}})
	for _, r := range out.Records {
		if got := string(bodies[r.RequestID]); got != payload {
			t.Errorf("record %d: server got %d bytes; want the %d-byte payload", r.Index, len(got), len(payload))
		}
	}
}

// TestClockByRequestKind checks what a record's times measure: kernel receive
// timestamps for streamed responses (Linux), the client's reads for non-streaming ones.
func TestClockByRequestKind(t *testing.T) {
	g := newGroundTruth(t)
	for _, stream := range []bool{false, true} {
		out, err := Run(context.Background(), Config{Target: Target{URLs: []string{g.URL}, Model: "ok", NoStream: !(stream)}, Load: Load{Concurrency: 1}, Stop: Stop{Requests: 4}}, gpt2(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		if stream && runtime.GOOS == "linux" {
			want = record.ClockKernel
		}
		for _, r := range out.Records {
			if !r.OK() || r.Clock != want || r.FirstByte <= r.Sent || r.Done < r.FirstByte {
				t.Errorf("stream=%v record %d: %s clock=%q sent=%v first=%v done=%v; want ok, clock %q, sent < first byte <= done",
					stream, r.Index, r.ErrorKind, r.Clock, r.Sent, r.FirstByte, r.Done, want)
			}
		}
	}
}

// TestTotalDeadlineWindow checks that a keep-alive connection's deadline is kept only
// while it lies within [d, d+timeout/1024] of the request's own deadline d.
func TestTotalDeadlineWindow(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &conn{Conn: a}
	const timeout = 1024 * time.Millisecond // slack 1 ms
	d := time.Now().Add(timeout)
	steps := []struct {
		d    time.Time
		want time.Time
	}{
		{d, d.Add(time.Millisecond)},                               // set with the slack
		{d.Add(time.Millisecond / 2), d.Add(time.Millisecond)},     // still within the window: kept
		{d.Add(time.Millisecond), d.Add(time.Millisecond)},         // at the window's end: kept
		{d.Add(2 * time.Millisecond), d.Add(3 * time.Millisecond)}, // would be early: moved
		{time.Time{}, time.Time{}},                                 // no timeout: cleared
	}
	for i, s := range steps {
		c.setTotalDeadline(s.d, timeout)
		if !c.deadlineAt.Equal(s.want) {
			t.Errorf("step %d: deadline = %v; want %v", i, c.deadlineAt.Sub(d), s.want.Sub(d))
		}
	}
	c.deadlineUnknown = true // a stream moved the read deadline
	c.setTotalDeadline(d, timeout)
	if c.deadlineUnknown || !c.deadlineAt.Equal(d.Add(time.Millisecond)) {
		t.Errorf("after a stream: deadline %v, unknown %v; want reset to d+1ms", c.deadlineAt.Sub(d), c.deadlineUnknown)
	}
}

// serveRaw listens on a loopback port until the test ends and serves each connection
// with handle, in its own goroutine, closing it after; it returns the address.
func serveRaw(t testing.TB, handle func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// answerHello reads one request from c and answers it with a plain non-streaming
// completion, " hello"; false if no request came.
func answerHello(c net.Conn) bool {
	var req fasthttp.Request
	if req.Read(bufio.NewReader(c)) != nil {
		return false
	}
	body := `{"choices":[{"index":0,"message":{"role":"assistant","content":" hello"}}]}`
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	return true
}

// staller accepts connections and never answers, holding them until the test ends.
func staller(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	return "http://" + serveRaw(t, func(c net.Conn) {
		go io.Copy(io.Discard, c) //nolint:errcheck
		<-done
	})
}

// TestCancelInterruptsBlockedReads checks that cancelling the run's context (watched
// once per connection) and a request's own context (cancel_fraction, watched per
// request) both end reads that would otherwise wait for the total timeout.
func TestCancelInterruptsBlockedReads(t *testing.T) {
	url := staller(t)
	for _, tc := range []struct {
		name   string
		stream bool
		frac   bool
	}{{"run/stream", true, false}, {"run/nonstream", false, false}, {"request/nonstream", false, true}} {
		ctx, cancel := context.WithCancel(context.Background())
		cfg := Config{Target: Target{URLs: []string{url}, NoStream: !(tc.stream)}, Load: Load{Concurrency: 2}, Stop: Stop{Requests: 4, Timeout: 10 * time.Second}}
		if tc.frac {
			cfg.CancelFraction, cfg.CancelAfter = 1, 50*time.Millisecond
		} else {
			time.AfterFunc(100*time.Millisecond, cancel)
		}
		out, _ := Run(ctx, cfg, gpt2(t), nil)
		cancel()
		if out == nil || len(out.Records) == 0 {
			t.Fatalf("%s: no records", tc.name)
		}
		for _, r := range out.Records {
			// A read left waiting would end at the total timeout, also as "cancelled"
			// (the context is done by then): the latency tells the two apart.
			if r.ErrorKind != record.ErrCancelled || r.Latency() >= cfg.Timeout/2 {
				t.Errorf("%s: record %d: kind %q (%s) after %v; want %q well before the %v timeout",
					tc.name, r.Index, r.ErrorKind, r.Error, r.Latency(), record.ErrCancelled, cfg.Timeout)
			}
		}
	}
}

// TestAnswerAfterCutWrite: a server that answers 413 after the headers and closes
// without reading the body cuts the client's write short; the record still carries the
// server's answer (status 413 and its message), not a connect error.
func TestAnswerAfterCutWrite(t *testing.T) {
	addr := serveRaw(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			l, err := br.ReadString('\n')
			if err != nil || l == "\r\n" {
				break
			}
		}
		msg := `{"error":{"message":"request body is larger than this server's limit of 1024 bytes","type":"invalid_request_error"}}`
		fmt.Fprintf(c, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(msg), msg)
	})
	big := strings.Repeat("w ", 8<<20) // 16 MiB, more than the sockets buffer
	f := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(f, []byte(`{"model":"m","messages":[{"role":"user","content":"`+big+`"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://" + addr}}, Workload: Workload{InputFile: f, InputFormat: FormatPayloads}, Stop: Stop{Requests: 1}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Records[0]
	if r.Status != 413 || r.ErrorKind != record.ErrHTTPStatus || !strings.Contains(r.Error, "larger than this server's limit") {
		t.Errorf("record: status %d, %s %q; want 413, %s and the server's message", r.Status, r.ErrorKind, r.Error, record.ErrHTTPStatus)
	}
}
