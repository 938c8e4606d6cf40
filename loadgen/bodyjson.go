package loadgen

// A reflection-free encoder for wireBody: the same bytes encoding/json's Marshal
// writes (fields in struct order, omitempty, HTML escaping on), at a fraction of the
// cost (reflection was about a tenth of the client's CPU with synthetic prompts).
// TestWireBodyMatchesMarshal holds it to Marshal's output.

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/perfgate/perfgate/record"
)

// appendWireBody appends w as encoding/json.Marshal(w) writes it.
func appendWireBody(dst []byte, w *wireBody) []byte {
	dst = append(dst, `{"model":`...)
	dst = record.AppendJSONStringHTML(dst, w.Model)
	if w.System != "" {
		dst = record.AppendJSONStringHTML(append(dst, `,"system":`...), w.System)
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
		dst = record.AppendJSONStringHTML(append(dst, `,"prompt":`...), *w.Prompt)
	}
	dst = appendMarshalAny(dst, `,"input":`, w.Input)
	dst = appendMarshalAny(dst, `,"query":`, w.Query)
	if len(w.Passages) > 0 {
		dst = append(dst, `,"passages":[`...)
		for i, p := range w.Passages {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(record.AppendJSONStringHTML(append(dst, `{"text":`...), p.Text), '}')
		}
		dst = append(dst, ']')
	}
	if len(w.Documents) > 0 {
		dst = append(dst, `,"documents":[`...)
		for i, d := range w.Documents {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = record.AppendJSONStringHTML(dst, d)
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
	dst = record.AppendJSONStringHTML(append(dst, `{"role":`...), m.Role)
	dst = record.AppendJSONStringHTML(append(dst, `,"content":`...), m.Content)
	if len(m.ToolCalls) > 0 { // rare (Workload.ToolResults): as Marshal embeds them
		b, _ := json.Marshal(m.ToolCalls)
		dst = append(append(dst, `,"tool_calls":`...), b...)
	}
	if m.ToolCallID != "" {
		dst = record.AppendJSONStringHTML(append(dst, `,"tool_call_id":`...), m.ToolCallID)
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
		return record.AppendJSONStringHTML(append(dst, key...), x)
	case textField:
		return append(record.AppendJSONStringHTML(append(dst, key+`{"text":`...), x.Text), '}')
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
			dst = record.AppendJSONStringHTML(dst, s)
		}
		return append(dst, ']')
	}
	b, _ := json.Marshal(v) // any other shape: as Marshal would embed it
	return append(append(dst, key...), b...)
}
