package openai

import (
	"strconv"

	"github.com/perfgate/perfgate/record"
)

// ChunkHeader is what every chunk of one stream repeats.
type ChunkHeader struct {
	ID      string // e.g. "chatcmpl-…" or "cmpl-…"
	Created int64  // Unix seconds
	Model   string
}

// AppendString appends s as a JSON string (quoted, escaped as encoding/json does
// without HTML escaping; invalid UTF-8 becomes U+FFFD): [record.AppendJSONString].
func AppendString(dst []byte, s string) []byte { return record.AppendJSONString(dst, s) }

func appendHeader(dst []byte, h ChunkHeader, object string) []byte {
	dst = append(dst, `{"id":`...)
	dst = AppendString(dst, h.ID)
	dst = append(dst, `,"object":"`...)
	dst = append(dst, object...)
	dst = append(dst, `","created":`...)
	dst = strconv.AppendInt(dst, h.Created, 10)
	dst = append(dst, `,"model":`...)
	return AppendString(dst, h.Model)
}

func appendFinish(dst []byte, finish string) []byte {
	dst = append(dst, `,"finish_reason":`...)
	if finish == "" {
		return append(dst, "null"...)
	}
	return AppendString(dst, finish)
}

// AppendUsage appends a usage object.
func AppendUsage(dst []byte, u Usage) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.PromptTokens), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.CompletionTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	if d := u.CompletionTokensDetails; d != nil {
		dst = append(dst, `,"completion_tokens_details":{"reasoning_tokens":`...)
		dst = strconv.AppendInt(dst, int64(d.ReasoningTokens), 10)
		dst = append(dst, '}')
	}
	if d := u.PromptTokensDetails; d != nil {
		dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
		dst = strconv.AppendInt(dst, int64(d.CachedTokens), 10)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// AppendChatCompletion appends a whole (non-streaming) "chat.completion" with one
// choice: the assistant message's content and reasoning_content (omitted when empty),
// the finish reason, "logprobs":null, and usage. It is the JSON of the
// [ChatCompletion] with those fields (strings escaped as the stream chunks' are),
// written without reflection.
func AppendChatCompletion(dst []byte, h ChunkHeader, reasoning, content, finish string, u Usage) []byte {
	dst = appendHeader(dst, h, "chat.completion")
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	dst = AppendString(dst, content)
	if reasoning != "" {
		dst = append(dst, `,"reasoning_content":`...)
		dst = AppendString(dst, reasoning)
	}
	dst = append(dst, `},"finish_reason":`...)
	dst = AppendString(dst, finish)
	dst = append(dst, `,"logprobs":null}],"usage":`...)
	return append(AppendUsage(dst, u), '}')
}

// AppendChatReasoningChunk appends one "chat.completion.chunk" whose delta carries
// reasoning_content (vLLM's and DeepSeek's field for a reasoning model's thinking),
// with role when role != "".
func AppendChatReasoningChunk(dst []byte, h ChunkHeader, role, reasoning string, includeUsage bool) []byte {
	dst = appendHeader(dst, h, "chat.completion.chunk")
	dst = append(dst, `,"choices":[{"index":0,"delta":{`...)
	if role != "" {
		dst = append(dst, `"role":`...)
		dst = AppendString(dst, role)
		dst = append(dst, ',')
	}
	dst = append(dst, `"reasoning_content":`...)
	dst = AppendString(dst, reasoning)
	dst = append(dst, '}')
	return appendChoiceEnd(dst, "", includeUsage)
}

// AppendChatChunk appends one "chat.completion.chunk" JSON object with a single choice
// whose delta carries content (omitted when empty), role when role != "", and
// finish_reason (null when finish is ""). With includeUsage, "usage":null is added as
// OpenAI does on every chunk of a stream that asked for usage.
func AppendChatChunk(dst []byte, h ChunkHeader, role, content, finish string, includeUsage bool) []byte {
	dst = appendHeader(dst, h, "chat.completion.chunk")
	dst = append(dst, `,"choices":[{"index":0,"delta":{`...)
	comma := false
	if role != "" {
		dst = append(dst, `"role":`...)
		dst = AppendString(dst, role)
		comma = true
	}
	if content != "" || (role != "" && finish == "") {
		if comma {
			dst = append(dst, ',')
		}
		dst = append(dst, `"content":`...)
		dst = AppendString(dst, content)
	}
	dst = append(dst, '}')
	return appendChoiceEnd(dst, finish, includeUsage)
}

// appendChoiceEnd closes a stream chunk's single choice (logprobs, finish_reason) and
// the chunk, with "usage":null when the stream will end with a usage chunk.
func appendChoiceEnd(dst []byte, finish string, includeUsage bool) []byte {
	dst = append(dst, `,"logprobs":null`...)
	dst = appendFinish(dst, finish)
	dst = append(dst, "}]"...)
	if includeUsage {
		dst = append(dst, `,"usage":null`...)
	}
	return append(dst, '}')
}

// AppendChatUsageChunk appends the final usage chunk of a chat stream (empty choices).
func AppendChatUsageChunk(dst []byte, h ChunkHeader, u Usage) []byte {
	dst = appendHeader(dst, h, "chat.completion.chunk")
	dst = append(dst, `,"choices":[],"usage":`...)
	dst = AppendUsage(dst, u)
	return append(dst, '}')
}

// AppendCompletionChunk appends one streamed "text_completion" chunk.
func AppendCompletionChunk(dst []byte, h ChunkHeader, text, finish string, includeUsage bool) []byte {
	dst = appendHeader(dst, h, "text_completion")
	dst = append(dst, `,"choices":[{"index":0,"text":`...)
	dst = AppendString(dst, text)
	return appendChoiceEnd(dst, finish, includeUsage)
}

// AppendCompletionUsageChunk appends the final usage chunk of a completions stream.
func AppendCompletionUsageChunk(dst []byte, h ChunkHeader, u Usage) []byte {
	dst = appendHeader(dst, h, "text_completion")
	dst = append(dst, `,"choices":[],"usage":`...)
	dst = AppendUsage(dst, u)
	return append(dst, '}')
}

// AppendResponseTextDelta appends the data of a "response.output_text.delta" event.
func AppendResponseTextDelta(dst []byte, itemID string, seq int, delta string) []byte {
	dst = append(dst, `{"type":"response.output_text.delta","sequence_number":`...)
	dst = strconv.AppendInt(dst, int64(seq), 10)
	dst = append(dst, `,"item_id":`...)
	dst = AppendString(dst, itemID)
	dst = append(dst, `,"output_index":0,"content_index":0,"delta":`...)
	dst = AppendString(dst, delta)
	dst = append(dst, `,"logprobs":[]}`...)
	return dst
}
