package record

import (
	"fmt"
	"strconv"
	"time"
	"unsafe"
)

// Error kinds recorded in [Client.ErrorKind]. An empty kind means the request succeeded.
const (
	ErrConnect     = "connect"      // dialing or writing the request failed
	ErrTimeout     = "timeout"      // the total, header or idle (between chunks) timeout expired
	ErrHTTPStatus  = "http_status"  // the server answered with a non-2xx status
	ErrMalformed   = "malformed"    // a non-JSON SSE event, a truncated stream, a missing [DONE], an unparsable body
	ErrCancelled   = "cancelled"    // cancelled by the run (context, the grace period's end, or the configured cancel fraction)
	ErrReset       = "reset"        // the connection was closed or reset mid-response
	ErrInvalidBody = "invalid_body" // the request body could not be built (an input file's image could not be read); not sent
	ErrErrorBody   = "error_body"   // a 2xx answer whose body is an error object ({"error": …}), streamed or not
	ErrEmptyOutput = "empty_output" // a 2xx stream that carried no output although output tokens were asked for
)

// ClockKernel marks records whose chunk times are kernel receive timestamps.
const ClockKernel = "kernel"

// Chunk is one received SSE data event (or, for a non-streaming response, the whole
// body). T is the time since the run started at which the event's last bytes arrived:
// the kernel's receive timestamp when the record's Clock is ClockKernel, else when the
// read that completed the event returned; either way taken before parsing.
type Chunk struct {
	// T is when the event's last byte was read, relative to the run start.
	T time.Duration `json:"t"`
	// Tokens is the client tokenizer's count of the event's generated text (content plus
	// reasoning). 0 for events with no text (role-only deltas, usage, keep-alives).
	Tokens int `json:"n"`
	// Choices reports whether the event carried a non-empty "choices" array (vLLM's
	// TTFT and ITL count such events even when their text is empty).
	Choices bool `json:"c,omitempty"`
	// Batched reports that a later event arrived in the same read, so T (that read's
	// time) is only an upper bound for this event: the client read late, or the server
	// sent them together. The last event of a read has an exact T.
	Batched bool `json:"b,omitempty"`
}

