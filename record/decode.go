package record

import (
	"encoding/json"
	"io"
	"time"

	"github.com/perfgate/perfgate/internal/jsonscan"
)

// DecodeClient decodes one JSON object, a line of a client recording, into c. It
// gives what json.Unmarshal gives into a zero [Client], except that c.Chunks' storage
// is reused (so a missing "chunks" leaves it empty, not nil) and strings equal to the
// ones c held (URL, endpoint, model, …: the same on every line of a run) are reused
// rather than allocated. Lines as [Client.AppendJSON] writes them, and any JSON using
// only the same keys, integers, plain strings and booleans, are parsed without
// reflection; anything else (escapes in strings, unknown keys, null, other spellings
// of a key) goes through encoding/json, whose error a malformed line returns.
func DecodeClient(b []byte, c *Client) error {
	old := *c
	chunks := c.Chunks[:0]
	*c = Client{}
	p := parser{Scanner: jsonscan.Scanner{B: b}, old: &old}
	if p.client(c, chunks) {
		return nil
	}
	// encoding/json decodes array elements over what the storage held: zero it.
	clear(chunks[:cap(chunks)])
	*c = Client{Chunks: chunks[:0]}
	return json.Unmarshal(b, c)
}

// EachClient is [Each] for a client recording, decoding with [DecodeClient] into one
// reused record: fn's *Client (Chunks included) is valid only until fn returns, so a
// pass over a recording allocates per line only what changes from line to line.
func EachClient(r io.Reader, fn func(*Client) error) error {
	var c Client
	return eachLine(r, func(line int, b []byte, unterminated bool) error {
		if err := DecodeClient(b, &c); err != nil {
			return lineError(line, unterminated, err)
		}
		return fn(&c)
	})
}

// parser reads the JSON subset AppendJSON writes (the leaf's [jsonscan.Scanner]).
// Every method returns false, leaving the decision to encoding/json, at the first byte
// it does not expect.
type parser struct {
	jsonscan.Scanner
	old *Client // the previous record, whose strings are reused when equal
}

// str is a plain string as a string, reusing prev when equal.
func (p *parser) str(prev string) (string, bool) {
	v, ok := p.Plain()
	if !ok {
		return "", false
	}
	if string(v) == prev {
		return prev, true
	}
	return string(v), true
}

