package mockserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dial opens a raw connection to s, closed at cleanup.
func dial(t *testing.T, s *Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func chatBody(maxTokens int, stream bool) string {
	return fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":%d,"stream":%v}`, maxTokens, stream)
}

func rawPost(path, body string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
}

// TestMaxConnections: connections over --max-connections get 503 with Retry-After
// (recorded as rejected), and once one closes a new one is served.
func TestMaxConnections(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	s := start(t, Config{Fast: true, MaxConnections: 3, RecordFile: file, Faults: Faults{RetryAfterSeconds: 7}})
	held := make([]net.Conn, 3)
	for i := range held {
		held[i] = dial(t, s)
		// A served request proves the connection was accepted and counted.
		io.WriteString(held[i], rawPost(pathChat, chatBody(2, false)))
		resp, _ := readStream(t, bufio.NewReader(held[i]))
		if resp.StatusCode != 200 {
			t.Fatalf("connection %d: status %d, want 200", i, resp.StatusCode)
		}
	}
	over := dial(t, s)
	over.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(over, rawPost(pathChat, chatBody(2, false)))
	resp, b := readStream(t, bufio.NewReader(over))
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "7" || !strings.Contains(string(b), "max-connections") {
		t.Fatalf("4th connection: status %d, Retry-After %q, body %s; want 503, 7 and a message naming --max-connections",
			resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	held[0].Close()
	// The server notices the close when its read returns; retry (bounded) until then.
	var status int
	for range 200 {
		resp, _ := post(t, s.URL()+pathChat, chatBody(2, false))
		if status = resp.StatusCode; status == 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status != 200 {
		t.Fatalf("after a connection closed: status %d, want 200", status)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rej := s.RejectedRecords()
	if len(rej) == 0 || rej[0].Rejected != "too_many_connections" || rej[0].Status != 503 || rej[0].Endpoint != pathChat {
		t.Errorf("rejected records = %+v; want too_many_connections 503 on %s", rej, pathChat)
	}
	if got := s.Summary().Rejected["too_many_connections"]; got != len(rej) {
		t.Errorf("summary rejected_requests[too_many_connections] = %d, want %d", got, len(rej))
	}
}

// TestReadTimeoutCutsSlowloris: a client that sends its headers a byte at a time is cut
// at the read timeout, and a keep-alive connection left idle is closed at the idle
// timeout; neither leaves a record.
func TestReadTimeoutCutsSlowloris(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	s := start(t, Config{Fast: true, ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond, RecordFile: file})
	slow := dial(t, s)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		msg := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", 1000)
		for i := range len(msg) {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := slow.Write([]byte{msg[i]}); err != nil {
				return
			}
		}
	}()
	slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.ReadAll(slow)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("slowloris connection still open after 10 s; want it cut at the 300 ms read timeout")
	}
	idle := dial(t, s)
	io.WriteString(idle, rawPost(pathChat, chatBody(2, false)))
	br := bufio.NewReader(idle)
	if resp, _ := readStream(t, br); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := br.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("idle keep-alive connection: read %d, %v; want EOF from the 300 ms idle timeout", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if r, rej := s.Records(), s.RejectedRecords(); len(r) != 1 || len(rej) != 0 {
		t.Errorf("records %d, rejected %d; want 1 (the served request) and 0", len(r), len(rej))
	}
}

// TestResetAfterStreamRecordsNothing: a client that resets its idle keep-alive
// connection after a completed stream leaves one record (the stream), no phantom 400.
func TestResetAfterStreamRecordsNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	s := start(t, Config{Fast: true, RecordFile: file})
	c := dial(t, s)
	io.WriteString(c, rawPost(pathChat, chatBody(5, true)))
	br := bufio.NewReader(c)
	if resp, _ := readStream(t, br); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	c.(*net.TCPConn).SetLinger(0)
	c.Close() // RST
	// Give the server the reset before shutdown closes the connection itself.
	time.Sleep(200 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file + RejectedSuffix)
	if r := s.Records(); len(r) != 1 || len(b) != 0 || s.Summary().Answered != 1 {
		t.Errorf("records %d, rejected file %q, answered %d; want 1, empty, 1", len(r), b, s.Summary().Answered)
	}
}

// TestHTTP10StreamIsCloseDelimited: over HTTP/1.0 the stream has no chunked framing:
// the raw bytes after the header are SSE events, ended by the server closing.
func TestHTTP10StreamIsCloseDelimited(t *testing.T) {
	s := start(t, Config{Fast: true})
	c := dial(t, s)
	body := chatBody(4, true)
	fmt.Fprintf(c, "POST %s HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", pathChat, len(body), body)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(all), "\r\n\r\n")
	if strings.Contains(strings.ToLower(head), "transfer-encoding") || strings.Contains(strings.ToLower(head), "content-length") {
		t.Errorf("HTTP/1.0 stream header:\n%s\nwant no Transfer-Encoding and no Content-Length", head)
	}
	if !strings.HasPrefix(rest, "data: ") || !strings.HasSuffix(rest, "data: [DONE]\n\n") {
		t.Errorf("HTTP/1.0 stream body starts %q, ends %q; want raw SSE events ending with [DONE]", rest[:min(len(rest), 20)], rest[max(0, len(rest)-20):])
	}
	if _, chunks, _, _ := streamText(t, []byte(rest)); chunks != 4 {
		t.Errorf("chunks = %d, want 4", chunks)
	}
}

var _ = http.StatusOK
