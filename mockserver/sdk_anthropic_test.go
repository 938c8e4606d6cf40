package mockserver

import (
	"context"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// TestAnthropicSDK: Anthropic's official Go SDK reads the mock's Messages API, whole
// and streamed (accumulated event by event), with the thinking block before the text
// and usage counting both, and sends its key as x-api-key.
func TestAnthropicSDK(t *testing.T) {
	s := start(t, Config{Fast: true, APIKey: "sk-ant-test", ReasoningTokens: fixedSpec(t, "fixed:3")})
	client := anthropic.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("sk-ant-test"), option.WithMaxRetries(0))
	params := anthropic.MessageNewParams{
		Model:     "claude-mock",
		MaxTokens: 12,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello"))},
	}
	check := func(how string, m *anthropic.Message) {
		t.Helper()
		var kinds []string
		thinking, text := "", ""
		for _, b := range m.Content {
			kinds = append(kinds, b.Type)
			thinking += b.Thinking
			text += b.Text
		}
		if len(kinds) != 2 || kinds[0] != "thinking" || kinds[1] != "text" || thinking == "" || text == "" {
			t.Errorf("%s: content blocks %v (thinking %q, text %q); want a thinking block, then a text block", how, kinds, thinking, text)
		}
		if m.Usage.OutputTokens != 12 || m.Usage.InputTokens <= 0 || m.StopReason != "max_tokens" {
			t.Errorf("%s: usage %d in / %d out, stop %q; want 12 out (thinking included) and max_tokens", how, m.Usage.InputTokens, m.Usage.OutputTokens, m.StopReason)
		}
	}
	m, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatalf("Messages.New: %v", err)
	}
	check("whole", m)

	stream := client.Messages.NewStreaming(context.Background(), params)
	var acc anthropic.Message
	events := 0
	for stream.Next() {
		events++
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatalf("accumulate event %d: %v", events, err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	check("streamed", &acc)

	bad := anthropic.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("wrong"), option.WithMaxRetries(0))
	if _, err := bad.Messages.New(context.Background(), params); err == nil {
		t.Errorf("a wrong key was accepted")
	}
}
