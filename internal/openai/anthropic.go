package openai

import "strconv"

// This file holds the Anthropic Messages API wire format (POST /v1/messages), which
// the mock serves and the load generator reads: a request, a whole response, and the
// stream's events (message_start, content_block_start, content_block_delta with
// text_delta or thinking_delta, content_block_stop, message_delta, message_stop).

// MessagesRequest is a POST /v1/messages body. Message contents (and System) take a
// string or a list of text blocks, as [Content] reads them.
type MessagesRequest struct {
	Model         string    `json:"model"`
	MaxTokens     *int      `json:"max_tokens"`
	Messages      []Message `json:"messages"`
	System        Content   `json:"system"`
	Stream        bool      `json:"stream,omitempty"`
	StopSequences Strings   `json:"stop_sequences,omitempty"`
	Temperature   *float64  `json:"temperature,omitempty"`
	TopP          *float64  `json:"top_p,omitempty"`
	TopK          *int      `json:"top_k,omitempty"`
	// Thinking enables extended thinking: {"type": "enabled", "budget_tokens": N}.
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking,omitempty"`
	// MinTokens and IgnoreEOS are vLLM extensions its Anthropic endpoint accepts.
	MinTokens *int  `json:"min_tokens,omitempty"`
	IgnoreEOS *bool `json:"ignore_eos,omitempty"`
}

// MessagesUsage is the Messages API usage object.
type MessagesUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// MessagesBlock is one content block of a [MessagesResponse]: type "text" (Text) or
// "thinking" (Thinking, Signature).
type MessagesBlock struct {
	Type      string  `json:"type"`
	Text      *string `json:"text,omitempty"`
	Thinking  *string `json:"thinking,omitempty"`
	Signature *string `json:"signature,omitempty"`
}

// MessagesResponse is a whole (non-streaming) Messages API response.
type MessagesResponse struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"` // "message"
	Role         string          `json:"role"` // "assistant"
	Model        string          `json:"model"`
	Content      []MessagesBlock `json:"content"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        MessagesUsage   `json:"usage"`
}

// Messages API stream event types, in the order a response emits them.
const (
	EventMessageStart      = "message_start"
	EventContentBlockStart = "content_block_start"
	EventContentBlockDelta = "content_block_delta"
	EventContentBlockStop  = "content_block_stop"
	EventMessageDelta      = "message_delta"
	EventMessageStop       = "message_stop"
)

// StopReason maps an OpenAI finish_reason to the Messages API's stop_reason: "length"
// is "max_tokens", a stop sequence "stop_sequence", any other end "end_turn".
func StopReason(finish string, bySequence bool) string {
	switch {
	case finish == "length":
		return "max_tokens"
	case bySequence:
		return "stop_sequence"
	}
	return "end_turn"
}

// AppendMessageStart appends a message_start event's data.
func AppendMessageStart(dst []byte, id, model string, inputTokens int) []byte {
	dst = append(dst, `{"type":"message_start","message":{"id":`...)
	dst = AppendString(dst, id)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = AppendString(dst, model)
	dst = append(dst, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(inputTokens), 10)
	return append(dst, `,"output_tokens":0}}}`...)
}

// AppendContentBlockStart appends a content_block_start event's data for an empty
// block of type "text" or "thinking".
func AppendContentBlockStart(dst []byte, index int, thinking bool) []byte {
	dst = append(dst, `{"type":"content_block_start","index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if thinking {
		return append(dst, `,"content_block":{"type":"thinking","thinking":"","signature":""}}`...)
	}
	return append(dst, `,"content_block":{"type":"text","text":""}}`...)
}

// AppendContentBlockDelta appends a content_block_delta event's data: a text_delta, or
// a thinking_delta when thinking.
func AppendContentBlockDelta(dst []byte, index int, thinking bool, text string) []byte {
	dst = append(dst, `{"type":"content_block_delta","index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if thinking {
		dst = append(dst, `,"delta":{"type":"thinking_delta","thinking":`...)
	} else {
		dst = append(dst, `,"delta":{"type":"text_delta","text":`...)
	}
	dst = AppendString(dst, text)
	return append(dst, "}}"...)
}

// AppendSignatureDelta appends the signature_delta that closes a thinking block.
func AppendSignatureDelta(dst []byte, index int, signature string) []byte {
	dst = append(dst, `{"type":"content_block_delta","index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	dst = append(dst, `,"delta":{"type":"signature_delta","signature":`...)
	dst = AppendString(dst, signature)
	return append(dst, "}}"...)
}

// AppendContentBlockStop appends a content_block_stop event's data.
func AppendContentBlockStop(dst []byte, index int) []byte {
	dst = append(dst, `{"type":"content_block_stop","index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, '}')
}

// AppendMessageDelta appends a message_delta event's data: the stop reason and the
// cumulative usage.
func AppendMessageDelta(dst []byte, stopReason string, stopSequence *string, u MessagesUsage) []byte {
	dst = append(dst, `{"type":"message_delta","delta":{"stop_reason":`...)
	dst = AppendString(dst, stopReason)
	dst = append(dst, `,"stop_sequence":`...)
	if stopSequence == nil {
		dst = append(dst, "null"...)
	} else {
		dst = AppendString(dst, *stopSequence)
	}
	dst = append(dst, `},"usage":{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.InputTokens), 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.OutputTokens), 10)
	return append(dst, "}}"...)
}

// MessageStop is the message_stop event's data.
const MessageStop = `{"type":"message_stop"}`