func (p *parser) client(c *Client, chunks []Chunk) bool {
	o := p.old
	ok := p.Object(func(k []byte) bool {
		var ok bool
		var n int64
		switch string(k) {
		case "index":
			n, ok = p.Int()
			c.Index = int(n)
		case "request_id":
			c.RequestID, ok = p.str("")
		case "conversation_id":
			c.Conversation, ok = p.str(o.Conversation)
		case "turn":
			n, ok = p.Int()
			c.Turn = int(n)
		case "prefix":
			n, ok = p.Int()
			c.Prefix = int(n)
		case "job_id":
			c.Job, ok = p.str("")
		case "think_time":
			n, ok = p.Int()
			c.ThinkTime = time.Duration(n)
		case "tool_wait":
			n, ok = p.Int()
			c.ToolWait = time.Duration(n)
		case "url":
			c.URL, ok = p.str(o.URL)
		case "endpoint":
			c.Endpoint, ok = p.str(o.Endpoint)
		case "model":
			c.Model, ok = p.str(o.Model)
		case "class":
			c.Class, ok = p.str(o.Class)
		case "stream":
			c.Stream, ok = p.Bool()
		case "warmup":
			c.Warmup, ok = p.Bool()
		case "run_start_unix_ns":
			c.RunStartUnixNano, ok = p.Int()
		case "scheduled":
			n, ok = p.Int()
			c.Scheduled = time.Duration(n)
		case "sent":
			n, ok = p.Int()
			c.Sent = time.Duration(n)
		case "first_byte":
			n, ok = p.Int()
			c.FirstByte = time.Duration(n)
		case "first_output":
			n, ok = p.Int()
			c.FirstOutput = time.Duration(n)
		case "first_tool_call":
			n, ok = p.Int()
			c.FirstToolCall = time.Duration(n)
		case "done":
			n, ok = p.Int()
			c.Done = time.Duration(n)
		case "blocked":
			n, ok = p.Int()
			c.Blocked = time.Duration(n)
		case "dns_lookup":
			n, ok = p.Int()
			c.DNSLookup = time.Duration(n)
		case "connecting":
			n, ok = p.Int()
			c.Connecting = time.Duration(n)
		case "tls_handshaking":
			n, ok = p.Int()
			c.TLSHandshaking = time.Duration(n)
		case "written":
			n, ok = p.Int()
			c.Written = time.Duration(n)
		case "connection_reused":
			c.ConnReused, ok = p.Bool()
		case "chunks":
			chunks, ok = p.chunks(chunks[:0])
		case "clock":
			c.Clock, ok = p.str(o.Clock)
		case "status":
			n, ok = p.Int()
			c.Status = int(n)
		case "error_kind":
			c.ErrorKind, ok = p.str(o.ErrorKind)
		case "error":
			c.Error, ok = p.str(o.Error)
		case "isl":
			n, ok = p.Int()
			c.ISL = int(n)
		case "isl_template":
			n, ok = p.Int()
			c.ISLTemplate = int(n)
		case "tokenization_mode":
			c.TokenizationMode, ok = p.str(o.TokenizationMode)
		case "isl_exact":
			c.ISLExact, ok = p.Bool()
		case "requested_isl":
			n, ok = p.Int()
			c.RequestedISL = int(n)
		case "requested_osl":
			n, ok = p.Int()
			c.RequestedOSL = int(n)
		case "osl":
			n, ok = p.Int()
			c.OSL = int(n)
		case "reasoning_tokens":
			n, ok = p.Int()
			c.ReasoningTokens = int(n)
		case "tool_calls":
			n, ok = p.Int()
			c.ToolCalls = int(n)
		case "tool_call_tokens":
			n, ok = p.Int()
			c.ToolCallTokens = int(n)
		case "image_tokens":
			n, ok = p.Int()
			c.ImageTokens = int(n)
		case "audio_tokens":
			n, ok = p.Int()
			c.AudioTokens = int(n)
		case "usage_prompt_tokens":
			n, ok = p.Int()
			c.UsagePromptTokens = int(n)
		case "usage_completion_tokens":
			n, ok = p.Int()
			c.UsageCompletionTokens = int(n)
		case "usage_reasoning_tokens":
			n, ok = p.Int()
			c.UsageReasoningTokens = int(n)
		case "cached_tokens":
			n, ok = p.Int()
			c.CachedTokens = Some(int(n))
		case "server":
			ok = p.serverData(&c.Server, o.Server.Source)
		case "audio_duration":
			n, ok = p.Int()
			c.AudioDuration = time.Duration(n)
		case "images":
			n, ok = p.Int()
			c.Images = int(n)
		case "finish_reason":
			c.FinishReason, ok = p.str(o.FinishReason)
		case "response_bytes":
			n, ok = p.Int()
			c.ResponseBytes = int(n)
		}
		return ok
	})
	c.Chunks = chunks
	return ok && p.Done()
}

// chunks reads the chunks array into dst. It walks the array itself rather than with
// Scanner.Array: one call fewer per chunk, of which a line has hundreds.
func (p *parser) chunks(dst []Chunk) ([]Chunk, bool) {
	if !p.Byte('[') {
		return dst, false
	}
	if p.Byte(']') {
		return dst, true
	}
	for {
		var ch Chunk
		ok := p.Object(func(k []byte) bool {
			var ok bool
			var n int64
			switch string(k) {
			case "t":
				n, ok = p.Int()
				ch.T = time.Duration(n)
			case "n":
				n, ok = p.Int()
				ch.Tokens = int(n)
			case "c":
				ch.Choices, ok = p.Bool()
			case "b":
				ch.Batched, ok = p.Bool()
			}
			return ok
		})
		if !ok {
			return dst, false
		}
		dst = append(dst, ch)
		if !p.Byte(',') {
			return dst, p.Byte(']')
		}
	}
}
