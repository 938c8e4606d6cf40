package mockserver

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/internal/testutil"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

func fixedSpec(t *testing.T, s string) distribution.Spec {
	t.Helper()
	var sp distribution.Spec
	if err := sp.UnmarshalText([]byte(s)); err != nil {
		t.Fatal(err)
	}
	return sp
}

// reasoningStream reads a chat stream into its reasoning and content text, the order
// they came in, and the usage chunk.
func reasoningStream(t *testing.T, body []byte) (reasoning, content string, contentBeforeReasoning bool, u *openai.Usage) {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(body))
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if string(ev.Data) == "[DONE]" {
			continue
		}
		var c openai.ChatChunk
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			t.Fatalf("chunk %s: %v", ev.Data, err)
		}
		if c.Usage != nil {
			u = c.Usage
		}
		if len(c.Choices) == 0 {
			continue
		}
		d := c.Choices[0].Delta
		if d.Content != "" && d.ReasoningContent != "" {
			t.Errorf("chunk %s carries both content and reasoning", ev.Data)
		}
		if d.ReasoningContent != "" && content != "" {
			contentBeforeReasoning = true
		}
		reasoning += d.ReasoningContent
		content += d.Content
	}
	return
}

// With --reasoning-tokens the chat stream carries reasoning_content first, usage counts
// it in completion_tokens and completion_tokens_details, and reasoning_effort follows
// AIPerf's 100/250/500 rule; reasoning counts toward max_tokens.
func TestReasoningChat(t *testing.T) {
	s := start(t, Config{Fast: true, ReasoningTokens: fixedSpec(t, "fixed:7")})
	tok := gpt2(t)
	for _, tc := range []struct {
		name, effort         string
		max                  int
		wantReason, wantText int
	}{
		{"spec", "", 20, 7, 13},
		{"low effort", "low", 300, 100, 200},
		{"high effort capped", "high", 300, 300, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := ""
			if tc.effort != "" {
				extra = `,"reasoning_effort":"` + tc.effort + `"`
			}
			body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":` + itoa(tc.max) +
				`,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}` + extra + `}`
			resp, b := post(t, s.URL()+pathChat, body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			reasoning, content, misordered, u := reasoningStream(t, b)
			if misordered {
				t.Errorf("reasoning came after content")
			}
			if got := tok.Count(reasoning, false); got != tc.wantReason {
				t.Errorf("reasoning re-counts to %d tokens, want %d", got, tc.wantReason)
			}
			if got := tok.Count(content, false); got != tc.wantText {
				t.Errorf("content re-counts to %d tokens, want %d", got, tc.wantText)
			}
			if u == nil || u.CompletionTokens != tc.max || u.CompletionTokensDetails == nil || u.CompletionTokensDetails.ReasoningTokens != tc.wantReason {
				t.Errorf("usage %+v (details %+v), want completion %d with %d reasoning", u, u.CompletionTokensDetails, tc.max, tc.wantReason)
			}
		})
	}
	t.Run("whole", func(t *testing.T) {
		resp, b := post(t, s.URL()+pathChat, `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":20,"ignore_eos":true}`)
		var cc openai.ChatCompletion
		if err := json.Unmarshal(b, &cc); err != nil || resp.StatusCode != 200 {
			t.Fatalf("status %d, %v: %s", resp.StatusCode, err, b)
		}
		m := cc.Choices[0].Message
		if tok.Count(m.ReasoningContent, false) != 7 || tok.Count(m.Content, false) != 13 || cc.Usage.CompletionTokensDetails == nil ||
			cc.Usage.CompletionTokensDetails.ReasoningTokens != 7 {
			t.Errorf("message %+v usage %+v, want 7 reasoning and 13 content tokens", m, cc.Usage)
		}
	})
	// The recording counts the reasoning tokens too, as usage does.
	s.Close()
	var got []int
	for _, r := range s.Records() {
		got = append(got, r.ReasoningTokens)
	}
	if fmt.Sprint(got) != "[7 100 300 7]" {
		t.Errorf("recorded reasoning tokens %v, want [7 100 300 7]", got)
	}
	// And the summary has their distribution.
	q := s.Summary().PerEndpoint[pathChat].ReasoningTokens
	if q == nil || q.Min != 7 || q.Max != 300 || q.Mean != (7+100+300+7)/4.0 {
		t.Errorf("summary reasoning tokens %+v, want min 7, max 300, mean %v", q, (7+100+300+7)/4.0)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// The Messages stream's exact bytes (a thinking block, then a text block), pinned.
func TestMessagesStreamGolden(t *testing.T) {
	s := start(t, Config{Fast: true, ReasoningTokens: fixedSpec(t, "fixed:2"), TokensPerChunk: 2})
	resp, b := post(t, s.URL()+pathMessages, `{"model":"claude-mock","max_tokens":5,"ignore_eos":true,"stream":true,"system":"Be brief.","messages":[{"role":"user","content":"Hello"}]}`,
		"X-Request-Id", "req-1")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != sse.ContentType {
		t.Fatalf("status %d, content type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	testutil.Golden(t, "testdata/messages_stream.golden", b, *updateGolden)
	_, b = post(t, s.URL()+pathMessages, `{"model":"claude-mock","max_tokens":5,"ignore_eos":true,"system":"Be brief.","messages":[{"role":"user","content":"Hello"}]}`,
		"X-Request-Id", "req-2")
	testutil.Golden(t, "testdata/messages_whole.golden", append(b, '\n'), *updateGolden)
}

// Messages requests need max_tokens and take the API key as x-api-key.
func TestMessagesRequest(t *testing.T) {
	s := start(t, Config{Fast: true, APIKey: "k"})
	resp, b := post(t, s.URL()+pathMessages, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "X-Api-Key", "k")
	if resp.StatusCode != 400 || !bytes.Contains(b, []byte("max_tokens")) {
		t.Errorf("without max_tokens: %d %s, want 400 naming max_tokens", resp.StatusCode, b)
	}
	resp, b = post(t, s.URL()+pathMessages, `{"model":"m","max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`, "X-Api-Key", "wrong")
	if resp.StatusCode != 401 {
		t.Errorf("wrong x-api-key: %d %s, want 401", resp.StatusCode, b)
	}
	resp, b = post(t, s.URL()+pathMessages, `{"model":"m","max_tokens":3,"ignore_eos":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "X-Api-Key", "k")
	var m openai.MessagesResponse
	if err := json.Unmarshal(b, &m); err != nil || resp.StatusCode != 200 || m.Usage.OutputTokens != 3 || *m.StopReason != "max_tokens" {
		t.Errorf("whole message %d %s (%v), want 3 output tokens, stop_reason max_tokens", resp.StatusCode, b, err)
	}
}
