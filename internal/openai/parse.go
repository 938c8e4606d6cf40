package openai

import (
	"errors"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/jsonscan"
	"github.com/perfgate/perfgate/record"
)

// StreamChunk is what a client takes from one streamed event's data, whichever API
// produced it: a chat chunk (choices[0].delta.content / reasoning_content), a
// completions chunk (choices[0].text), a Responses event (type, delta, and the usage
// inside "response") or an Anthropic Messages event (delta.text, delta.thinking,
// delta.stop_reason, usage, and the usage inside message_start's "message"). Its byte slices are valid until the next [ChunkParser.Parse].
type StreamChunk struct {
	Object []byte // top-level "object" ("chat.completion.chunk", "text_completion"), nil if absent
	Type   []byte // top-level "type" of a Responses event, nil if absent
	// Text is the generated text of the first choice (chat delta.content, completions
	// text) or a Responses delta, unescaped; for a whole Anthropic message its text
	// blocks, for a whole Responses answer its output_text parts, concatenated. Empty
	// when the chunk carries none.
	Text []byte
	// Reasoning is delta.reasoning_content (or delta.reasoning), unescaped; for a whole
	// Anthropic message its thinking blocks, concatenated.
	Reasoning []byte
	// FinishReason is the first choice's finish_reason, nil when null or absent.
	FinishReason []byte
	// Choices is the number of entries in "choices" (0 for a usage-only chunk).
	Choices int
	// HasUsage reports a non-null usage object (chat/completions "usage", or
	// "response.usage" of a Responses event, whose input/output tokens are mapped to
	// prompt/completion tokens).
	HasUsage bool
	Usage    Usage
	// UsageReasoning is usage.completion_tokens_details.reasoning_tokens (0 = absent).
	UsageReasoning int
	// Cached says whether usage reported the prompt tokens its prefix cache served:
	// usage.prompt_tokens_details.cached_tokens (OpenAI, vLLM), or
	// usage.input_tokens_details.cached_tokens (Responses). UsageCached is the count
	// when Cached is [CachedKnown].
	Cached      CachedState
	UsageCached int
	// Tools are the first choice's tool call entries (delta.tool_calls, or a whole
	// message's tool_calls), at most [MaxToolDeltas]; nil when it has none.
	Tools []ToolDelta
	// ToolsDropped counts the entries past the first MaxToolDeltas, which Tools does
	// not keep, and ToolArgsDropped is their arguments' text, concatenated, so that a
	// client can still count it as output.
	ToolsDropped    int
	ToolArgsDropped []byte
	// Transcript is the top-level "text" string, unescaped: a transcription's answer
	// (or its stream's done event). Nil when absent or not a string; empty, not nil,
	// for "".
	Transcript []byte
	// Images is the number of entries of the top-level "data" array whose b64_json or
	// url is a non-empty string: an image generation answer's images, counted without
	// decoding them (they may be megabytes of base64).
	Images int
	// Server is the server's per-request data the chunk carried (vLLM's "metrics",
	// llama.cpp's "timings", SGLang's "meta_info"; a Responses event's
	// response.metrics), read as serverdata.go says; nil when it carried none. It points
	// into the parser and is valid until the next [ChunkParser.Parse].
	Server *record.ServerData
	// ServerBad names the chunk's first server-data field of the wrong type (a string
	// for a number, a negative time: "metrics.queue_time_ms"), which was left out of
	// Server; "" when there was none.
	ServerBad string
}

// CachedState says whether a usage object reported cached_tokens.
type CachedState uint8

// Cached states.
const (
	// CachedAbsent: no cached_tokens (or null).
	CachedAbsent CachedState = iota
	// CachedKnown: a whole number >= 0, in StreamChunk.UsageCached.
	CachedKnown
	// CachedBad: present but not a whole number >= 0 (a string, a fraction, a negative
	// number, a details value that is not an object); ignored.
	CachedBad
)

