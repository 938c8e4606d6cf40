package mockserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func TestCapture(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cap.jsonl")
	c, err := NewCapture(CaptureConfig{Out: out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	bodies := []string{
		`{"model":"m","messages":[{"role":"user","content":"hi \u00e9"}],"max_tokens":5}`,
		"{\n  \"model\": \"m\",\n  \"prompt\": \"pretty\"\n}",
		`{"model":"m","messages":[{"role":"user","content":"s"}],"stream":true}`,
		`not json at all`,
	}
	paths := []string{"/v1/chat/completions", "/v1/completions", "/v1/chat/completions", "/v1/whatever"}
	for i, b := range bodies {
		resp, _ := post(t, c.URL()+paths[i], b, "Authorization", "Bearer sk-SECRET", "X-Api-Key", "SECRET2")
		if resp.StatusCode != 200 {
			t.Errorf("capture answered %d", resp.StatusCode)
		}
	}
	// A real client accepts the minimal answers, streaming and not.
	client := oai.NewClient(option.WithBaseURL(c.URL()+"/v1"), option.WithAPIKey("sk-SECRET"), option.WithMaxRetries(0))
	ctx := context.Background()
	resp, err := client.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "m", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("x")}})
	if err != nil || resp.Choices[0].Message.Content == "" {
		t.Errorf("SDK on capture: %v", err)
	}
	st := client.Chat.Completions.NewStreaming(ctx, oai.ChatCompletionNewParams{Model: "m", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("x")}})
	n := 0
	for st.Next() {
		n++
	}
	if st.Err() != nil || n == 0 {
		t.Errorf("SDK stream on capture: %d chunks, %v", n, st.Err())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("SECRET")) {
		t.Errorf("capture file contains a credential:\n%s", raw)
	}
	caps, err := ReadCapture(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) != len(bodies)+2 {
		t.Fatalf("captured %d requests, want %d", len(caps), len(bodies)+2)
	}
	for i, b := range bodies {
		if string(caps[i].Body) != b || caps[i].Seq != uint64(i+1) || caps[i].Path != paths[i] {
			t.Errorf("capture %d: seq %d path %s body %q; want seq %d path %s body %q", i, caps[i].Seq, caps[i].Path, caps[i].Body, i+1, paths[i], b)
		}
	}
	if !strings.Contains(string(raw), `"body":{"model":"m","messages":[{"role":"user","content":"hi \u00e9"}],"max_tokens":5}`) {
		t.Errorf("one-line JSON body is not inline byte for byte:\n%s", raw)
	}
}

// TestCaptureStreamsToDisk: with a capture file, bodies are written as they arrive and
// none is held in memory; Captures reads them back byte for byte.
func TestCaptureStreamsToDisk(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cap.jsonl")
	c, err := NewCapture(CaptureConfig{Out: out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	body := `{"model":"m","prompt":"` + strings.Repeat("word ", 20000) + `"}`
	const n = 40
	for range n {
		resp, err := http.Post(c.URL()+"/v1/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	c.mu.Lock()
	kept := len(c.caps)
	c.mu.Unlock()
	if kept != 0 {
		t.Errorf("capture server holds %d bodies in memory, want 0 (they are on disk)", kept)
	}
	caps := c.Captures()
	if len(caps) != n || c.Count() != n {
		t.Fatalf("Captures() = %d, Count() = %d; want %d", len(caps), c.Count(), n)
	}
	for _, cp := range caps {
		if string(cp.Body) != body {
			t.Fatalf("capture %d body differs (%d bytes, want %d)", cp.Seq, len(cp.Body), len(body))
		}
	}
}
