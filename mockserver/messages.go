package mockserver

import (
	"encoding/json"
	"fmt"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// mockSignature is the signature closing every thinking block (clients keep it to send
// the block back; the mock never checks it).
const mockSignature = "perfgate-mock"

// messagesKind is the Anthropic Messages API (/v1/messages): a message out, or the
// message_start … message_stop event sequence; reasoning goes out as thinking blocks.
// It takes the API key in X-Api-Key too.
type messagesKind struct{ generating }

func (messagesKind) idPrefix() string { return "msg_" }

func (messagesKind) reasons() bool { return true }

func (messagesKind) apiKeyHeader() string { return openai.HeaderAPIKey }

func (messagesKind) whole(dst []byte, rp *reply, thinking, text string, u openai.Usage) []byte {
	return append(dst, messagesWhole(rp.h, rp.g, thinking, text, u)...)
}

func (messagesKind) frames(rp *reply) frames { return &msgStream{h: rp.h, isl: rp.isl} }

// usage is the usage object of g's response: reasoning tokens are part of the
// completion tokens and, when there were any, reported in completion_tokens_details.
// cached is the prompt tokens the prefix cache served, reported in
// prompt_tokens_details (chat and completions write it; the other APIs' usage objects
// have no place for it).
func (g *gen) usage(isl, osl, cached int) openai.Usage {
	u := openai.Usage{PromptTokens: isl, CompletionTokens: osl, TotalTokens: isl + osl,
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: cached}}
	if n := g.reasoningSent(); n > 0 {
		u.CompletionTokensDetails = &openai.CompletionTokensDetails{ReasoningTokens: min(n, osl)}
	}
	return u
}

// parse reads an Anthropic Messages request: max_tokens is required, the
// system prompt and the messages are counted through the chat template as a chat
// request's are (the system prompt as a leading system message).
func (messagesKind) parse(in *inputs, body, _ []byte, j *job, rec *record.Server) *apiError {
	var req openai.MessagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model, j.stream = req.Model, req.Stream
	rec.Model, rec.Stream = req.Model, req.Stream
	// No server data (Config.ServerTimings): vLLM's Anthropic Messages answer
	// (vllm/entrypoints/anthropic/protocol.py, AnthropicMessagesResponse) has no
	// "metrics" field, and its converter copies only usage and kv_transfer_params
	// from the chat answer it wraps; the mock does not invent one.
	j.stop = req.StopSequences
	if req.MaxTokens == nil {
		return badRequest("missing_field", "max_tokens", "max_tokens: field required")
	}
	if e := in.outputLimits(j, rec, req.MaxTokens, nil, req.MinTokens, req.IgnoreEOS, "max_tokens"); e != nil {
		return e
	}
	if e := sampling(req.Temperature, req.TopP, nil); e != nil {
		return e
	}
	if req.Thinking != nil && req.Thinking.Type == "enabled" {
		j.thinkingBudget = req.Thinking.BudgetTokens
	}
	if len(req.Messages) == 0 {
		return badRequest("missing_field", "messages", "messages: at least one message is required")
	}
	msgs := make([]tokenizer.Message, 0, len(req.Messages)+1)
	if req.System.Text != "" {
		msgs = append(msgs, tokenizer.Message{Role: "system", Content: req.System.Text})
	}
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return badRequest("invalid_value", fmt.Sprintf("messages[%d].role", i),
				"messages[%d].role %q is not one of user, assistant", i, m.Role)
		}
		msgs = append(msgs, tokenizer.Message{Role: m.Role, Content: m.Content.Text})
		rec.NonTextParts += m.Content.NonText
	}
	return in.encodeChat(msgs, true, "messages", j, rec)
}

// msgStream writes the Messages API event sequence: message_start at once, then a
// thinking block (reasoning) and a text block, each opened by content_block_start and
// closed by content_block_stop, then message_delta (stop reason, usage) and
// message_stop.
type msgStream struct {
	h        openai.ChunkHeader
	isl      int
	index    int  // the open block's index
	open     bool // a block is open
	thinking bool // the open block is a thinking block
}

func (m *msgStream) start(buf []byte) []byte {
	return sse.AppendEvent(buf, openai.EventMessageStart, openai.AppendMessageStart(nil, m.h.ID, m.h.Model, m.isl))
}

