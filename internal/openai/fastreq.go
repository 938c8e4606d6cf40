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

	"github.com/perfgate/perfgate/internal/jsonscan"
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
	s := scanner{jsonscan.Scanner{B: body}}
	seen := 0
	return s.Object(func(key []byte) bool {
		var bit int
		ok := true
		switch string(key) {
		case "model":
			bit = keyModel
			req.Model, ok = s.str()
		case "messages":
			bit = keyMessages
			req.Messages, ok = s.messages()
		case "stream":
			bit = keyStream
			req.Stream, ok = s.Bool()
		case "stream_options":
			bit = keyStreamOptions
			req.StreamOptions, ok = s.streamOptions()
		case "max_tokens":
			bit = keyMaxTokens
			req.MaxTokens, ok = s.intPtr()
		case "max_completion_tokens":
			bit = keyMaxCompletionTokens
			req.MaxCompletionTokens, ok = s.intPtr()
		case "min_tokens":
			bit = keyMinTokens
			req.MinTokens, ok = s.intPtr()
		case "n":
			bit = keyN
			req.N, ok = s.intPtr()
		case "ignore_eos":
			bit = keyIgnoreEOS
			req.IgnoreEOS, ok = s.boolPtr()
		case "add_generation_prompt":
			bit = keyAddGenerationPrompt
			req.AddGenerationPrompt, ok = s.boolPtr()
		case "temperature":
			bit = keyTemperature
			req.Temperature, ok = s.floatPtr()
		case "top_p":
			bit = keyTopP
			req.TopP, ok = s.floatPtr()
		case "seed":
			bit = keySeed
			req.Seed, ok = s.int64Ptr()
		case "user":
			bit = keyUser
			req.User, ok = s.str()
		case "reasoning_effort":
			bit = keyReasoningEffort
			if !s.Null() {
				var v string
				v, ok = s.str()
				req.ReasoningEffort = &v
			}
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}) && s.Done()
}

// scanner reads the fast path's subset of JSON: the leaf's, and the request's shapes.
type scanner struct{ jsonscan.Scanner }

func (s *scanner) str() (string, bool) {
	v, ok := s.Plain()
	return string(v), ok
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

func (s *scanner) boolPtr() (*bool, bool) {
	if s.Null() {
		return nil, true
	}
	v, ok := s.Bool()
	if !ok {
		return nil, false
	}
	return &v, true
}

// int64Ptr reads null or a JSON integer that fits an int64.
func (s *scanner) int64Ptr() (*int64, bool) {
	n, null, ok := s.nullableInt()
	if !ok || null {
		return nil, ok
	}
	return &n, true
}

func (s *scanner) intPtr() (*int, bool) {
	n, null, ok := s.nullableInt()
	if !ok || null {
		return nil, ok
	}
	v := int(n)
	return &v, true
}

// nullableInt reads null or a JSON integer; the pointer readers above allocate
// only the one they return.
func (s *scanner) nullableInt() (n int64, null, ok bool) {
	if s.Null() {
		return 0, true, true
	}
	n, ok = s.Int()
	return n, false, ok
}

// floatPtr reads null or a JSON number.
func (s *scanner) floatPtr() (*float64, bool) {
	if s.Null() {
		return nil, true
	}
	num, ok := s.Number()
	if !ok {
		return nil, false
	}
	v, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return nil, false // out of range: json.Unmarshal's error
	}
	return &v, true
}

func (s *scanner) streamOptions() (*StreamOptions, bool) {
	if s.Null() {
		return nil, true
	}
	o := &StreamOptions{}
	seen := false
	ok := s.Object(func(key []byte) bool {
		if seen || string(key) != "include_usage" {
			return false
		}
		seen = true
		var ok bool
		o.IncludeUsage, ok = s.Bool()
		return ok
	})
	if !ok {
		return nil, false
	}
	return o, true
}

// messages reads an array of messages whose keys are role, content (a plain string or
// null) and name, each at most once.
func (s *scanner) messages() ([]Message, bool) {
	msgs := make([]Message, 0, 4)
	ok := s.Array(func() bool {
		var m Message
		seen := 0
		ok := s.Object(func(key []byte) bool {
			var bit int
			ok := true
			switch string(key) {
			case "role":
				bit = 1
				var v []byte
				v, ok = s.Plain()
				m.Role = role(v)
			case "content":
				bit = 2
				if s.Null() {
					m.Content = Content{Null: true}
				} else {
					m.Content.Text, ok = s.str()
				}
			case "name":
				bit = 4
				m.Name, ok = s.str()
			default:
				return false
			}
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			return true
		})
		msgs = append(msgs, m)
		return ok
	})
	if !ok {
		return nil, false
	}
	return msgs, true
}