// Client is the client's record of one request, written as one JSON line when the
// request finishes. All times are monotonic durations since the run started (the
// zero value of a time means "did not happen"); RunStartUnixNano anchors them to
// the wall clock so they can be joined with a server recording.
//
// Records are written by one goroutine each and are not safe for concurrent mutation.
type Client struct {
	// Index is the request's position in the run's send order, from 0.
	Index int `json:"index"`
	// RequestID is the id sent in the X-Request-Id header (and the server's, if it
	// echoes one).
	RequestID string `json:"request_id"`
	// Conversation identifies a multi-turn conversation; empty for single requests.
	Conversation string `json:"conversation_id,omitempty"`
	// Turn is the 0-based turn within the conversation.
	Turn int `json:"turn"`
	// Prefix is the number, from 1, of the prefix-pool prefix the prompt started with
	// (loadgen's --num-prefix-prompts, --prefix-buckets): in the pool's order, its
	// popularity rank in a single pool. 0 (absent) = none (docs/prefix-cache.md).
	Prefix int `json:"prefix,omitempty"`
	// Job names the agent job the request belongs to ("job-<index of its first
	// request>"), Conversation then being its session (the root's or a sub-agent's);
	// empty outside agent jobs. ThinkTime and ToolWait are the think time and the tool
	// time the turn waited after the previous answer (docs/agents.md).
	Job       string        `json:"job_id,omitempty"`
	ThinkTime time.Duration `json:"think_time,omitempty"`
	ToolWait  time.Duration `json:"tool_wait,omitempty"`
	// URL is the full URL the request went to.
	URL string `json:"url"`
	// Endpoint is the endpoint kind ("chat", "completions", "embeddings", …).
	Endpoint string `json:"endpoint"`
	// Model is the model name sent.
	Model string `json:"model,omitempty"`
	// Class names the traffic class the request belongs to, in a run of several
	// (scenario "classes:", docs/classes.md); empty (absent) in a run of one.
	Class string `json:"class,omitempty"`
	// Stream reports whether the request asked for SSE streaming.
	Stream bool `json:"stream"`
	// Warmup marks warmup requests; metrics exclude them.
	Warmup bool `json:"warmup,omitempty"`

	// RunStartUnixNano is the wall-clock time of the run start, in Unix nanoseconds.
	RunStartUnixNano int64 `json:"run_start_unix_ns"`
	// Scheduled is when the pacer wanted the request sent (closed loop and later
	// turns: when the client was ready to send it). Sent - Scheduled is the client
	// queueing delay (coordinated omission made visible).
	Scheduled time.Duration `json:"scheduled"`
	// Sent is when the request's first byte was handed to the connection.
	Sent time.Duration `json:"sent"`
	// FirstByte is when the first byte of the response arrived.
	FirstByte time.Duration `json:"first_byte,omitempty"`
	// FirstOutput is when the first chunk with non-reasoning output text (content)
	// arrived: AIPerf's first output token, after any reasoning. 0 = none (or a
	// recording made before the field existed; see [Client.FirstOutputToken]).
	FirstOutput time.Duration `json:"first_output,omitempty"`
	// FirstToolCall is when the first chunk carrying a tool call (its function's name
	// or a fragment of its arguments) arrived; 0 = the answer called no tool.
	FirstToolCall time.Duration `json:"first_tool_call,omitempty"`
	// Done is when the response ended (last byte, error or cancellation).
	Done time.Duration `json:"done"`
	// Chunks are the received SSE events in order (one for a non-streaming body).
	Chunks []Chunk `json:"chunks,omitempty"`
	// Clock says what FirstByte and the chunk times measure: ClockKernel (the kernel's
	// receive timestamp of the bytes) or "" (when the client's read returned).
	Clock string `json:"clock,omitempty"`

	// The request's HTTP phases, named as k6 and HAR name them and AIPerf's http_req_*
	// trace metrics use them (see [Client.Phases]). Blocked, DNSLookup and Connecting
	// come before Sent and are durations; Written is a time on the run clock. A record
	// without Written (a recording made before the fields existed, or a request that
	// failed before its write ended) has no phases.
	//
	// Blocked is the time from the start of the request's connection step to Sent not
	// spent resolving or dialling: taking a connection from the pool and arming it (and
	// a failed attempt on a stale keep-alive connection). The pool never makes a
	// request wait for another's connection, so it is small.
	Blocked time.Duration `json:"blocked,omitempty"`
	// DNSLookup is the time resolving the host name of a new connection (0 for an IP
	// address or a reused connection).
	DNSLookup time.Duration `json:"dns_lookup,omitempty"`
	// Connecting is the time opening a new connection: TCP connect plus the TLS
	// handshake, as HAR's connect and AIPerf's http_req_connecting count it (0 on a
	// reused connection).
	Connecting time.Duration `json:"connecting,omitempty"`
	// TLSHandshaking is the TLS handshake's part of Connecting (k6's
	// http_req_tls_handshaking, HAR's ssl); 0 for plain HTTP or a reused connection.
	TLSHandshaking time.Duration `json:"tls_handshaking,omitempty"`
	// Written is when the request's last byte was handed to the kernel.
	Written time.Duration `json:"written,omitempty"`
	// ConnReused reports that the request went on a kept-alive connection from the
	// pool (AIPerf's http_req_connection_reused).
	ConnReused bool `json:"connection_reused,omitempty"`

	// Status is the HTTP status code; 0 if no response arrived.
	Status int `json:"status"`
	// ErrorKind is one of the Err… constants; empty on success.
	ErrorKind string `json:"error_kind,omitempty"`
	// Error is the error text; empty on success.
	Error string `json:"error,omitempty"`

	// ISL is the prompt's token count under the client tokenizer, as sent. For chat
	// requests it counts the message contents (history and system prompt included),
	// not the chat template around them: see ISLTemplate.
	ISL int `json:"isl"`
	// ISLTemplate is, for chat requests (chat completions, and Responses requests
	// sent as a message list), the client tokenizer's count of the exact messages sent
	// (system prompt and history included) rendered by its chat template with the
	// generation prompt, or by the ChatML fallback when it has none, encoded without
	// special tokens: what a server that tokenizes the conversation counts, as the mock
	// server does. ISLTemplate - ISL is the request's chat-template overhead. 0 =
	// not a request whose input is templated (or a recording made before the field
	// existed); [ISLTemplateUnknown] = templated, but the client could not render it
	// (a failed render, an unreadable payload).
	ISLTemplate int `json:"isl_template,omitempty"`
	// TokenizationMode says how ISLTemplate was counted, in AIPerf's tokenization_mode
	// names: "chat_template" or "chat_template_fallback" (see [ModeChatTemplate]);
	// empty when ISLTemplate is 0.
	TokenizationMode string `json:"tokenization_mode,omitempty"`
	// ISLExact is false when the synthetic prompt could not be made exactly the
	// requested length (the requested length is then in RequestedISL).
	ISLExact bool `json:"isl_exact"`
	// RequestedISL is the sampled input length the prompt was built for.
	RequestedISL int `json:"requested_isl,omitempty"`
	// RequestedOSL is the output length asked for (max_tokens / max_completion_tokens); 0 = none.
	RequestedOSL int `json:"requested_osl,omitempty"`
	// OSL is the client tokenizer's count of all generated text: content plus
	// reasoning, each counted on its own when there is reasoning (AIPerf's
	// output_sequence_length = output_token_count + reasoning_token_count).
	OSL int `json:"osl"`
	// ReasoningTokens is the part of OSL that was reasoning text (delta.reasoning_content,
	// or an Anthropic thinking block), counted by the client tokenizer.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// ToolCalls is the number of tool calls in the answer (message.tool_calls, or the
	// calls a stream's tool_calls deltas started); ToolCallTokens the part of OSL that
	// was their arguments' text, counted by the client tokenizer.
	ToolCalls      int `json:"tool_calls,omitempty"`
	ToolCallTokens int `json:"tool_call_tokens,omitempty"`
	// ImageTokens and AudioTokens are the prompt tokens of the request's image and audio
	// parts under the served model's media rule (internal/media, the mock's rule too).
	// They are not in ISL (the text contents) and are in ISLTemplate, as a server's
	// prompt_tokens includes them. 0 when the request has none.
	ImageTokens int `json:"image_tokens,omitempty"`
	AudioTokens int `json:"audio_tokens,omitempty"`
	// UsagePromptTokens and UsageCompletionTokens are the server's "usage" numbers,
	// -1 if the server sent none.
	UsagePromptTokens     int `json:"usage_prompt_tokens"`
	UsageCompletionTokens int `json:"usage_completion_tokens"`
	// UsageReasoningTokens is the server's usage.completion_tokens_details.reasoning_tokens
	// (the part of UsageCompletionTokens that was reasoning); 0 when absent.
	UsageReasoningTokens int `json:"usage_reasoning_tokens,omitempty"`
	// CachedTokens is the server's usage.prompt_tokens_details.cached_tokens: the prompt
	// tokens its prefix cache served (docs/prefix-cache.md). Unknown (absent from the
	// record) when the server sent none, or sent one that is not a whole number >= 0.
	CachedTokens Optional `json:"cached_tokens,omitzero"`
	// Server is what the server reported about its own handling of the request (vLLM's
	// per-request metrics, llama.cpp's timings, SGLang's meta_info): its TTFT, queue,
	// prefill and decode times, speculative decoding. Absent when the answer carried
	// none; each of its fields is known only when the server sent it.
	Server ServerData `json:"server,omitzero"`
	// AudioDuration is the duration of the audio the request sent (an
	// audio_transcription request's file), in ns; 0 = none.
	AudioDuration time.Duration `json:"audio_duration,omitempty"`
	// Images is the number of images the answer carried (image_generation).
	Images int `json:"images,omitempty"`
	// FinishReason is the last finish_reason the server sent.
	FinishReason string `json:"finish_reason,omitempty"`
	// ResponseBytes counts the response body bytes received.
	ResponseBytes int `json:"response_bytes"`
}