// ChunkParser parses stream chunks without encoding/json and without allocating once
// its scratch buffer has grown. It is not safe for concurrent use; the zero value is
// ready.
type ChunkParser struct {
	scratch []byte
	tools   []ToolDelta // backs StreamChunk.Tools
	spare   ToolDelta   // an entry past MaxToolDeltas, read to be dropped
	// The buffers [join] builds StreamChunk.Text, Reasoning and ToolArgsDropped in.
	text, reasoning, dropped []byte
	// server backs StreamChunk.Server; stamps are the timestamps its object's
	// derivations need (serverdata.go).
	server record.ServerData
	stamps [numStamps]value
}

// ErrSyntax reports malformed JSON in a chunk.
var ErrSyntax = errors.New("openai: malformed JSON in stream chunk")

// Parse fills c from data (one SSE event's data, not "[DONE]").
func (p *ChunkParser) Parse(data []byte, c *StreamChunk) error {
	*c = StreamChunk{}
	p.scratch, p.tools = p.scratch[:0], p.tools[:0]
	p.text, p.reasoning, p.dropped = p.text[:0], p.reasoning[:0], p.dropped[:0]
	i := jsonscan.SkipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return ErrSyntax
	}
	_, err := jsonscan.Object(data, i, func(key []byte, b []byte, j int) (int, error) {
		switch string(key) {
		case "object":
			return p.str(b, j, &c.Object)
		case "type":
			return p.str(b, j, &c.Type)
		case "delta": // Responses text delta, or an Anthropic event's delta object
			if j < len(b) && b[j] == '"' {
				return p.str(b, j, &c.Text)
			}
			if j < len(b) && b[j] == '{' {
				return jsonscan.Object(b, j, func(k []byte, b []byte, j int) (int, error) {
					switch string(k) {
					case "text": // content_block_delta text_delta
						return p.str(b, j, &c.Text)
					case "thinking": // content_block_delta thinking_delta
						return p.str(b, j, &c.Reasoning)
					case "stop_reason": // message_delta
						return p.str(b, j, &c.FinishReason)
					}
					return jsonscan.Skip(b, j)
				})
			}
		case "stop_reason": // a whole Anthropic message
			return p.str(b, j, &c.FinishReason)
		case "message": // Anthropic message_start: the usage inside the message
			if j < len(b) && b[j] == '{' {
				return jsonscan.Object(b, j, func(k []byte, b []byte, j int) (int, error) {
					if string(k) == "usage" {
						return p.usage(b, j, c)
					}
					return jsonscan.Skip(b, j)
				})
			}
		case "choices":
			return p.choices(b, j, c)
		case "text": // a transcription
			return p.str(b, j, &c.Transcript)
		case "data": // an image generation answer
			return p.images(b, j, &c.Images)
		case "content": // a whole Anthropic message: its text and thinking blocks
			return p.blocks(b, j, c, "text", "thinking")
		case "output": // a whole Responses answer: output[].content[] parts of type output_text
			return p.array(b, j, func(b []byte, j int) (int, error) {
				if b[j] != '{' {
					return jsonscan.Skip(b, j)
				}
				return jsonscan.Object(b, j, func(k, b []byte, j int) (int, error) {
					if string(k) == "content" {
						return p.blocks(b, j, c, "output_text", "")
					}
					return jsonscan.Skip(b, j)
				})
			})
		case "usage":
			return p.usage(b, j, c)
		case "response":
			if j < len(b) && b[j] == '{' {
				return jsonscan.Object(b, j, func(k []byte, b []byte, j int) (int, error) {
					switch string(k) {
					case "usage":
						return p.usage(b, j, c)
					case keyVLLM: // vLLM: the response.completed event's metrics
						return p.serverObject(b, j, c, record.ServerVLLM)
					}
					return jsonscan.Skip(b, j)
				})
			}
		case keyVLLM:
			return p.serverObject(b, j, c, record.ServerVLLM)
		case keyLlamaCpp:
			return p.serverObject(b, j, c, record.ServerLlamaCpp)
		case keySGLang:
			return p.serverObject(b, j, c, record.ServerSGLang)
		}
		return jsonscan.Skip(b, j)
	})
	if err != nil {
		return ErrSyntax // one error for every malformed chunk, whatever the leaf found
	}
	return nil
}

