package mockserver

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
)

const testTools = `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}]`

func startTools(t *testing.T, c Config) *Server {
	t.Helper()
	c.Fast = true
	s, err := New(WithConfig(c))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func postBody(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestToolCallWhole: a whole answer to a request with tools is one tool call of the
// named (else the first) function, with JSON arguments whose tokens are usage's
// completion_tokens, finish_reason tool_calls, and no content.
func TestToolCallWhole(t *testing.T) {
	s := startTools(t, Config{ToolCallTokens: distribution.MustSpec("fixed:12")})
	tok := s.tok
	for _, c := range []struct{ choice, want string }{
		{``, "get_weather"}, {`,"tool_choice":"auto"`, "get_weather"}, {`,"tool_choice":"required"`, "get_weather"},
		{`,"tool_choice":{"type":"function","function":{"name":"search"}}`, "search"},
	} {
		code, b := postBody(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":64,"tools":`+testTools+c.choice+`}`)
		var r openai.ChatCompletion
		if err := json.Unmarshal(b, &r); code != 200 || err != nil || len(r.Choices) != 1 {
			t.Fatalf("%s: %d %s", c.choice, code, b)
		}
		m := r.Choices[0]
		if m.FinishReason != "tool_calls" || len(m.Message.ToolCalls) != 1 || m.Message.Content != "" {
			t.Fatalf("%s: %s; want one tool call, finish_reason tool_calls, no content", c.choice, b)
		}
		call := m.Message.ToolCalls[0]
		var args map[string]string
		if call.Function.Name != c.want || call.Type != "function" || !strings.HasPrefix(call.ID, "call_") || json.Unmarshal([]byte(call.Function.Arguments), &args) != nil {
			t.Errorf("%s: call %+v; want %s with JSON arguments", c.choice, call, c.want)
		}
		if n := tok.Count(call.Function.Arguments, false); r.Usage.CompletionTokens != n || len(strings.Fields(args["input"])) != 12 {
			t.Errorf("%s: usage.completion_tokens %d, the arguments encode to %d tokens, %d words; want equal, 12 words", c.choice, r.Usage.CompletionTokens, n, len(strings.Fields(args["input"])))
		}
	}
	// tool_choice none answers in text.
	_, b := postBody(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8,"tools":`+testTools+`,"tool_choice":"none"}`)
	if strings.Contains(string(b), "tool_calls") || !strings.Contains(string(b), `"finish_reason":"length"`) {
		t.Errorf("tool_choice none: %s; want a text answer", b)
	}
}

// TestToolCallBadInput: bad tools or tool_choice are refused with a 400 naming the
// field.
func TestToolCallBadInput(t *testing.T) {
	s := startTools(t, Config{})
	for _, c := range []struct{ extra, want string }{
		{`,"tool_choice":"required"`, `tool_choice \"required\" needs tools`},
		{`,"tools":` + testTools + `,"tool_choice":{"type":"function","function":{"name":"nope"}}`, `the function \"nope\", which is not among the tools`},
		{`,"tools":` + testTools + `,"tool_choice":"sometimes"`, `tool_choice must be`},
		{`,"tools":[{"type":"function","function":{}}]`, `tools[0].function.name is required`},
		{`,"tools":{"a":1}`, `tools must be a list`},
	} {
		code, b := postBody(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":"hi"}]`+c.extra+`}`)
		if code != 400 || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %d %s; want 400 with %q", c.extra, code, b, c.want)
		}
	}
}

// TestToolCallStream: a streamed answer is OpenAI's tool_calls deltas — the call's
// id, type and name with empty arguments first, then argument fragments that join to
// JSON — ending with finish_reason tool_calls and usage counting the arguments.
func TestToolCallStream(t *testing.T) {
	s := startTools(t, Config{ToolCallTokens: distribution.MustSpec("fixed:20")})
	code, b := postBody(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":64,"stream":true,"stream_options":{"include_usage":true},"tools":`+testTools+`}`)
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	rd := sse.NewReaderSize(strings.NewReader(string(b)), 1024, 0)
	var p openai.ChunkParser
	var ch openai.StreamChunk
	var args strings.Builder
	var name, id, finish string
	opening, fragments, usage := 0, 0, -1
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading the stream %q: %v", b, err)
		}
		if sse.IsDone(ev.Data) {
			continue
		}
		if err := p.Parse(ev.Data, &ch); err != nil {
			t.Fatalf("event %s: %v", ev.Data, err)
		}
		for _, td := range ch.Tools {
			if td.Index != 0 {
				t.Errorf("tool call index %d; want 0", td.Index)
			}
			if len(td.ID) > 0 {
				opening++
				id, name = string(td.ID), string(td.Name)
				if len(td.Args) != 0 {
					t.Errorf("the opening delta carries arguments %q; want none", td.Args)
				}
				continue
			}
			fragments++
			args.Write(td.Args)
		}
		if len(ch.FinishReason) > 0 {
			finish = string(ch.FinishReason)
		}
		if ch.HasUsage {
			usage = ch.Usage.CompletionTokens
		}
		if len(ch.Text) > 0 {
			t.Errorf("a content delta %q in a tool-call answer", ch.Text)
		}
	}
	var a map[string]string
	if opening != 1 || name != "get_weather" || !strings.HasPrefix(id, "call_") || finish != "tool_calls" || json.Unmarshal([]byte(args.String()), &a) != nil {
		t.Fatalf("opening deltas %d, name %q, id %q, finish %q, arguments %q; want one opening get_weather delta, JSON arguments, finish tool_calls", opening, name, id, finish, args.String())
	}
	if n := s.tok.Count(args.String(), false); usage != n || fragments != 21 {
		t.Errorf("usage.completion_tokens %d, arguments %d tokens in %d fragments; want equal counts and 21 fragments (20 words, then the closing one)", usage, n, fragments)
	}
	// The stream's record is handed in after its last write: Close waits for it.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	recs := s.Records()
	if len(recs) != 1 || recs[0].ToolCall != "get_weather" || recs[0].OSL != usage || recs[0].FinishReason != "tool_calls" {
		t.Errorf("server record %+v; want tool_call get_weather, OSL = usage, finish tool_calls", recs)
	}
}
