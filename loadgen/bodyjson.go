package loadgen

// A reflection-free encoder for wireBody: the same bytes encoding/json's Marshal
// writes (fields in struct order, omitempty, HTML escaping on), at a fraction of the
// cost (reflection was about a tenth of the client's CPU with synthetic prompts).
// TestWireBodyMatchesMarshal holds it to Marshal's output.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// appendWireBody appends w as encoding/json.Marshal(w) writes it.
func appendWireBody(dst []byte, w *wireBody) []byte {
	dst = append(dst, `{"model":`...)
	dst = appendMarshalString(dst, w.Model)
	if w.System != "" {
		dst = appendMarshalString(append(dst, `,"system":`...), w.System)
	}
	if len(w.Messages) > 0 {
		dst = append(dst, `,"messages":[`...)
		for i, m := range w.Messages {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendMessage(dst, &m)
		}
		dst = append(dst, ']')
	}
	if w.Prompt != nil {
		dst = appendMarshalString(append(dst, `,"prompt":`...), *w.Prompt)
	}
	dst = appendMarshalAny(dst, `,"input":`, w.Input)
	dst = appendMarshalAny(dst, `,"query":`, w.Query)
	if len(w.Passages) > 0 {
		dst = append(dst, `,"passages":[`...)
		for i, p := range w.Passages {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendMarshalString(append(dst, `{"text":`...), p.Text), '}')
		}
		dst = append(dst, ']')
	}
	if len(w.Documents) > 0 {
		dst = append(dst, `,"documents":[`...)
		for i, d := range w.Documents {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendMarshalString(dst, d)
		}
		dst = append(dst, ']')
	}
	if len(w.Tools) > 0 {
		dst = append(dst, `,"tools":`...)
		dst = appendCompact(dst, w.Tools)
	}
	dst = appendMarshalAny(dst, `,"tool_choice":`, w.ToolChoice)
	if w.Stream {
		dst = append(dst, `,"stream":true`...)
	}
	if w.StreamOptions != nil {
		dst = strconv.AppendBool(append(dst, `,"stream_options":{"include_usage":`...), w.StreamOptions.IncludeUsage)
		dst = append(dst, '}')
	}
	dst = appendMarshalInt(dst, `,"max_tokens":`, w.MaxTokens)
	dst = appendMarshalInt(dst, `,"max_completion_tokens":`, w.MaxCompletionTokens)
	dst = appendMarshalInt(dst, `,"max_output_tokens":`, w.MaxOutputTokens)
	dst = appendMarshalInt(dst, `,"min_tokens":`, w.MinTokens)
	if w.IgnoreEOS != nil {
		dst = strconv.AppendBool(append(dst, `,"ignore_eos":`...), *w.IgnoreEOS)
	}
	return append(dst, '}')
}

// appendMessage appends one chat message as Marshal writes it.
func appendMessage(dst []byte, m *message) []byte {
	dst = appendMarshalString(append(dst, `{"role":`...), m.Role)
	dst = appendMarshalString(append(dst, `,"content":`...), m.Content)
	if len(m.ToolCalls) > 0 { // rare (Workload.ToolResults): as Marshal embeds them
		b, _ := json.Marshal(m.ToolCalls)
		dst = append(append(dst, `,"tool_calls":`...), b...)
	}
	if m.ToolCallID != "" {
		dst = appendMarshalString(append(dst, `,"tool_call_id":`...), m.ToolCallID)
	}
	return append(dst, '}')
}

// appendCompact appends the JSON raw as Marshal embeds a json.RawMessage: compacted,
// HTML-escaped.
func appendCompact(dst, raw []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return append(dst, raw...)
	}
	var esc bytes.Buffer
	json.HTMLEscape(&esc, buf.Bytes())
	return append(dst, esc.Bytes()...)
}

func appendMarshalInt(dst []byte, key string, v *int) []byte {
	if v == nil {
		return dst
	}
	return strconv.AppendInt(append(dst, key...), int64(*v), 10)
}

// appendMarshalAny appends key and v's encoding/json form, unless v is nil (omitempty).
func appendMarshalAny(dst []byte, key string, v any) []byte {
	switch x := v.(type) {
	case nil:
		return dst
	case string:
		return appendMarshalString(append(dst, key...), x)
	case textField:
		return append(appendMarshalString(append(dst, key+`{"text":`...), x.Text), '}')
	case []message:
		if x == nil {
			return append(dst, key+"null"...)
		}
		dst = append(dst, key+"["...)
		for i, m := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendMessage(dst, &m)
		}
		return append(dst, ']')
	case []string:
		if x == nil {
			return append(dst, key+"null"...)
		}
		dst = append(dst, key+"["...)
		for i, s := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendMarshalString(dst, s)
		}
		return append(dst, ']')
	}
	b, _ := json.Marshal(v) // any other shape: as Marshal would embed it
	return append(append(dst, key...), b...)
}

const lowerHex = "0123456789abcdef"

// appendMarshalString appends s quoted as encoding/json.Marshal does: HTML-sensitive
// <, > and & and control characters as \u00XX (\b \f \n \r \t short), invalid UTF-8
// as \ufffd, U+2028 and U+2029 escaped.
func appendMarshalString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', lowerHex[b>>4], lowerHex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', lowerHex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}
