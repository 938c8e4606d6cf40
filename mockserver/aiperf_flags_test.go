package mockserver

import (
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestAIPerfMockFlags: aiperf-mock-server's short flags set the same fields as the long
// ones, and its --auth-header-name, --disable-models-endpoint and --tokenizer-revision
// are understood.
func TestAIPerfMockFlags(t *testing.T) {
	parse := func(args ...string) Config {
		var c Config
		fs := flag.NewFlagSet("mock", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.RegisterFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return c
	}
	long, short := parse("--port", "9001", "--ttft", "50", "--fast"), parse("-p", "9001", "-t", "50", "-f")
	if long.Port != short.Port || long.Fast != short.Fast || long.TTFT.String() != short.TTFT.String() || short.Port != 9001 || !short.Fast {
		t.Errorf("short flags: port %d fast %v ttft %v; long: port %d fast %v ttft %v", short.Port, short.Fast, short.TTFT, long.Port, long.Fast, long.TTFT)
	}
	if c := parse("--tokenizer", "Qwen/Qwen3-0.6B", "--tokenizer-revision", "abc123"); c.tokenizerRef() != "Qwen/Qwen3-0.6B@abc123" {
		t.Errorf("tokenizer ref = %q; want the Hub id at the revision", c.tokenizerRef())
	}
	if c := parse("--tokenizer", "gpt2", "--tokenizer-revision", "abc123"); c.tokenizerRef() != "gpt2" {
		t.Errorf("a built-in name got a revision: %q", c.tokenizerRef())
	}

	s := start(t, parse("--api-key", "k-1", "--auth-header-name", "X-API-Key", "--disable-models-endpoint", "--fast", "--port", "0", "--host", "127.0.0.1"))
	body := `{"model":"perfgate-model","prompt":"hi","max_tokens":2}`
	if resp, _ := post(t, s.URL()+"/v1/completions", body, "X-API-Key", "k-1"); resp.StatusCode != 200 {
		t.Errorf("the key in X-API-Key: status %d; want 200", resp.StatusCode)
	}
	if resp, _ := post(t, s.URL()+"/v1/completions", body, "Authorization", "Bearer k-1"); resp.StatusCode != 401 {
		t.Errorf("the key as a bearer token with --auth-header-name X-API-Key: status %d; want 401", resp.StatusCode)
	}
	if st, b := get(t, s.URL()+"/v1/models"); st != 404 {
		t.Errorf("/v1/models with --disable-models-endpoint: %d %s; want 404", st, b)
	}
}

// TestMessagesErrorEnvelope: errors on /v1/messages use Anthropic's envelope; the
// OpenAI endpoints keep theirs.
func TestMessagesErrorEnvelope(t *testing.T) {
	s := start(t, Config{Fast: true})
	resp, b := post(t, s.URL()+"/v1/messages", `{"model":"perfgate-model","messages":[{"role":"user","content":"hi"}]}`, "anthropic-version", "2023-06-01")
	var env struct {
		Type  string `json:"type"`
		Error struct {
			Type, Message string
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil || resp.StatusCode != 400 || env.Type != "error" || env.Error.Type != "invalid_request_error" || env.Error.Message == "" {
		t.Errorf("/v1/messages without max_tokens: %d %s; want 400 with Anthropic's error envelope", resp.StatusCode, b)
	}
	resp, b = post(t, s.URL()+"/v1/completions", `{"model":"perfgate-model","prompt":"hi","temperature":-1}`)
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"param":"temperature"`) || strings.Contains(string(b), `"type":"error"`) {
		t.Errorf("/v1/completions error: %d %s; want OpenAI's envelope naming temperature", resp.StatusCode, b)
	}
}
