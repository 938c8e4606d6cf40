package mockserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"time"

	"github.com/valyala/fasthttp"
)

// rawRequest is a streaming chat request as HTTP bytes.
func rawRequest(proto, extraHeader string, osl int) string {
	body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"Hi"}],"stream":true,"max_tokens":%d,"ignore_eos":true}`, osl)
	return fmt.Sprintf("POST /v1/chat/completions %s\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s",
		proto, extraHeader, len(body), body)
}

// readStream reads one response from br and returns its status, header and body.
func readStream(t *testing.T, br *bufio.Reader) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, b
}

// TestDirectStreamKeepAlive: streams written straight to the connection keep it alive
// for the next request — sequential, pipelined (both requests in one write), and mixed
// with a non-streaming request — and every stream is whole.
func TestDirectStreamKeepAlive(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
			cfg := Config{Fast: fast}
			if !fast {
				cfg.TTFT, cfg.ITL = fixedMs(2), fixedMs(1)
			}
			s := start(t, cfg)
			c, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			check := func(osl int) {
				t.Helper()
				resp, b := readStream(t, br)
				if resp.StatusCode != 200 || resp.Close {
					t.Fatalf("status %d, close %v: %s", resp.StatusCode, resp.Close, b)
				}
				if got := resp.TransferEncoding; len(got) != 1 || got[0] != "chunked" {
					t.Errorf("Transfer-Encoding = %v, want [chunked]", got)
				}
				if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
					t.Errorf("Content-Type = %q, want text/event-stream", got)
				}
				if got := resp.Header.Get("Server"); got != serverName {
					t.Errorf("Server = %q, want %q", got, serverName)
				}
				_, chunks, finish, _ := streamText(t, b)
				if chunks != osl || finish != "length" {
					t.Errorf("chunks, finish = %d, %q; want %d, length", chunks, finish, osl)
				}
			}
			for _, osl := range []int{5, 1, 30} {
				if _, err := io.WriteString(c, rawRequest("HTTP/1.1", "", osl)); err != nil {
					t.Fatal(err)
				}
				check(osl)
			}
			// Pipelined: the second request arrives before the first stream is written.
			if _, err := io.WriteString(c, rawRequest("HTTP/1.1", "", 7)+rawRequest("HTTP/1.1", "", 9)); err != nil {
				t.Fatal(err)
			}
			check(7)
			check(9)
			// A plain request after the streams is still served on this connection.
			if _, err := io.WriteString(c, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			resp, b := readStream(t, br)
			if resp.StatusCode != 200 || !strings.Contains(string(b), `"object":"list"`) {
				t.Errorf("models after streams: %d %s", resp.StatusCode, b)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := len(s.Records()); got != 5 {
				t.Errorf("records = %d, want 5 (the streams; /v1/models is not recorded)", got)
			}
		})
	}
}

// TestDirectStreamClose: "Connection: close" is honoured (the server says so and closes
// after the stream), and an HTTP/1.0 client, which cannot take chunked framing, gets the
// stream delimited by the connection's end.
func TestDirectStreamClose(t *testing.T) {
	s := start(t, Config{Fast: true})
	for _, tc := range []struct{ proto, hdr string }{{"HTTP/1.1", "Connection: close\r\n"}, {"HTTP/1.0", ""}} {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, rawRequest(tc.proto, tc.hdr, 12)); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		resp, b := readStream(t, br)
		if resp.StatusCode != 200 || !resp.Close {
			t.Errorf("%s %q: status %d, close %v; want 200 and a closing response", tc.proto, tc.hdr, resp.StatusCode, resp.Close)
		}
		if tc.proto == "HTTP/1.0" && (len(resp.TransferEncoding) != 0 || resp.ContentLength != -1) {
			t.Errorf("HTTP/1.0: Transfer-Encoding %v, Content-Length %d; want neither (a close-delimited body)", resp.TransferEncoding, resp.ContentLength)
		}
		if _, chunks, _, _ := streamText(t, b); chunks != 12 {
			t.Errorf("%s %q: chunks = %d, want 12", tc.proto, tc.hdr, chunks)
		}
		if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("%s %q: after the stream read %d bytes, err %v; want the server to have closed", tc.proto, tc.hdr, n, err)
		}
		c.Close()
	}
}

// TestCloseDropsIdleHandedBackConns: a keep-alive connection that a stream handed back
// to the HTTP server is closed by Close, not left open.
func TestCloseDropsIdleHandedBackConns(t *testing.T) {
	s := start(t, Config{Fast: true})
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	if _, err := io.WriteString(c, rawRequest("HTTP/1.1", "", 3)); err != nil {
		t.Fatal(err)
	}
	readStream(t, br)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("after Close read %d bytes, err %v; want EOF", n, err)
	}
}

// TestLatenessCountsEveryWrittenChunk: each paced chunk's lateness is taken once, when
// it is written (the last chunk with the end of the stream), over both the direct and
// the pipe (HTTP/1.0) paths; zero latency observes nothing.
func TestLatenessCountsEveryWrittenChunk(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/1.0"} {
		s := start(t, Config{TTFT: fixedMs(2), ITL: fixedMs(1)})
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, rawRequest(proto, "", 20)); err != nil {
			t.Fatal(err)
		}
		readStream(t, bufio.NewReader(c))
		c.Close()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := s.late.n.Load(); got != 20 {
			t.Errorf("%s: lateness observations = %d, want 20 (one per chunk)", proto, got)
		}
		if q := s.Lateness(0.5); q[0] <= 0 {
			t.Errorf("%s: median lateness = %v µs, want > 0", proto, q[0])
		}
	}
	s := start(t, Config{Fast: true})
	post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"Hi"}],"stream":true,"max_tokens":20}`)
	if got := s.late.n.Load(); got != 0 {
		t.Errorf("zero latency: lateness observations = %d, want 0", got)
	}
}

