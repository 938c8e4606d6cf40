package mockserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/internal/testutil/toktest"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// gpt2 returns the shared gpt2 built-in.
func gpt2(t testing.TB) *tokenizer.Tokenizer { return toktest.Load(t, "gpt2") }

// start runs a server for the test and closes it at cleanup.
func start(t testing.TB, cfg Config, opts ...Option) *Server {
	t.Helper()
	if cfg.Tokenizer == "" || cfg.Tokenizer == "gpt2" {
		opts = append([]Option{WithTokenizer(gpt2(t))}, opts...)
	}
	s, err := New(append([]Option{WithConfig(cfg)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func post(t testing.TB, url, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, b
}

// streamText reads a chat/completions SSE body and returns the text, the number of
// content chunks, the finish reason and the usage chunk (if any).
func streamText(t testing.TB, body []byte) (text string, chunks int, finish string, usage *openai.Usage) {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(body))
	var p openai.ChunkParser
	var c openai.StreamChunk
	done := false
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("sse: %v", err)
		}
		if sse.IsDone(ev.Data) {
			done = true
			continue
		}
		if err := p.Parse(ev.Data, &c); err != nil {
			t.Fatalf("chunk %s: %v", ev.Data, err)
		}
		if len(c.Text) > 0 {
			text += string(c.Text)
			chunks++
		}
		if c.FinishReason != nil {
			finish = string(c.FinishReason)
		}
		if c.HasUsage {
			u := c.Usage
			usage = &u
		}
	}
	if !done {
		t.Errorf("stream did not end with [DONE]")
	}
	return
}

func TestChatStreamCountsAndRecords(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rec.jsonl")
	s := start(t, Config{Fast: true, RecordFile: file})
	tok := gpt2(t)
	body := `{"model":"m","messages":[{"role":"user","content":"Hello there, how are you?"}],"stream":true,"max_tokens":50,"ignore_eos":true,"stream_options":{"include_usage":true}}`
	resp, b := post(t, s.URL()+"/v1/chat/completions", body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	text, chunks, finish, usage := streamText(t, b)
	if got := tok.Count(text, false); got != 50 {
		t.Errorf("client re-count of output = %d, want 50 (text %q)", got, text)
	}
	if chunks != 50 || finish != "length" {
		t.Errorf("chunks, finish = %d, %q; want 50, length", chunks, finish)
	}
	wantISL := tok.Count(tokenizer.RenderChatMLFallback([]tokenizer.Message{{Role: "user", Content: "Hello there, how are you?"}}, true), false)
	if usage == nil || usage.PromptTokens != wantISL || usage.CompletionTokens != 50 {
		t.Errorf("usage = %+v, want prompt %d completion 50", usage, wantISL)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := record.Read[record.Server](f)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records: %v, %d lines", err, len(recs))
	}
	r := recs[0]
	if r.ISL != wantISL || r.OSL != 50 || *r.RequestedOSL != 50 || !*r.IgnoreEOS || !r.Stream || r.TokenizationMode != record.ModeChatTemplateFallback || r.FinishReason != "length" {
		t.Errorf("record = %+v", r)
	}
	if _, err := os.Stat(file + ".summary.json"); err != nil {
		t.Errorf("summary file: %v", err)
	}
	_ = bufio.NewReader
	_ = json.Marshal
}

func asErr[T error](err error, target *T) bool { return errors.As(err, target) }
