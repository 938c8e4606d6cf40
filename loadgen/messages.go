package loadgen

import (
	"encoding/json"
	"strings"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
)

// This file holds what the Anthropic Messages API ([EndpointMessages]) needs beyond
// the OpenAI endpoints: its stream events go through the same openai.ChunkParser
// (content_block_delta's text_delta and thinking_delta, message_start's and
// message_delta's usage, message_delta's stop_reason), and its non-streaming body's
// content blocks are read here.

// hasHeader reports whether hs sets header name (case-insensitively).
func hasHeader(hs map[string]string, name string) bool {
	for k := range hs {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// messagesUsage applies one Anthropic stream event's usage to rec: message_start
// carries input_tokens (and an output_tokens of 1 or so), message_delta the cumulative
// output_tokens (and, on some servers, input_tokens again).
func messagesUsage(ch *openai.StreamChunk, rec *record.Client) {
	if !ch.HasUsage {
		return
	}
	if ch.Usage.PromptTokens > 0 || rec.UsagePromptTokens < 0 {
		rec.UsagePromptTokens = ch.Usage.PromptTokens
	}
	rec.UsageCompletionTokens = ch.Usage.CompletionTokens
}

// messagesBody is a non-streaming Messages response's generated text: its text blocks
// (content) and thinking blocks (reasoning), each concatenated in order.
func messagesBody(body []byte) (content, reasoning string) {
	var r struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		} `json:"content"`
	}
	if json.Unmarshal(body, &r) != nil {
		return "", ""
	}
	var c, t strings.Builder
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			c.WriteString(b.Text)
		case "thinking":
			t.WriteString(b.Thinking)
		}
	}
	return c.String(), t.String()
}