func (p *ChunkParser) choices(b []byte, i int, c *StreamChunk) (int, error) {
	if i < len(b) && b[i] == 'n' {
		return jsonscan.Skip(b, i)
	}
	if i >= len(b) || b[i] != '[' {
		return 0, ErrSyntax
	}
	return jsonscan.Array(b, i, func(b []byte, i int) (int, error) {
		if c.Choices++; c.Choices > 1 || b[i] != '{' { // only the first choice is read
			return jsonscan.Skip(b, i)
		}
		return jsonscan.Object(b, i, func(k []byte, b []byte, j int) (int, error) {
			switch string(k) {
			case "text":
				return p.str(b, j, &c.Text)
			case "finish_reason":
				return p.str(b, j, &c.FinishReason)
			case "delta", "message":
				if j < len(b) && b[j] == '{' {
					return jsonscan.Object(b, j, func(k []byte, b []byte, j int) (int, error) {
						switch string(k) {
						case "content":
							return p.str(b, j, &c.Text)
						case "reasoning_content", "reasoning":
							return p.str(b, j, &c.Reasoning)
						case "tool_calls":
							return p.toolCalls(b, j, c)
						}
						return jsonscan.Skip(b, j)
					})
				}
			}
			return jsonscan.Skip(b, j)
		})
	})
}

func (p *ChunkParser) usage(b []byte, i int, c *StreamChunk) (int, error) {
	if i < len(b) && b[i] == 'n' {
		return jsonscan.Skip(b, i)
	}
	if i >= len(b) || b[i] != '{' {
		return 0, ErrSyntax
	}
	c.HasUsage = true
	return jsonscan.Object(b, i, func(k []byte, b []byte, j int) (int, error) {
		var dst *int
		switch string(k) {
		case "prompt_tokens", "input_tokens":
			dst = &c.Usage.PromptTokens
		case "completion_tokens", "output_tokens":
			dst = &c.Usage.CompletionTokens
		case "total_tokens":
			dst = &c.Usage.TotalTokens
		case "prompt_tokens_details", "input_tokens_details":
			return p.promptDetails(b, j, c)
		case "completion_tokens_details", "output_tokens_details":
			if j < len(b) && b[j] == '{' {
				return jsonscan.Object(b, j, func(k []byte, b []byte, j int) (int, error) {
					if string(k) != "reasoning_tokens" {
						return jsonscan.Skip(b, j)
					}
					end, err := jsonscan.Skip(b, j)
					if err != nil {
						return 0, err
					}
					if n, ok := jsonscan.Atoi(b[j:end]); ok {
						c.UsageReasoning = n
					}
					return end, nil
				})
			}
			return jsonscan.Skip(b, j)
		default:
			return jsonscan.Skip(b, j)
		}
		end, err := jsonscan.Skip(b, j)
		if err != nil || isNull(b[j:end]) { // null leaves the field as it was, as in encoding/json
			return end, err
		}
		n, ok := jsonscan.Atoi(b[j:end])
		if !ok {
			return 0, ErrSyntax
		}
		*dst = n
		return end, nil
	})
}

// promptDetails reads usage's prompt_tokens_details (input_tokens_details) at b[i]
// for its cached_tokens, leaving a value of the wrong type out (CachedBad) rather than
// failing the chunk: the answer's other fields stay readable.
func (p *ChunkParser) promptDetails(b []byte, i int, c *StreamChunk) (int, error) {
	if i >= len(b) || b[i] != '{' {
		end, err := jsonscan.Skip(b, i)
		if err == nil && !isNull(b[i:end]) {
			c.Cached = CachedBad
		}
		return end, err
	}
	return jsonscan.Object(b, i, func(k []byte, b []byte, j int) (int, error) {
		end, err := jsonscan.Skip(b, j)
		if err != nil || string(k) != "cached_tokens" || isNull(b[j:end]) {
			return end, err
		}
		if n, ok := jsonscan.Atoi(b[j:end]); ok && n >= 0 {
			c.Cached, c.UsageCached = CachedKnown, n
		} else {
			c.Cached = CachedBad
		}
		return end, nil
	})
}