// closeBlock ends the open block (a thinking block with its signature first).
func (m *msgStream) closeBlock(buf []byte) []byte {
	if !m.open {
		return buf
	}
	if m.thinking {
		buf = sse.AppendEvent(buf, openai.EventContentBlockDelta, openai.AppendSignatureDelta(nil, m.index, mockSignature))
	}
	buf = sse.AppendEvent(buf, openai.EventContentBlockStop, openai.AppendContentBlockStop(nil, m.index))
	m.open = false
	m.index++
	return buf
}

// delta appends one chunk of text, opening a block of its kind first if needed.
func (m *msgStream) delta(buf []byte, _, thinking bool, text string) []byte {
	if m.open && m.thinking != thinking {
		buf = m.closeBlock(buf)
	}
	if !m.open {
		buf = sse.AppendEvent(buf, openai.EventContentBlockStart, openai.AppendContentBlockStart(nil, m.index, thinking))
		m.open, m.thinking = true, thinking
	}
	return sse.AppendEvent(buf, openai.EventContentBlockDelta, openai.AppendContentBlockDelta(nil, m.index, thinking, text))
}

func (m *msgStream) finish(buf []byte, g *gen, _ bool, u openai.Usage) []byte {
	if !m.open && m.index == 0 { // no output at all: still one (empty) text block
		buf = sse.AppendEvent(buf, openai.EventContentBlockStart, openai.AppendContentBlockStart(nil, 0, false))
		m.open = true
	}
	buf = m.closeBlock(buf)
	reason, seq := stopOf(g)
	buf = sse.AppendEvent(buf, openai.EventMessageDelta, openai.AppendMessageDelta(nil, reason, seq,
		openai.MessagesUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}))
	return sse.AppendEvent(buf, openai.EventMessageStop, []byte(openai.MessageStop))
}

// stopOf returns g's stop_reason and, when a stop sequence ended it, that sequence.
func stopOf(g *gen) (string, *string) {
	if g.stopped && g.stop != nil {
		seq := g.stop.matched()
		return openai.StopReason(g.finish, true), &seq
	}
	return openai.StopReason(g.finish, false), nil
}

// messagesWhole is the body of a non-streaming Messages response.
func messagesWhole(h openai.ChunkHeader, g *gen, thinking, text string, u openai.Usage) []byte {
	reason, seq := stopOf(g)
	resp := openai.MessagesResponse{ID: h.ID, Type: "message", Role: "assistant", Model: h.Model, StopReason: &reason, StopSequence: seq,
		Usage: openai.MessagesUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}}
	if thinking != "" {
		sig := mockSignature
		resp.Content = append(resp.Content, openai.MessagesBlock{Type: "thinking", Thinking: &thinking, Signature: &sig})
	}
	resp.Content = append(resp.Content, openai.MessagesBlock{Type: "text", Text: &text})
	b, _ := json.Marshal(resp)
	return b
}

// errorBody is Anthropic's error envelope: {"type":"error","error":{"type":…,"message":…}}.
func (messagesKind) errorBody(e *apiError) []byte {
	b, _ := json.Marshal(anthropicError{Type: "error", Error: anthropicErrorBody{Type: anthropicErrorType(e), Message: e.msg}})
	return b
}

// anthropicError is the Messages API's error body.
type anthropicError struct {
	Type  string             `json:"type"`
	Error anthropicErrorBody `json:"error"`
}

type anthropicErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// anthropicErrorType is the Messages API's error type for e: the OpenAI type where
// the two APIs share it, else by status (429 rate_limit_error, 503/529
// overloaded_error, other 5xx api_error).
func anthropicErrorType(e *apiError) string {
	switch {
	case e.status == 429:
		return "rate_limit_error"
	case e.status == 503 || e.status == 529:
		return "overloaded_error"
	case e.status >= 500:
		return "api_error"
	case e.status == 413:
		return "request_too_large"
	}
	switch e.typ {
	case openai.ErrInvalidRequest, openai.ErrAuthentication, openai.ErrNotFound, "permission_error":
		return e.typ
	}
	return "invalid_request_error"
}
