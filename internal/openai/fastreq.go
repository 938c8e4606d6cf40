package openai

// A fast path for decoding the common chat request: one pass over the body, no
// reflection, for bodies in the shape load generators send (known keys spelled
// exactly, each once; plain strings without escapes; integers and plain numbers). Any
// other body goes to encoding/json, so the result, and every error, is exactly
// json.Unmarshal's (FuzzDecodeChatRequest holds the two together). In the mock's
// non-streaming path encoding/json's decode was about a third of the handler's CPU.

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// DecodeChatRequest decodes body into *req (which must be zero) exactly as
// json.Unmarshal(body, req) does.
func DecodeChatRequest(body []byte, req *ChatRequest) error {
	if decodeChatFast(body, req) {
		return nil
	}
	*req = ChatRequest{}
	return json.Unmarshal(body, req)
}

// chat request keys the fast path decodes, as bits (a repeated key leaves it).
const (
	keyModel = 1 << iota
	keyMessages
	keyStream
	keyStreamOptions
	keyMaxTokens
	keyMaxCompletionTokens
	keyMinTokens
	keyIgnoreEOS
	keyTemperature
	keyTopP
	keyN
	keySeed
	keyUser
	keyReasoningEffort
	keyAddGenerationPrompt
)

// decodeChatFast decodes body into req and reports success; false means "not in the
// fast path's shape" (req is then in any state).
func decodeChatFast(body []byte, req *ChatRequest) bool {
	s := scanner{b: body}
	if !s.begin('{') {
		return false
	}
	seen := 0
	if s.end('}') {
		return s.done()
	}
	for {
		key, ok := s.key()
		if !ok {
			return false
		}
		var bit int
		switch string(key) {
		case "model":
			bit = keyModel
			if req.Model, ok = s.str(); !ok {
				return false
			}
		case "messages":
			bit = keyMessages
			if req.Messages, ok = s.messages(); !ok {
				return false
			}
		case "stream":
			bit = keyStream
			if req.Stream, ok = s.boolean(); !ok {
				return false
			}
		case "stream_options":
			bit = keyStreamOptions
			if req.StreamOptions, ok = s.streamOptions(); !ok {
				return false
			}
		case "max_tokens":
			bit = keyMaxTokens
			if req.MaxTokens, ok = s.intPtr(); !ok {
				return false
			}
		case "max_completion_tokens":
			bit = keyMaxCompletionTokens
			if req.MaxCompletionTokens, ok = s.intPtr(); !ok {
				return false
			}
		case "min_tokens":
			bit = keyMinTokens
			if req.MinTokens, ok = s.intPtr(); !ok {
				return false
			}
		case "n":
			bit = keyN
			if req.N, ok = s.intPtr(); !ok {
				return false
			}
		case "ignore_eos":
			bit = keyIgnoreEOS
			if req.IgnoreEOS, ok = s.boolPtr(); !ok {
				return false
			}
		case "add_generation_prompt":
			bit = keyAddGenerationPrompt
			if req.AddGenerationPrompt, ok = s.boolPtr(); !ok {
				return false
			}
		case "temperature":
			bit = keyTemperature
			if req.Temperature, ok = s.floatPtr(); !ok {
				return false
			}
		case "top_p":
			bit = keyTopP
			if req.TopP, ok = s.floatPtr(); !ok {
				return false
			}
		case "seed":
			bit = keySeed
			n, isNull, ok := s.integer()
			if !ok {
				return false
			}
			if !isNull {
				req.Seed = &n
			}
		case "user":
			bit = keyUser
			if req.User, ok = s.str(); !ok {
				return false
			}
		case "reasoning_effort":
			bit = keyReasoningEffort
			if s.null() {
				break
			}
			v, ok := s.str()
			if !ok {
				return false
			}
			req.ReasoningEffort = &v
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if s.end('}') {
			return s.done()
		}
		if !s.begin(',') {
			return false
		}
	}
}

// scanner reads the fast path's subset of JSON from b.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// begin consumes c after whitespace.
func (s *scanner) begin(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end is begin for a closing bracket.
func (s *scanner) end(c byte) bool { return s.begin(c) }

// done reports that nothing but whitespace follows.
func (s *scanner) done() bool {
	s.ws()
	return s.i == len(s.b)
}

// lit consumes the literal l after whitespace.
func (s *scanner) lit(l string) bool {
	s.ws()
	if len(s.b)-s.i >= len(l) && string(s.b[s.i:s.i+len(l)]) == l {
		s.i += len(l)
		return true
	}
	return false
}

func (s *scanner) null() bool { return s.lit("null") }

// raw returns a plain string's bytes: no escapes, no control characters, valid UTF-8.
func (s *scanner) raw() ([]byte, bool) {
	if !s.begin('"') {
		return nil, false
	}
	start, ascii := s.i, true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, ascii || utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

func (s *scanner) str() (string, bool) {
	v, ok := s.raw()
	return string(v), ok
}

// key reads an object key and its colon; the caller switches on string(key), which
// does not allocate.
func (s *scanner) key() ([]byte, bool) {
	v, ok := s.raw()
	if !ok || !s.begin(':') {
		return nil, false
	}
	return v, true
}

// role is a message role as a string, without allocating for the common ones.
func role(b []byte) string {
	switch string(b) {
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "system":
		return "system"
	}
	return string(b)
}

func (s *scanner) boolean() (bool, bool) {
	switch {
	case s.lit("true"):
		return true, true
	case s.lit("false"):
		return false, true
	}
	return false, false
}

func (s *scanner) boolPtr() (*bool, bool) {
	if s.null() {
		return nil, true
	}
	v, ok := s.boolean()
	if !ok {
		return nil, false
	}
	return &v, true
}

// integer reads null or a JSON integer (no fraction or exponent) of at most 18 digits.
func (s *scanner) integer() (n int64, isNull, ok bool) {
	if s.null() {
		return 0, true, true
	}
	s.ws()
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	if neg {
		s.i++
	}
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || digits > 18 || (digits > 1 && s.b[start] == '0') {
		return 0, false, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false, false
	}
	if neg {
		n = -n
	}
	return n, false, true
}

func (s *scanner) intPtr() (*int, bool) {
	n, isNull, ok := s.integer()
	if !ok || isNull {
		return nil, ok
	}
	v := int(n)
	return &v, true
}

// floatPtr reads null or a JSON number.
func (s *scanner) floatPtr() (*float64, bool) {
	if s.null() {
		return nil, true
	}
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		d := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			d++
		}
		return d
	}
	intStart := s.i
	if d := digits(); d == 0 || (d > 1 && s.b[intStart] == '0') {
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	v, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	if err != nil {
		return nil, false // out of range: json.Unmarshal's error
	}
	return &v, true
}

func (s *scanner) streamOptions() (*StreamOptions, bool) {
	if s.null() {
		return nil, true
	}
	if !s.begin('{') {
		return nil, false
	}
	o := &StreamOptions{}
	if s.end('}') {
		return o, true
	}
	key, ok := s.key()
	if !ok || string(key) != "include_usage" {
		return nil, false
	}
	if o.IncludeUsage, ok = s.boolean(); !ok || !s.end('}') {
		return nil, false
	}
	return o, true
}

// messages reads an array of messages whose keys are role, content (a plain string or
// null) and name, each at most once.
func (s *scanner) messages() ([]Message, bool) {
	if !s.begin('[') {
		return nil, false
	}
	msgs := make([]Message, 0, 4)
	if s.end(']') {
		return msgs, true
	}
	for {
		if !s.begin('{') {
			return nil, false
		}
		var m Message
		if !s.end('}') {
			seen := 0
			for {
				key, ok := s.key()
				if !ok {
					return nil, false
				}
				var bit int
				switch string(key) {
				case "role":
					bit = 1
					var v []byte
					v, ok = s.raw()
					m.Role = role(v)
				case "content":
					bit = 2
					if s.null() {
						m.Content = Content{Null: true}
					} else {
						m.Content.Text, ok = s.str()
					}
				case "name":
					bit = 4
					m.Name, ok = s.str()
				default:
					return nil, false
				}
				if !ok || seen&bit != 0 {
					return nil, false
				}
				seen |= bit
				if s.end('}') {
					break
				}
				if !s.begin(',') {
					return nil, false
				}
			}
		}
		msgs = append(msgs, m)
		if s.end(']') {
			return msgs, true
		}
		if !s.begin(',') {
			return nil, false
		}
	}
}
