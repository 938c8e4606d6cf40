package loadgen

import (
	"strings"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// messagesAPI is the Anthropic Messages API: the system prompt as a top-level field,
// the history and prompt as messages, input counted through the chat template (a
// payload's is not: its top-level system prompt is not parsed), max_tokens always
// sent (the API requires it), the key in X-Api-Key with an anthropic-version header.
// Its stream events go through the same openai.ChunkParser (content_block_delta's
// text_delta and thinking_delta, message_start's and message_delta's usage,
// message_delta's stop_reason) and end without [DONE]; a whole answer's content
// blocks are read here.
type messagesAPI struct{ openaiAPI }

func (messagesAPI) path() string       { return openai.PathMessages }
func (messagesAPI) generates() bool    { return true }
func (messagesAPI) endsWithDone() bool { return false }

func (messagesAPI) input(t *dataset.Turn, _ *turnCtx) inputCount {
	if t.Body != nil {
		return inputPrompt
	}
	return inputTemplate
}

func (k messagesAPI) body(b *bodyBuilder, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	return b.json(k, t, tc, stream)
}

func (messagesAPI) fill(w *wireBody, t *dataset.Turn, tc *turnCtx) {
	w.System = tc.system
	w.Messages = append(w.Messages, tc.history...)
	w.Messages = append(w.Messages, message{Role: "user", Content: t.Prompt})
	if t.OSL <= 0 {
		n := DefaultMessagesMaxTokens // required by the API
		w.MaxTokens = &n
	}
}

// capOutput: max_tokens is Anthropic's only output cap, whatever field is configured.
func (messagesAPI) capOutput(w *wireBody, _ string, osl *int) { w.MaxTokens = osl }

// auth sends the key in X-Api-Key instead of a bearer token, and the
// anthropic-version header unless the run sets its own.
func (messagesAPI) auth(hs [][2]string, key string, configured map[string]string) [][2]string {
	if key != "" {
		hs = append(hs, [2]string{openai.HeaderAPIKey, key})
	}
	if !hasHeader(configured, openai.HeaderAnthropicVersion) {
		hs = append(hs, [2]string{openai.HeaderAnthropicVersion, AnthropicVersion})
	}
	return hs
}

// parseWhole reads a whole message in one pass: its text blocks (content) and
// thinking blocks (reasoning), each concatenated in order (StreamChunk.Text and
// Reasoning); a message always carries output.
func (messagesAPI) parseWhole(p *openai.ChunkParser, body []byte, ch *openai.StreamChunk, res *result) (content, choices bool, err error) {
	if err := p.Parse(body, ch); err != nil {
		return false, false, err
	}
	res.add(ch.Text, ch.Reasoning)
	return len(ch.Text) > 0, true, nil
}

// event applies one stream event's usage: message_start carries input_tokens (and
// an output_tokens of 1 or so), message_delta the cumulative output_tokens (and, on
// some servers, input_tokens again). Only content_block_delta carries output.
func (messagesAPI) event(ch *openai.StreamChunk, rec *record.Client) bool {
	if ch.HasUsage {
		if ch.Usage.PromptTokens > 0 || rec.UsagePromptTokens < 0 {
			rec.UsagePromptTokens = ch.Usage.PromptTokens
		}
		rec.UsageCompletionTokens = ch.Usage.CompletionTokens
	}
	return ch.Choices > 0 || string(ch.Type) == openai.EventContentBlockDelta
}

// hasHeader reports whether hs sets header name (case-insensitively).
func hasHeader(hs map[string]string, name string) bool {
	for k := range hs {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}