// Optional is a count a server may or may not report. Its zero value is unknown, so a
// record written before the field existed reads as unknown, not as 0. In JSON it is
// the number, and a field tagged omitzero is absent when unknown.
type Optional struct {
	N     int
	Known bool
}

// Some returns the known count n.
func Some(n int) Optional { return Optional{N: n, Known: true} }

// MarshalJSON writes the count as a JSON number (null when unknown).
func (o Optional) MarshalJSON() ([]byte, error) {
	if !o.Known {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, int64(o.N), 10), nil
}

// UnmarshalJSON reads a JSON integer; null is unknown.
func (o *Optional) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = Optional{}
		return nil
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return fmt.Errorf("record: want a whole number, got %s", b)
	}
	*o = Some(n)
	return nil
}

// ISLTemplateUnknown is [Client.ISLTemplate] for a request whose input a server
// renders with its chat template (its API kind's adapter says so) when the client
// could not render it: the request's chat-template overhead is unknown.
const ISLTemplateUnknown = -1

// TemplateOverhead returns ISLTemplate - ISL, the input tokens the chat template adds
// around the message contents of this request, and whether it is known (ISLTemplate
// was computed).
func (c *Client) TemplateOverhead() (n int, ok bool) {
	if c.ISLTemplate <= 0 {
		return 0, false
	}
	return c.ISLTemplate - c.ISL, true
}

