package record

import (
	"encoding/json"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
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
	p := parser{b: b, old: &old}
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

// parser reads the JSON subset AppendJSON writes. Every method returns false, leaving
// the decision to encoding/json, at the first byte it does not expect.
type parser struct {
	b   []byte
	i   int
	old *Client // the previous record, whose strings are reused when equal
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c after optional white space.
func (p *parser) byte(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// raw returns the bytes of a string with no escapes, no control characters and valid
// UTF-8 (what encoding/json would copy as is).
func (p *parser) raw() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	s := p.i
	ascii := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			v := p.b[s:p.i]
			p.i++
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		p.i++
	}
	return nil, false
}

// str is raw as a string, reusing prev when equal.
func (p *parser) str(prev string) (string, bool) {
	v, ok := p.raw()
	if !ok {
		return "", false
	}
	if string(v) == prev {
		return prev, true
	}
	return string(v), true
}

// int reads a JSON integer that fits an int64.
func (p *parser) int() (int64, bool) {
	p.ws()
	neg := false
	if p.i < len(p.b) && p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	s := p.i
	var n int64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int64(p.b[p.i]-'0')
		p.i++
	}
	d := p.i - s
	if d == 0 || d > 19 || (d > 1 && p.b[s] == '0') {
		return 0, false
	}
	if d == 19 { // may overflow: let strconv check
		v, err := strconv.ParseInt(string(p.b[s-b2i(neg):p.i]), 10, 64)
		if err != nil {
			return 0, false
		}
		n, neg = v, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case '.', 'e', 'E':
			return 0, false // not an integer: encoding/json's error
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (p *parser) bool() (bool, bool) {
	p.ws()
	r := p.b[p.i:]
	if len(r) >= 4 && string(r[:4]) == "true" {
		p.i += 4
		return true, true
	}
	if len(r) >= 5 && string(r[:5]) == "false" {
		p.i += 5
		return false, true
	}
	return false, false
}

// object calls field for each key of an object until field or the syntax fails.
func (p *parser) object(field func(key []byte) bool) bool {
	if !p.byte('{') {
		return false
	}
	if p.byte('}') {
		return true
	}
	for {
		k, ok := p.raw()
		if !ok || !p.byte(':') || !field(k) {
			return false
		}
		if p.byte(',') {
			continue
		}
		return p.byte('}')
	}
}

func (p *parser) client(c *Client, chunks []Chunk) bool {
	o := p.old
	ok := p.object(func(k []byte) bool {
		var ok bool
		var n int64
		switch string(k) {
		case "index":
			n, ok = p.int()
			c.Index = int(n)
		case "request_id":
			c.RequestID, ok = p.str("")
		case "conversation_id":
			c.Conversation, ok = p.str(o.Conversation)
		case "turn":
			n, ok = p.int()
			c.Turn = int(n)
		case "url":
			c.URL, ok = p.str(o.URL)
		case "endpoint":
			c.Endpoint, ok = p.str(o.Endpoint)
		case "model":
			c.Model, ok = p.str(o.Model)
		case "stream":
			c.Stream, ok = p.bool()
		case "warmup":
			c.Warmup, ok = p.bool()
		case "run_start_unix_ns":
			c.RunStartUnixNano, ok = p.int()
		case "scheduled":
			n, ok = p.int()
			c.Scheduled = time.Duration(n)
		case "sent":
			n, ok = p.int()
			c.Sent = time.Duration(n)
		case "first_byte":
			n, ok = p.int()
			c.FirstByte = time.Duration(n)
		case "first_output":
			n, ok = p.int()
			c.FirstOutput = time.Duration(n)
		case "first_tool_call":
			n, ok = p.int()
			c.FirstToolCall = time.Duration(n)
		case "done":
			n, ok = p.int()
			c.Done = time.Duration(n)
		case "blocked":
			n, ok = p.int()
			c.Blocked = time.Duration(n)
		case "dns_lookup":
			n, ok = p.int()
			c.DNSLookup = time.Duration(n)
		case "connecting":
			n, ok = p.int()
			c.Connecting = time.Duration(n)
		case "tls_handshaking":
			n, ok = p.int()
			c.TLSHandshaking = time.Duration(n)
		case "written":
			n, ok = p.int()
			c.Written = time.Duration(n)
		case "connection_reused":
			c.ConnReused, ok = p.bool()
		case "chunks":
			chunks, ok = p.chunks(chunks[:0])
		case "clock":
			c.Clock, ok = p.str(o.Clock)
		case "status":
			n, ok = p.int()
			c.Status = int(n)
		case "error_kind":
			c.ErrorKind, ok = p.str(o.ErrorKind)
		case "error":
			c.Error, ok = p.str(o.Error)
		case "isl":
			n, ok = p.int()
			c.ISL = int(n)
		case "isl_template":
			n, ok = p.int()
			c.ISLTemplate = int(n)
		case "tokenization_mode":
			c.TokenizationMode, ok = p.str(o.TokenizationMode)
		case "isl_exact":
			c.ISLExact, ok = p.bool()
		case "requested_isl":
			n, ok = p.int()
			c.RequestedISL = int(n)
		case "requested_osl":
			n, ok = p.int()
			c.RequestedOSL = int(n)
		case "osl":
			n, ok = p.int()
			c.OSL = int(n)
		case "reasoning_tokens":
			n, ok = p.int()
			c.ReasoningTokens = int(n)
		case "tool_calls":
			n, ok = p.int()
			c.ToolCalls = int(n)
		case "tool_call_tokens":
			n, ok = p.int()
			c.ToolCallTokens = int(n)
		case "image_tokens":
			n, ok = p.int()
			c.ImageTokens = int(n)
		case "audio_tokens":
			n, ok = p.int()
			c.AudioTokens = int(n)
		case "usage_prompt_tokens":
			n, ok = p.int()
			c.UsagePromptTokens = int(n)
		case "usage_completion_tokens":
			n, ok = p.int()
			c.UsageCompletionTokens = int(n)
		case "usage_reasoning_tokens":
			n, ok = p.int()
			c.UsageReasoningTokens = int(n)
		case "audio_duration":
			n, ok = p.int()
			c.AudioDuration = time.Duration(n)
		case "images":
			n, ok = p.int()
			c.Images = int(n)
		case "finish_reason":
			c.FinishReason, ok = p.str(o.FinishReason)
		case "response_bytes":
			n, ok = p.int()
			c.ResponseBytes = int(n)
		}
		return ok
	})
	c.Chunks = chunks
	p.ws()
	return ok && p.i == len(p.b)
}

func (p *parser) chunks(dst []Chunk) ([]Chunk, bool) {
	if !p.byte('[') {
		return dst, false
	}
	if p.byte(']') {
		return dst, true
	}
	for {
		var ch Chunk
		ok := p.object(func(k []byte) bool {
			var ok bool
			var n int64
			switch string(k) {
			case "t":
				n, ok = p.int()
				ch.T = time.Duration(n)
			case "n":
				n, ok = p.int()
				ch.Tokens = int(n)
			case "c":
				ch.Choices, ok = p.bool()
			case "b":
				ch.Batched, ok = p.bool()
			}
			return ok
		})
		if !ok {
			return dst, false
		}
		dst = append(dst, ch)
		if p.byte(',') {
			continue
		}
		return dst, p.byte(']')
	}
}
