package openai

import (
	"encoding/json"
	"strconv"

	"github.com/perfgate/perfgate/internal/jsonscan"
)

// Tool calls (function calling) in chat completions: the answer's
// message.tool_calls, and in a stream the deltas OpenAI sends for them — the first
// delta of a call carries its index, id, type and function name (with empty
// arguments), each later one its index and a fragment of the arguments' JSON text.

// ToolCall is one entry of an assistant message's "tool_calls".
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// Tool is one entry of a request's "tools": a function the model may call.
type Tool struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef is a tool's function: its name, what it does and its parameters' JSON
// schema.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// FunctionCall is a tool call's function: its name and its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDelta is one entry of a chunk's delta.tool_calls (or of a whole message's
// tool_calls), as [ChunkParser] reads it. Its byte slices are valid until the next
// Parse.
type ToolDelta struct {
	// Index is the call's position in the answer's tool_calls (its position in the list
	// when the entry has no "index").
	Index int
	// ID and Name are set on a call's first delta (and in a whole message).
	ID, Name []byte
	// Args is the fragment of the arguments' text this delta carries (all of it in a
	// whole message).
	Args []byte
}

// AppendChatToolCallChunk appends one "chat.completion.chunk" whose delta carries one
// tool call entry at index: with id != "" the call's first delta (id, type "function",
// the function's name and args, often ""), else a fragment args of its arguments; role
// when role != "". With includeUsage, "usage":null is added as [AppendChatChunk] does.
func AppendChatToolCallChunk(dst []byte, h ChunkHeader, role string, index int, id, name, args string, includeUsage bool) []byte {
	dst = appendHeader(dst, h, "chat.completion.chunk")
	dst = append(dst, `,"choices":[{"index":0,"delta":{`...)
	if role != "" {
		dst = append(dst, `"role":`...)
		dst = AppendString(dst, role)
		dst = append(dst, `,"content":null,`...)
	}
	dst = append(dst, `"tool_calls":[{"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if id != "" {
		dst = append(dst, `,"id":`...)
		dst = AppendString(dst, id)
		dst = append(dst, `,"type":"function","function":{"name":`...)
		dst = AppendString(dst, name)
		dst = append(dst, `,"arguments":`...)
	} else {
		dst = append(dst, `,"function":{"arguments":`...)
	}
	dst = AppendString(dst, args)
	dst = append(dst, "}}]}"...)
	return appendChoiceEnd(dst, "", includeUsage)
}

// MaxToolDeltas bounds the tool call entries [ChunkParser] keeps from one chunk
// ([StreamChunk.Tools]). A model's answer calls a few tools, and a stream's chunk
// carries one entry; an answer of 100,000 empty entries is 300 KB, and kept whole
// a 16 MiB one would take hundreds of megabytes. The entries past the bound are
// counted, and their arguments' text kept, in StreamChunk.ToolsDropped and
// ToolArgsDropped.
const MaxToolDeltas = 1024

// toolCalls reads the array of tool call entries at b[i] into c.Tools (the first
// MaxToolDeltas; the rest into c.ToolsDropped and ToolArgsDropped). As encoding/json
// reads them, null is no entries and a null entry an empty one.
func (p *ChunkParser) toolCalls(b []byte, i int, c *StreamChunk) (int, error) {
	if i >= len(b) || b[i] != '[' && b[i] != 'n' {
		return 0, ErrSyntax
	}
	pos := 0
	end, err := p.array(b, i, func(b []byte, j int) (int, error) {
		t := &p.spare
		if len(p.tools) < MaxToolDeltas {
			p.tools = append(p.tools, ToolDelta{})
			t = &p.tools[len(p.tools)-1]
		}
		*t = ToolDelta{Index: pos}
		pos++
		end, err := p.toolEntry(b, j, t)
		if t == &p.spare {
			c.ToolsDropped++
			c.ToolArgsDropped = join(&p.dropped, c.ToolArgsDropped, t.Args)
		}
		return end, err
	})
	if err == nil && len(p.tools) > 0 {
		c.Tools = p.tools
	}
	return end, err
}

// toolEntry reads the tool call entry at b[i] (an object or null) into *t.
func (p *ChunkParser) toolEntry(b []byte, i int, t *ToolDelta) (int, error) {
	if b[i] == 'n' {
		end, err := jsonscan.Skip(b, i)
		if err == nil && !isNull(b[i:end]) {
			err = ErrSyntax
		}
		return end, err
	}
	return jsonscan.Object(b, i, func(key []byte, b []byte, j int) (int, error) {
		switch string(key) {
		case "index":
			end, err := jsonscan.Skip(b, j)
			if err != nil {
				return 0, err
			}
			if n, ok := jsonscan.Atoi(b[j:end]); ok {
				t.Index = n
			}
			return end, nil
		case "id":
			return p.str(b, j, &t.ID)
		case "function":
			if j < len(b) && b[j] == '{' {
				return jsonscan.Object(b, j, func(k []byte, b []byte, j int) (int, error) {
					switch string(k) {
					case "name":
						return p.str(b, j, &t.Name)
					case "arguments":
						return p.str(b, j, &t.Args)
					}
					return jsonscan.Skip(b, j)
				})
			}
		}
		return jsonscan.Skip(b, j)
	})
}