// isNull reports whether v, a scalar value's bytes, is the literal null.
func isNull(v []byte) bool { return string(v) == "null" }

// array calls f with the index of each element of the array at b[i]; f returns the
// index after the element. A value that is not an array (null included) is skipped.
func (p *ChunkParser) array(b []byte, i int, f func(b []byte, j int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '[' {
		return jsonscan.Skip(b, i)
	}
	return jsonscan.Array(b, i, f)
}

// blocks reads the array of content blocks ({"type", "text" | "thinking"}) at b[i]:
// the text of each block of type textType is added to c.Text and, when thinkType is
// set, the thinking of each block of thinkType to c.Reasoning, in order.
func (p *ChunkParser) blocks(b []byte, i int, c *StreamChunk, textType, thinkType string) (int, error) {
	return p.array(b, i, func(b []byte, j int) (int, error) {
		if b[j] != '{' {
			return jsonscan.Skip(b, j)
		}
		var typ, text, think []byte
		end, err := jsonscan.Object(b, j, func(k, b []byte, j int) (int, error) {
			switch string(k) {
			case "type":
				return p.str(b, j, &typ)
			case "text":
				return p.str(b, j, &text)
			case "thinking":
				return p.str(b, j, &think)
			}
			return jsonscan.Skip(b, j)
		})
		switch {
		case err != nil:
			return 0, err
		case string(typ) == textType:
			c.Text = join(&p.text, c.Text, text)
		case thinkType != "" && string(typ) == thinkType:
			c.Reasoning = join(&p.reasoning, c.Reasoning, think)
		}
		return end, nil
	})
}

// join returns acc followed by s, built in *buf, the buffer of the field acc is: s
// itself when acc is empty, else s appended to *buf, after a copy of acc when acc is
// not *buf's content already. Each joined field has its own buffer, so joining n
// parts copies each part once (a field joined in the shared scratch buffer, where the
// parts are unescaped too, was copied whole at each part: 10,000 escaped content
// blocks took seconds and hundreds of megabytes).
func join(buf *[]byte, acc, s []byte) []byte {
	switch {
	case len(acc) == 0:
		return s
	case len(s) == 0:
		return acc
	}
	if len(*buf) != len(acc) || &(*buf)[0] != &acc[0] {
		*buf = append((*buf)[:0], acc...)
	}
	*buf = append(*buf, s...)
	return (*buf)[:len(*buf):len(*buf)]
}

// str reads a string (or null, leaving *dst nil) at b[i] into *dst, unescaping into
// the scratch buffer when needed: escapes, and bytes that are not UTF-8, each of which
// reads as U+FFFD, as in encoding/json.
func (p *ChunkParser) str(b []byte, i int, dst *[]byte) (int, error) {
	if i < len(b) && b[i] == 'n' {
		return jsonscan.Skip(b, i)
	}
	if i >= len(b) || b[i] != '"' {
		return jsonscan.Skip(b, i)
	}
	end, esc, ok := jsonscan.ScanString(b, i)
	if !ok {
		return 0, ErrSyntax
	}
	raw := b[i+1 : end-1]
	if !esc && utf8.Valid(raw) {
		*dst = raw
		if raw == nil {
			*dst = b[i+1 : i+1]
		}
		return end, nil
	}
	start := len(p.scratch)
	var err error
	p.scratch, err = jsonscan.Unescape(p.scratch, raw)
	if err != nil {
		return 0, err
	}
	*dst = p.scratch[start:len(p.scratch):len(p.scratch)]
	return end, nil
}