// OK reports whether the request succeeded.
func (c *Client) OK() bool { return c.ErrorKind == "" }

// Latency returns Done - Sent.
func (c *Client) Latency() time.Duration { return c.Done - c.Sent }

// QueueTime returns Sent - Scheduled: how long the request waited in the client
// (for a free concurrency slot) after the pacer wanted it sent.
func (c *Client) QueueTime() time.Duration {
	if c.Sent < c.Scheduled {
		return 0
	}
	return c.Sent - c.Scheduled
}

// FirstToken returns the time of the first chunk with generated text (AIPerf's
// definition) and whether there was one.
func (c *Client) FirstToken() (time.Duration, bool) {
	for _, ch := range c.Chunks {
		if ch.Tokens > 0 {
			return ch.T, true
		}
	}
	return 0, false
}

// FirstChoice returns the time of the first chunk with "choices", empty text
// included (vLLM's definition), and whether there was one.
func (c *Client) FirstChoice() (time.Duration, bool) {
	for _, ch := range c.Chunks {
		if ch.Choices || ch.Tokens > 0 {
			return ch.T, true
		}
	}
	return 0, false
}

// FirstOutputToken returns the time of the first chunk with non-reasoning output text
// and whether there was one. A record without reasoning whose FirstOutput is unset (a
// recording made before the field existed) falls back to [Client.FirstToken].
func (c *Client) FirstOutputToken() (time.Duration, bool) {
	if c.FirstOutput > 0 {
		return c.FirstOutput, true
	}
	if c.ReasoningTokens == 0 {
		return c.FirstToken()
	}
	return 0, false
}

// TTFT returns the AIPerf time to first token: first chunk with text minus Sent.
func (c *Client) TTFT() (time.Duration, bool) {
	t, ok := c.FirstToken()
	return t - c.Sent, ok
}

// ContentGaps appends to dst the gaps between consecutive chunks that carry text
// (AIPerf's inter-chunk latency) and returns it.
func (c *Client) ContentGaps(dst []time.Duration) []time.Duration {
	var prev time.Duration = -1
	for _, ch := range c.Chunks {
		if ch.Tokens <= 0 {
			continue
		}
		if prev >= 0 {
			dst = append(dst, ch.T-prev)
		}
		prev = ch.T
	}
	return dst
}

