package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/record"
)

// TestParsePlainHead: the heads read without fasthttp, and every kind left to it.
func TestParsePlainHead(t *testing.T) {
	for _, tc := range []struct {
		head          string
		ok            bool
		status, n     int
		close         bool
		headLenBefore int // bytes of tc.head that are the head (0 = all)
	}{
		{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n", true, 200, 12, false, 0},
		{"HTTP/1.1 200 OK\r\ncontent-length:7\r\nConnection: close\r\n\r\n", true, 200, 7, true, 0},
		{"HTTP/1.1 500 Internal Server Error\r\nCONTENT-LENGTH: 3\r\nConnection: Keep-Alive\r\n\r\n", true, 500, 3, false, 0},
		{"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", true, 200, 0, false, 0},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", true, 200, 2, false, len("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")},
		// Left to fasthttp:
		{"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n", false, 0, 0, false, 0},                              // HTTP/1.0
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false, 0, 0, false, 0},                     // chunked
		{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n", false, 0, 0, false, 0},                 // no length
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n", false, 0, 0, false, 0},         // twice
		{"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n", false, 0, 0, false, 0},                             // not digits
		{"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", false, 0, 0, false, 0},                      // no body
		{"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", false, 0, 0, false, 0},                    // no body
		{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", false, 0, 0, false, 0}, // interim
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-A: 1\r\n  folded\r\n\r\n", false, 0, 0, false, 0},        // folded
		{"HTTP/1.1 200 OK\nContent-Length: 2\n\n", false, 0, 0, false, 0},                                    // bare LF
		{"HTTP/1.1 200 OK\r\nConnection: upgrade\r\nContent-Length: 2\r\n\r\n", false, 0, 0, false, 0},       // other Connection
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", false, 0, 0, false, 0},                                  // incomplete
		{"HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\n", false, 0, 0, false, 0},                              // bad status
		{"HTTP/1.1 200 OK\r\nContent-Length: 16777217\r\n\r\n", false, 0, 0, false, 0},                       // over maxPlainBody
		{"HTTP/1.1 200 OK\r\nContent-Length: 16777216\r\n\r\n", true, 200, 16 << 20, false, 0},
	} {
		status, close, n, head, ok := parsePlainHead([]byte(tc.head))
		want := tc.headLenBefore
		if want == 0 {
			want = len(tc.head)
		}
		if ok != tc.ok || ok && (status != tc.status || n != tc.n || close != tc.close || head != want) {
			t.Errorf("%q: status %d length %d close %v head %d ok %v; want %d %d %v %d %v", tc.head, status, n, close, head, ok, tc.status, tc.n, tc.close, want, tc.ok)
		}
	}
}

// TestPlainAnswers: answers read by readPlain and by fasthttp, over kept-alive
// connections, record the same: status, body bytes, output, error kinds; a body larger
// than the read buffer or arriving after its head is read whole, a body cut short is a
// reset, and an answer that says Connection: close is not followed by a request on
// its connection.
func TestPlainAnswers(t *testing.T) {
	const content = "hello hello"
	small := `{"choices":[{"index":0,"message":{"role":"assistant","content":"` + content + `"},"finish_reason":"stop"}]}`
	big := `{"choices":[{"index":0,"message":{"role":"assistant","content":"` + content + `"},"finish_reason":"stop"}],"pad":"` + strings.Repeat("x", 3*connReadBuffer) + `"}`
	type answer struct {
		name  string
		write func(c net.Conn) (closeAfter bool)
		kind  string // record.ErrorKind wanted
		bytes int    // ResponseBytes wanted (when OK)
	}
	plain := func(status, extra, body string) func(net.Conn) bool {
		return func(c net.Conn) bool {
			fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s", status, extra, len(body), body)
			return strings.Contains(extra, "close")
		}
	}
	answers := []answer{
		{"plain", plain("200 OK", "", small), "", len(small)},
		{"larger than the read buffer", plain("200 OK", "", big), "", len(big)},
		{"body after its head", func(c net.Conn) bool {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(small))
			time.Sleep(20 * time.Millisecond)
			fmt.Fprint(c, small)
			return false
		}, "", len(small)},
		{"chunked (fasthttp)", func(c net.Conn) bool {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(small), small)
			return false
		}, "", len(small)},
		{"HTTP/1.0 (fasthttp)", func(c net.Conn) bool {
			fmt.Fprintf(c, "HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(small), small)
			return true
		}, "", len(small)},
		{"connection close", plain("200 OK", "Connection: close\r\n", small), "", len(small)},
		{"status", plain("503 Service Unavailable", "", `{"error":"overloaded"}`), record.ErrHTTPStatus, 0},
		{"cut short", func(c net.Conn) bool {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(small), small[:10])
			return true
		}, record.ErrReset, 0},
	}
	var next atomic.Int64
	afterClose := make(chan string, len(answers)) // answers whose connection saw another request after Connection: close
	addr := serveRaw(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		closed := ""
		for {
			var req fasthttp.Request
			if req.Read(br) != nil {
				return
			}
			if closed != "" {
				afterClose <- closed
				return
			}
			i := int(next.Add(1)-1) % len(answers)
			if answers[i].write(c) {
				closed = answers[i].name
				if answers[i].kind != "" || strings.Contains(answers[i].name, "HTTP/1.0") {
					return
				}
			}
		}
	})
	out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://" + addr}},
		Load: Load{Concurrency: 1}, Stop: Stop{Requests: 2 * len(answers)}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Records) != 2*len(answers) {
		t.Fatalf("%d records, want %d", len(out.Records), 2*len(answers))
	}
	for i, r := range out.Records {
		a := answers[r.Index%len(answers)]
		if r.ErrorKind != a.kind {
			t.Errorf("record %d (%s): kind %q (%s); want %q", i, a.name, r.ErrorKind, r.Error, a.kind)
			continue
		}
		switch a.kind {
		case "":
			if r.ResponseBytes != a.bytes || r.OSL != 2 || r.FinishReason != "stop" || r.Status != 200 {
				t.Errorf("record %d (%s): %d bytes, OSL %d, finish %q, status %d; want %d bytes, OSL 2, stop, 200", i, a.name, r.ResponseBytes, r.OSL, r.FinishReason, r.Status, a.bytes)
			}
		case record.ErrHTTPStatus:
			if r.Status != 503 || !strings.Contains(r.Error, "overloaded") {
				t.Errorf("record %d (%s): status %d, %q; want 503 with the body's message", i, a.name, r.Status, r.Error)
			}
		}
	}
	select {
	case name := <-afterClose:
		t.Errorf("a request followed the answer %q on its connection", name)
	default:
	}
}

// TestLingeringCloseIsRetried: a server that half-closes an idle keep-alive connection
// and keeps reading (a lingering close), never answering on it, must not hold the next
// request until its timeout: a connection idle that long is written the ordinary way,
// whose read meets the end of the stream, and the request is retried on a fresh one.
func TestLingeringCloseIsRetried(t *testing.T) {
	addr := serveRaw(t, func(c net.Conn) {
		if !answerHello(c) {
			return
		}
		time.Sleep(100 * time.Millisecond)
		_ = c.(*net.TCPConn).CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, c) // linger: read whatever comes, answer nothing
	})
	out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://" + addr}},
		Load: Load{Concurrency: 1, Rate: 0.8, Arrival: ArrivalConstant}, Stop: Stop{Requests: 2, Timeout: 3 * time.Second}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Records {
		if !r.OK() {
			t.Errorf("record %d: %s %s; want the half-closed connection retried", r.Index, r.ErrorKind, r.Error)
		}
	}
}
