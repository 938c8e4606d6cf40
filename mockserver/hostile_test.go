package mockserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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
	over.Close()
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

// TestMaxModelLen: input past --max-model-len is refused with vLLM's context-length
// error naming both numbers, and tokenizing stopped early; input plus a requested
// output past it is refused naming max_tokens; a default output is shortened to fit;
// long input within the limit is counted exactly.
func TestMaxModelLen(t *testing.T) {
	s := start(t, Config{Fast: true, MaxModelLen: 1000, MaxEmbeddingInputs: 3, MaxRankingDocs: 2})
	chat := s.URL() + pathChat
	words := strings.Repeat("word ", 40000) // 40,000 tokens, 200 kB: several segments
	resp, b := post(t, chat, `{"model":"m","messages":[{"role":"user","content":"`+words+`"}]}`)
	e := errorBody(t, b)
	var n int
	fmt.Sscanf(e.Message[strings.Index(e.Message, "has ")+4:], "%d", &n)
	if resp.StatusCode != 400 || e.Param == nil || *e.Param != "messages" || !strings.Contains(e.Message, "maximum context length is 1000 tokens") ||
		n <= 1000 || n >= 40000 || e.Code == nil || *e.Code != "context_length_exceeded" {
		t.Errorf("40k-token prompt: %d %s; want 400 context_length_exceeded on messages, naming 1000 and a count in (1000, 40000) (tokenizing stopped)", resp.StatusCode, b)
	}
	prompt := strings.Repeat("word ", 200)
	resp, b = post(t, chat, `{"model":"m","messages":[{"role":"user","content":"`+prompt+`"}],"max_tokens":900}`)
	if e := errorBody(t, b); resp.StatusCode != 400 || *e.Param != "max_tokens" || !strings.Contains(e.Message, "too large: 900") || !strings.Contains(e.Message, "1000") {
		t.Errorf("input + max_tokens 900 over 1000: %d %s; want 400 naming max_tokens, 900 and 1000", resp.StatusCode, b)
	}
	resp, b = post(t, s.URL()+"/v1/completions", `{"model":"m","prompt":"`+strings.Repeat("word ", 990)+`"}`)
	var cmp struct {
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	json.Unmarshal(b, &cmp)
	if resp.StatusCode != 200 || cmp.Usage.PromptTokens+cmp.Usage.CompletionTokens != 1000 {
		t.Errorf("990-token prompt, default max_tokens: %d usage %+v; want 200 and the output shortened to fit 1000", resp.StatusCode, cmp.Usage)
	}
	resp, b = post(t, s.URL()+"/v1/embeddings", `{"model":"m","input":["a","b","c","d"]}`)
	if e := errorBody(t, b); resp.StatusCode != 400 || *e.Param != "input" || !strings.Contains(e.Message, "limit of 3") {
		t.Errorf("4 embedding inputs over 3: %d %s", resp.StatusCode, b)
	}
	resp, b = post(t, s.URL()+"/v1/rerank", `{"model":"m","query":"q","documents":["a","b","c"]}`)
	if e := errorBody(t, b); resp.StatusCode != 400 || *e.Param != "documents" || !strings.Contains(e.Message, "limit of 2") {
		t.Errorf("3 documents over 2: %d %s", resp.StatusCode, b)
	}
	// Long input under a larger limit is counted exactly (the segments are only a
	// bound; the accepted text is encoded whole).
	big := start(t, Config{Fast: true})
	resp, b = post(t, big.URL()+"/v1/completions", `{"model":"m","prompt":"`+words+`","max_tokens":1}`)
	json.Unmarshal(b, &cmp)
	if want := big.tok.Count(words, false); resp.StatusCode != 200 || cmp.Usage.PromptTokens != want {
		t.Errorf("40k-token prompt under 131072: %d prompt_tokens %d, want 200 and %d", resp.StatusCode, cmp.Usage.PromptTokens, want)
	}
}

// TestSamplingValidation: temperature, top_p, n and message roles are validated as
// vLLM does, the error naming the field.
func TestSamplingValidation(t *testing.T) {
	s := start(t, Config{Fast: true})
	msg := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct{ url, body, param string }{
		{pathChat, `{"model":"m",` + msg + `,"temperature":-1}`, "temperature"},
		{pathChat, `{"model":"m",` + msg + `,"temperature":2.5}`, "temperature"},
		{pathChat, `{"model":"m",` + msg + `,"top_p":5}`, "top_p"},
		{pathChat, `{"model":"m",` + msg + `,"top_p":0}`, "top_p"},
		{pathChat, `{"model":"m",` + msg + `,"n":0}`, "n"},
		{pathChat, `{"model":"m","messages":[{"role":"wizard","content":"hi"}]}`, "messages[0].role"},
		{pathCompletions, `{"model":"m","prompt":"x","temperature":-0.1}`, "temperature"},
		{pathCompletions, `{"model":"m","prompt":"x","top_p":1.5}`, "top_p"},
		{"/v1/responses", `{"model":"m","input":"x","top_p":7}`, "top_p"},
		{"/v1/responses", `{"model":"m","input":[{"role":"robot","content":"x"}]}`, "input[0].role"},
	} {
		resp, b := post(t, s.URL()+tc.url, tc.body)
		if e := errorBody(t, b); resp.StatusCode != 400 || e.Param == nil || *e.Param != tc.param {
			t.Errorf("POST %s %s: %d %s; want 400 with param %q", tc.url, tc.body, resp.StatusCode, b, tc.param)
		}
	}
	for _, body := range []string{`{"model":"m",` + msg + `,"temperature":0,"top_p":1,"n":1,"max_tokens":2}`,
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"developer","content":"d"},{"role":"user","content":"u"},{"role":"assistant","content":"a"},{"role":"tool","content":"t"}],"max_tokens":2}`} {
		if resp, b := post(t, s.URL()+pathChat, body); resp.StatusCode != 200 {
			t.Errorf("valid %s: %d %s", body, resp.StatusCode, b)
		}
	}
}

// TestBodyTooLargeIsAnswered: a client still writing a body over the limit reads the
// 413 (the server drains before closing instead of resetting), recorded as rejected.
func TestBodyTooLargeIsAnswered(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	s := start(t, Config{Fast: true, BodyLimit: 1 << 20, RecordFile: file})
	c := dial(t, s)
	body := strings.Repeat("w ", 8<<20)
	go fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", pathChat, len(body), body)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, b := readStream(t, bufio.NewReader(c))
	if resp.StatusCode != 413 || !strings.Contains(string(b), "limit of 1048576 bytes") {
		t.Fatalf("status %d body %s; want 413 naming the limit", resp.StatusCode, b)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if rej := s.RejectedRecords(); len(rej) != 1 || rej[0].Rejected != "body_too_large" || len(s.Records()) != 0 {
		t.Errorf("rejected %+v, records %d; want one body_too_large and none served", rej, len(s.Records()))
	}
}