// AppendJSON appends c as one JSON object (no newline), byte-for-byte what
// encoding/json produces for it, without reflection (the load generator writes one
// per request).
func (c *Client) AppendJSON(b []byte) []byte { return c.appendJSON(b, nil) }

// jsonCache is what an [Encoder] remembers between the records it writes: the quoted
// form of each string field's last value (a run's records share their URL, endpoint,
// model, tokenization mode and finish reason: the same strings, not merely equal
// ones) and the digits of the last run start.
type jsonCache struct {
	url, endpoint, model, clock, mode, finish cachedString
	runStart                                  int64
	runStartDigits                            []byte
}

// cachedString is one string field's last value and its quoted form.
type cachedString struct {
	s   string
	enc []byte
}

// maxCachedString is the longest string value a jsonCache keeps.
const maxCachedString = 256

// appendString appends s quoted (AppendJSONString), reusing the quoted form of the
// last value when s is the same string: the same bytes in memory, which the cache
// keeps alive, so they cannot have been reused for another string.
func (k *cachedString) appendString(b []byte, s string) []byte {
	if k == nil || len(s) == 0 || len(s) > maxCachedString {
		return AppendJSONString(b, s)
	}
	if len(s) == len(k.s) && unsafe.StringData(s) == unsafe.StringData(k.s) {
		return append(b, k.enc...)
	}
	start := len(b)
	b = AppendJSONString(b, s)
	k.s, k.enc = s, append(k.enc[:0], b[start:]...)
	return b
}