// TestDroppedHijackEndsStream: when fasthttp drops a stream's hijack (its connection
// failed between the handler and the takeover), the connection's StateClosed runs the
// stream against a dead output, once, so its record is handed in and shutdown does not
// wait the grace period for it; a hijack arriving later finds nothing to run.
func TestDroppedHijackEndsStream(t *testing.T) {
	s := &Server{}
	a, b := net.Pipe()
	defer b.Close()
	var outs []streamOut
	run := func(out streamOut) bool { outs = append(outs, out); return false }
	s.pending.Store(a, run)
	s.connState(a, fasthttp.StateIdle)
	if len(outs) != 0 {
		t.Fatalf("an idle connection ran the pending stream")
	}
	s.connState(a, fasthttp.StateClosed)
	s.connState(a, fasthttp.StateClosed)
	if len(outs) != 1 {
		t.Fatalf("StateClosed ran the pending stream %d times; want once", len(outs))
	}
	if err := outs[0].send([]byte("x")); err == nil {
		t.Errorf("the dropped stream's output accepted a write")
	}
	if _, ok := s.pending.Load(a); ok {
		t.Errorf("the dropped stream is still pending")
	}
}

// countingConn is a net.Conn that keeps every Write's bytes, one slice per call.
type countingConn struct {
	net.Conn
	writes [][]byte
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

// TestDirectOutCoalesces: chunks that are already due go out in writes of at least
// 16 KiB (the last one excepted), each chunk framed once and in order, so a
// zero-latency stream costs one write system call per 16 KiB, not per token (below
// 16 KiB its writes cost most of its CPU: docs/performance.md). The floor is the
// behaviour asked for, written here rather than read from coalesceLimit, so that
// lowering the limit fails the test.
func TestDirectOutCoalesces(t *testing.T) {
	const minWrite = 16 << 10
	cc := &countingConn{}
	o := &directOut{c: cc, buf: []byte("HEAD\r\n\r\n")}
	chunk := []byte(`data: {"choices":[{"index":0,"delta":{"content":" the"},"finish_reason":null}]}` + "\n\n")
	const n = 2000
	var want strings.Builder
	want.WriteString("HEAD\r\n\r\n")
	for range n {
		if err := o.send(chunk); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&want, "%x\r\n%s\r\n", len(chunk), chunk)
	}
	if err := o.end([]byte("data: [DONE]\n\n")); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&want, "%x\r\n%s\r\n0\r\n\r\n", len("data: [DONE]\n\n"), "data: [DONE]\n\n")
	var got strings.Builder
	for i, w := range cc.writes {
		got.Write(w)
		if i < len(cc.writes)-1 && len(w) < minWrite {
			t.Errorf("write %d of %d is %d bytes, want at least %d", i, len(cc.writes), len(w), minWrite)
		}
	}
	if got.String() != want.String() {
		t.Fatalf("written bytes differ from the framed chunks (%d vs %d bytes)", got.Len(), want.Len())
	}
	if max := want.Len()/minWrite + 1; len(cc.writes) > max {
		t.Errorf("%d writes for %d bytes, want at most %d", len(cc.writes), want.Len(), max)
	}
}