// appendJSON is AppendJSON, remembering repeated values in k when it is not nil.
func (c *Client) appendJSON(b []byte, k *jsonCache) []byte {
	var url, endpoint, model, clock, mode, finish *cachedString
	if k != nil {
		url, endpoint, model, clock, mode, finish = &k.url, &k.endpoint, &k.model, &k.clock, &k.mode, &k.finish
	}
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(c.Index), 10)
	b = append(b, `,"request_id":`...)
	b = AppendJSONString(b, c.RequestID)
	if c.Conversation != "" {
		b = append(b, `,"conversation_id":`...)
		b = AppendJSONString(b, c.Conversation)
	}
	b = append(b, `,"turn":`...)
	b = strconv.AppendInt(b, int64(c.Turn), 10)
	if c.Prefix != 0 {
		b = append(b, `,"prefix":`...)
		b = strconv.AppendInt(b, int64(c.Prefix), 10)
	}
	if c.Job != "" {
		b = append(b, `,"job_id":`...)
		b = AppendJSONString(b, c.Job)
	}
	if c.ThinkTime != 0 {
		b = append(b, `,"think_time":`...)
		b = strconv.AppendInt(b, int64(c.ThinkTime), 10)
	}
	if c.ToolWait != 0 {
		b = append(b, `,"tool_wait":`...)
		b = strconv.AppendInt(b, int64(c.ToolWait), 10)
	}
	b = append(b, `,"url":`...)
	b = url.appendString(b, c.URL)
	b = append(b, `,"endpoint":`...)
	b = endpoint.appendString(b, c.Endpoint)
	if c.Model != "" {
		b = append(b, `,"model":`...)
		b = model.appendString(b, c.Model)
	}
	if c.Class != "" {
		b = append(b, `,"class":`...)
		b = AppendJSONString(b, c.Class)
	}
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, c.Stream)
	if c.Warmup {
		b = append(b, `,"warmup":true`...)
	}
	b = append(b, `,"run_start_unix_ns":`...)
	switch {
	case k == nil:
		b = strconv.AppendInt(b, c.RunStartUnixNano, 10)
	case k.runStartDigits != nil && k.runStart == c.RunStartUnixNano:
		b = append(b, k.runStartDigits...)
	default:
		start := len(b)
		b = strconv.AppendInt(b, c.RunStartUnixNano, 10)
		k.runStart, k.runStartDigits = c.RunStartUnixNano, append(k.runStartDigits[:0], b[start:]...)
	}
	b = append(b, `,"scheduled":`...)
	b = strconv.AppendInt(b, int64(c.Scheduled), 10)
	b = append(b, `,"sent":`...)
	b = strconv.AppendInt(b, int64(c.Sent), 10)
	if c.FirstByte != 0 {
		b = append(b, `,"first_byte":`...)
		b = strconv.AppendInt(b, int64(c.FirstByte), 10)
	}
	if c.FirstOutput != 0 {
		b = append(b, `,"first_output":`...)
		b = strconv.AppendInt(b, int64(c.FirstOutput), 10)
	}
	if c.FirstToolCall != 0 {
		b = append(b, `,"first_tool_call":`...)
		b = strconv.AppendInt(b, int64(c.FirstToolCall), 10)
	}
	b = append(b, `,"done":`...)
	b = strconv.AppendInt(b, int64(c.Done), 10)
	if len(c.Chunks) > 0 {
		b = append(b, `,"chunks":[`...)
		for i, ch := range c.Chunks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"t":`...)
			b = strconv.AppendInt(b, int64(ch.T), 10)
			b = append(b, `,"n":`...)
			b = strconv.AppendInt(b, int64(ch.Tokens), 10)
			if ch.Choices {
				b = append(b, `,"c":true`...)
			}
			if ch.Batched {
				b = append(b, `,"b":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if c.Clock != "" {
		b = append(b, `,"clock":`...)
		b = clock.appendString(b, c.Clock)
	}
	b = appendDur(b, `,"blocked":`, c.Blocked)
	b = appendDur(b, `,"dns_lookup":`, c.DNSLookup)
	b = appendDur(b, `,"connecting":`, c.Connecting)
	b = appendDur(b, `,"tls_handshaking":`, c.TLSHandshaking)
	b = appendDur(b, `,"written":`, c.Written)
	if c.ConnReused {
		b = append(b, `,"connection_reused":true`...)
	}
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(c.Status), 10)
	if c.ErrorKind != "" {
		b = append(b, `,"error_kind":`...)
		b = AppendJSONString(b, c.ErrorKind)
	}
	if c.Error != "" {
		b = append(b, `,"error":`...)
		b = AppendJSONString(b, c.Error)
	}
	b = append(b, `,"isl":`...)
	b = strconv.AppendInt(b, int64(c.ISL), 10)
	if c.ISLTemplate != 0 {
		b = append(b, `,"isl_template":`...)
		b = strconv.AppendInt(b, int64(c.ISLTemplate), 10)
	}
	if c.TokenizationMode != "" {
		b = append(b, `,"tokenization_mode":`...)
		b = mode.appendString(b, c.TokenizationMode)
	}
	b = append(b, `,"isl_exact":`...)
	b = strconv.AppendBool(b, c.ISLExact)
	if c.RequestedISL != 0 {
		b = append(b, `,"requested_isl":`...)
		b = strconv.AppendInt(b, int64(c.RequestedISL), 10)
	}
	if c.RequestedOSL != 0 {
		b = append(b, `,"requested_osl":`...)
		b = strconv.AppendInt(b, int64(c.RequestedOSL), 10)
	}
	b = append(b, `,"osl":`...)
	b = strconv.AppendInt(b, int64(c.OSL), 10)
	if c.ReasoningTokens != 0 {
		b = append(b, `,"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(c.ReasoningTokens), 10)
	}
	if c.ToolCalls != 0 {
		b = append(b, `,"tool_calls":`...)
		b = strconv.AppendInt(b, int64(c.ToolCalls), 10)
	}
	if c.ToolCallTokens != 0 {
		b = append(b, `,"tool_call_tokens":`...)
		b = strconv.AppendInt(b, int64(c.ToolCallTokens), 10)
	}
	if c.ImageTokens != 0 {
		b = append(b, `,"image_tokens":`...)
		b = strconv.AppendInt(b, int64(c.ImageTokens), 10)
	}
	if c.AudioTokens != 0 {
		b = append(b, `,"audio_tokens":`...)
		b = strconv.AppendInt(b, int64(c.AudioTokens), 10)
	}
	b = append(b, `,"usage_prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(c.UsagePromptTokens), 10)
	b = append(b, `,"usage_completion_tokens":`...)
	b = strconv.AppendInt(b, int64(c.UsageCompletionTokens), 10)
	if c.UsageReasoningTokens != 0 {
		b = append(b, `,"usage_reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(c.UsageReasoningTokens), 10)
	}
	if c.CachedTokens.Known {
		b = append(b, `,"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(c.CachedTokens.N), 10)
	}
	if c.Server.Source != "" {
		b = append(b, `,"server":`...)
		b = c.Server.appendJSON(b)
	}
	if c.AudioDuration != 0 {
		b = append(b, `,"audio_duration":`...)
		b = strconv.AppendInt(b, int64(c.AudioDuration), 10)
	}
	if c.Images != 0 {
		b = append(b, `,"images":`...)
		b = strconv.AppendInt(b, int64(c.Images), 10)
	}
	if c.FinishReason != "" {
		b = append(b, `,"finish_reason":`...)
		b = finish.appendString(b, c.FinishReason)
	}
	b = append(b, `,"response_bytes":`...)
	b = strconv.AppendInt(b, int64(c.ResponseBytes), 10)
	return append(b, '}')
}

// appendDur appends key and d in nanoseconds, unless d is 0 (an omitempty field).
func appendDur(b []byte, key string, d time.Duration) []byte {
	if d == 0 {
		return b
	}
	b = append(b, key...)
	return strconv.AppendInt(b, int64(d), 10)
}

// Phases is a request's HTTP timing broken down as k6 and HAR do it (and AIPerf's
// http_req_* trace metrics), derived from a [Client] record by [Client.Phases]. The six
// phases follow each other without gaps or overlap, so they sum to Total.
type Phases struct {
	// Blocked, DNSLookup and Connecting (TLS included) come before the request is
	// sent: Overhead is their sum (AIPerf's http_req_connection_overhead).
	Blocked, DNSLookup, Connecting time.Duration
	// TLSHandshaking is the part of Connecting spent in the TLS handshake.
	TLSHandshaking time.Duration
	// Sending is Sent → last request byte written; Waiting is then → first response
	// byte (time to first byte); Receiving is then → Done (last byte).
	Sending, Waiting, Receiving time.Duration
	// Reused reports a kept-alive connection from the pool.
	Reused bool
}

// Overhead returns Blocked + DNSLookup + Connecting: the connection's cost before
// the request is sent.
func (p Phases) Overhead() time.Duration { return p.Blocked + p.DNSLookup + p.Connecting }

// Duration returns Sending + Waiting + Receiving (k6's http_req_duration), which is
// the record's Done − Sent.
func (p Phases) Duration() time.Duration { return p.Sending + p.Waiting + p.Receiving }

// Total returns the six phases' sum, Overhead() + Duration() (AIPerf's http_req_total).
func (p Phases) Total() time.Duration { return p.Overhead() + p.Duration() }

// Phases returns the request's HTTP phases, and false when the record has none (no
// Written or no response byte: a recording made before the fields existed, or a
// request that failed before an answer began). When the kernel stamped the first
// response byte earlier than the client noted its write ended (the client was
// descheduled in between), the write is taken to have ended then.
func (c *Client) Phases() (Phases, bool) {
	if c.Written <= 0 || c.FirstByte <= 0 {
		return Phases{}, false
	}
	written := min(max(c.Written, c.Sent), c.FirstByte)
	return Phases{
		Blocked: c.Blocked, DNSLookup: c.DNSLookup, Connecting: c.Connecting, TLSHandshaking: c.TLSHandshaking,
		Sending: written - c.Sent, Waiting: c.FirstByte - written, Receiving: max(c.Done-c.FirstByte, 0), Reused: c.ConnReused,
	}, true
}
