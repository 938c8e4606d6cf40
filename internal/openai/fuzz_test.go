package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/jsonscan"
)

// FuzzChunkParser feeds response bodies and stream events of every API the client
// reads (chat, completions, Responses, Anthropic Messages) to ChunkParser, the
// client's parser of untrusted server bytes, and holds it to encoding/json field by
// field. Property: no panic; what it cannot read is an error, never a chunk read past
// the input; and a chunk that encoding/json reads (refChunk: the members the parser
// reads, typed as its fields are) is read without error, every field of the
// StreamChunk the value encoding/json gives (refWant), null leaving a field as it
// was. Seeds: testdata/chunks/*.json, and hostile answers made here.
func FuzzChunkParser(f *testing.F) {
	paths, _ := filepath.Glob("testdata/chunks/*.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// Hostile answers: 100,000 empty tool call entries (300 KB), past MaxToolDeltas;
	// 1,000 content blocks with escapes, once joined in quadratic time.
	f.Add(toolCallsAnswer(100_000, func(int) string { return `{}` }))
	f.Add(blocksAnswer(1_000))
	var p ChunkParser
	f.Fuzz(func(t *testing.T, data []byte) {
		var c StreamChunk
		err := p.Parse(data, &c)
		// encoding/json reads null into a struct and matches keys in any case and
		// spelled with escapes, keeping the last of a repeated key; the parser reads an
		// object, keys as servers write them: compare only such chunks.
		if i := jsonscan.SkipWS(data, 0); i >= len(data) || data[i] != '{' || !plainKeys(data) {
			return
		}
		want, ok := refWant(data)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v; encoding/json reads it", data, err)
		}
		for _, d := range want.diff(&c) {
			t.Errorf("%s: %s", data, d)
		}
	})
}

// refUsage is a usage object as encoding/json reads the parser's int fields (nil:
// absent or null, which leaves a field as it was).
type refUsage struct {
	PromptTokens      *int            `json:"prompt_tokens"`
	CompletionTokens  *int            `json:"completion_tokens"`
	TotalTokens       *int            `json:"total_tokens"`
	InputTokens       *int            `json:"input_tokens"`
	OutputTokens      *int            `json:"output_tokens"`
	CompletionDetails json.RawMessage `json:"completion_tokens_details"`
	OutputDetails     json.RawMessage `json:"output_tokens_details"`
	PromptDetails     json.RawMessage `json:"prompt_tokens_details"`
	InputDetails      json.RawMessage `json:"input_tokens_details"`
}

// refChunk is a chunk as encoding/json reads the members ChunkParser reads. A value
// the parser reads only when it has one JSON type (a string, an object, an array)
// and skips otherwise is kept raw and read by refWant; the usage numbers and the tool
// call lists, which the parser refuses when they are not what it reads, are typed as
// its fields, so encoding/json decides what they may be.
type refChunk struct {
	Object     json.RawMessage   `json:"object"`
	Type       json.RawMessage   `json:"type"`
	Text       json.RawMessage   `json:"text"`
	StopReason json.RawMessage   `json:"stop_reason"`
	Delta      json.RawMessage   `json:"delta"`
	Message    json.RawMessage   `json:"message"`
	Response   json.RawMessage   `json:"response"`
	Choices    []json.RawMessage `json:"choices"`
	Data       json.RawMessage   `json:"data"`
	Content    json.RawMessage   `json:"content"`
	Output     json.RawMessage   `json:"output"`
	Usage      *refUsage         `json:"usage"`
}

// refMessage is a choice's delta or message.
type refMessage struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ToolCalls        []struct {
		Index    json.RawMessage `json:"index"`
		ID       json.RawMessage `json:"id"`
		Function json.RawMessage `json:"function"`
	} `json:"tool_calls"`
}

// refField is one StreamChunk field as encoding/json reads it: its value and how many
// members set it. Members set a field in the order they come, which encoding/json
// does not keep, so a field two members set is not compared.
type refField struct {
	n int
	v *string
}

// set counts a member whose value, a string, is the field's (any other value is
// skipped, null included).
func (f *refField) set(raw json.RawMessage) {
	if s, ok := refStr(raw); ok {
		f.n, f.v = f.n+1, &s
	}
}

// join counts a member whose parts are concatenated into the field (content blocks),
// when it has any text.
func (f *refField) join(s string) {
	if s != "" {
		f.n, f.v = f.n+1, &s
	}
}

// refInt is an int field: its value and how many members set it.
type refInt struct{ n, v int }

func (f *refInt) set(p *int) {
	if p != nil {
		f.n, f.v = f.n+1, *p
	}
}

// refChunkWant is what the parser must read from a chunk.
type refChunkWant struct {
	object, typ, text, reasoning, finish, transcript refField
	choices, images                                  int
	usages                                           int // usage objects (not null)
	prompt, completion, total, reasoningTokens       refInt
	cached                                           refInt // a whole number >= 0: its value; otherwise -1 (CachedBad)
	tools                                            []ToolDelta
	toolLists                                        int // tool call lists with entries
}

// refStr reads raw as encoding/json reads a string; ok is false for any other value.
func refStr(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// refObj reads raw into v when it is an object; ok is false for any other value, or
// when encoding/json refuses it.
func refObj(raw json.RawMessage, v any) bool {
	return len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, v) == nil
}

// refArr reads raw's elements when it is an array.
func refArr(raw json.RawMessage) []json.RawMessage {
	var a []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &a) != nil {
		return nil
	}
	return a
}

// refBlocks concatenates the texts of the content blocks of raw (an array) whose
// type is typ, as [ChunkParser] joins them; field is "text" or "thinking".
func refBlocks(raw json.RawMessage, typ, field string) string {
	var out strings.Builder
	for _, e := range refArr(raw) {
		var b map[string]json.RawMessage
		if !refObj(e, &b) {
			continue
		}
		if t, _ := refStr(b["type"]); t == typ {
			s, _ := refStr(b[field])
			out.WriteString(s)
		}
	}
	return out.String()
}

// refWant reads data with encoding/json into what the parser must read; ok is false
// when encoding/json refuses it.
func refWant(data []byte) (w refChunkWant, ok bool) {
	var r refChunk
	if json.Unmarshal(data, &r) != nil {
		return w, false
	}
	w.object.set(r.Object)
	w.typ.set(r.Type)
	w.transcript.set(r.Text)
	w.finish.set(r.StopReason)
	w.choices = len(r.Choices)
	w.text.set(r.Delta) // a Responses text delta
	var delta struct {
		Text       json.RawMessage `json:"text"`
		Thinking   json.RawMessage `json:"thinking"`
		StopReason json.RawMessage `json:"stop_reason"`
	}
	if refObj(r.Delta, &delta) { // an Anthropic event's delta
		w.text.set(delta.Text)
		w.reasoning.set(delta.Thinking)
		w.finish.set(delta.StopReason)
	}
	w.text.join(refBlocks(r.Content, "text", "text"))
	w.reasoning.join(refBlocks(r.Content, "thinking", "thinking"))
	var out strings.Builder
	for _, o := range refArr(r.Output) {
		var v struct{ Content json.RawMessage }
		if refObj(o, &v) {
			out.WriteString(refBlocks(v.Content, "output_text", "text"))
		}
	}
	w.text.join(out.String())
	for _, d := range refArr(r.Data) {
		var img struct {
			B64 json.RawMessage `json:"b64_json"`
			URL json.RawMessage `json:"url"`
		}
		if refObj(d, &img) {
			b64, _ := refStr(img.B64)
			url, _ := refStr(img.URL)
			if b64 != "" || url != "" {
				w.images++
			}
		}
	}
	usages := []*refUsage{r.Usage}
	for _, raw := range []json.RawMessage{r.Message, r.Response} {
		var v struct{ Usage *refUsage }
		if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &v) != nil {
			return w, false
		}
		usages = append(usages, v.Usage)
	}
	for _, u := range usages {
		if u == nil {
			continue
		}
		w.usages++
		w.prompt.set(u.PromptTokens)
		w.prompt.set(u.InputTokens)
		w.completion.set(u.CompletionTokens)
		w.completion.set(u.OutputTokens)
		w.total.set(u.TotalTokens)
		for _, raw := range []json.RawMessage{u.CompletionDetails, u.OutputDetails} {
			var d struct {
				ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
			}
			var n int
			if refObj(raw, &d) && json.Unmarshal(d.ReasoningTokens, &n) == nil && string(d.ReasoningTokens) != "null" {
				w.reasoningTokens.set(&n)
			}
		}
		for _, raw := range []json.RawMessage{u.PromptDetails, u.InputDetails} {
			var d struct {
				CachedTokens json.RawMessage `json:"cached_tokens"`
			}
			bad := -1
			switch {
			case len(raw) == 0 || string(raw) == "null":
			case !refObj(raw, &d):
				w.cached.set(&bad) // details that are not an object
			case len(d.CachedTokens) == 0 || string(d.CachedTokens) == "null":
			default:
				var n int
				if json.Unmarshal(d.CachedTokens, &n) != nil || n < 0 {
					n = bad
				}
				w.cached.set(&n)
			}
		}
	}
	var first struct {
		Text         json.RawMessage `json:"text"`
		FinishReason json.RawMessage `json:"finish_reason"`
		Delta        json.RawMessage `json:"delta"`
		Message      json.RawMessage `json:"message"`
	}
	if len(r.Choices) == 0 || !refObj(r.Choices[0], &first) {
		return w, true
	}
	w.text.set(first.Text)
	w.finish.set(first.FinishReason)
	for _, raw := range []json.RawMessage{first.Delta, first.Message} {
		var m refMessage
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		if json.Unmarshal(raw, &m) != nil {
			return w, false
		}
		w.text.set(m.Content)
		w.reasoning.set(m.ReasoningContent)
		w.reasoning.set(m.Reasoning)
		if len(m.ToolCalls) > 0 {
			w.toolLists++
		}
		for pos, e := range m.ToolCalls {
			td := ToolDelta{Index: pos}
			if string(e.Index) != "null" {
				json.Unmarshal(e.Index, &td.Index) // not an int: the position stays
			}
			if id, ok := refStr(e.ID); ok {
				td.ID = []byte(id)
			}
			var fn struct{ Name, Arguments json.RawMessage }
			if refObj(e.Function, &fn) {
				name, _ := refStr(fn.Name)
				args, _ := refStr(fn.Arguments)
				td.Name, td.Args = []byte(name), []byte(args)
			}
			w.tools = append(w.tools, td)
		}
	}
	return w, true
}

// diff lists how c differs from w, one line a field, for the fields that one member
// set (or none).
func (w *refChunkWant) diff(c *StreamChunk) []string {
	var out []string
	bytesField := func(name string, f refField, got []byte, nilWhenUnset bool) {
		switch {
		case f.n > 1:
		case f.n == 0 && nilWhenUnset && got != nil:
			out = append(out, fmt.Sprintf("%s %q, encoding/json reads none (want nil)", name, got))
		case f.n == 0 && len(got) > 0:
			out = append(out, fmt.Sprintf("%s %q, encoding/json reads none", name, got))
		case f.n == 1 && (string(got) != *f.v || got == nil):
			out = append(out, fmt.Sprintf("%s %q (nil %t), encoding/json %q", name, got, got == nil, *f.v))
		}
	}
	bytesField("object", w.object, c.Object, true)
	bytesField("type", w.typ, c.Type, true)
	bytesField("text", w.text, c.Text, false)
	bytesField("reasoning", w.reasoning, c.Reasoning, false)
	bytesField("finish reason", w.finish, c.FinishReason, true)
	bytesField("transcript", w.transcript, c.Transcript, true)
	if c.Choices != w.choices {
		out = append(out, fmt.Sprintf("%d choices, encoding/json %d", c.Choices, w.choices))
	}
	if c.Images != w.images {
		out = append(out, fmt.Sprintf("%d images, encoding/json %d", c.Images, w.images))
	}
	if c.HasUsage != (w.usages > 0) {
		out = append(out, fmt.Sprintf("has usage %t, encoding/json reads %d usage objects", c.HasUsage, w.usages))
	}
	if w.usages <= 1 {
		for _, f := range []struct {
			name string
			want refInt
			got  int
		}{
			{"usage prompt tokens", w.prompt, c.Usage.PromptTokens},
			{"usage completion tokens", w.completion, c.Usage.CompletionTokens},
			{"usage total tokens", w.total, c.Usage.TotalTokens},
			{"usage reasoning tokens", w.reasoningTokens, c.UsageReasoning},
		} {
			if f.want.n <= 1 && f.got != f.want.v {
				out = append(out, fmt.Sprintf("%s %d, encoding/json %d", f.name, f.got, f.want.v))
			}
		}
	}
	if w.usages <= 1 && w.cached.n <= 1 {
		want, wantN := CachedAbsent, 0
		switch {
		case w.cached.n == 1 && w.cached.v < 0:
			want = CachedBad
		case w.cached.n == 1:
			want, wantN = CachedKnown, w.cached.v
		}
		if c.Cached != want || want == CachedKnown && c.UsageCached != wantN {
			out = append(out, fmt.Sprintf("cached tokens %d (state %d), encoding/json %d (state %d)", c.UsageCached, c.Cached, wantN, want))
		}
	}
	if w.toolLists <= 1 {
		kept, dropped := w.tools[:min(len(w.tools), MaxToolDeltas)], w.tools[min(len(w.tools), MaxToolDeltas):]
		if !reflect.DeepEqual(toolStrings(c.Tools), toolStrings(kept)) {
			out = append(out, fmt.Sprintf("tool calls %v, encoding/json %v", toolStrings(c.Tools), toolStrings(kept)))
		}
		var args []byte
		for _, td := range dropped {
			args = append(args, td.Args...)
		}
		if c.ToolsDropped != len(dropped) || string(c.ToolArgsDropped) != string(args) {
			out = append(out, fmt.Sprintf("%d tool call entries dropped (arguments %q); encoding/json reads %d past the first %d (%q)",
				c.ToolsDropped, c.ToolArgsDropped, len(dropped), MaxToolDeltas, args))
		}
	}
	return out
}

// toolStrings writes tool call entries for comparison and failure text (an id is
// "<nil>" when absent).
func toolStrings(tds []ToolDelta) []string {
	var out []string
	for _, td := range tds {
		id := "<nil>"
		if td.ID != nil {
			id = strconv.Quote(string(td.ID))
		}
		out = append(out, fmt.Sprintf("{index %d, id %s, name %q, args %q}", td.Index, id, td.Name, td.Args))
	}
	return out
}

// plainKeys reports whether every key in data is written as servers write them (the
// parser matches keys byte for byte, encoding/json in any case, Unicode folding and
// escapes included): ASCII, lower case, without escapes, and no object repeats one.
func plainKeys(data []byte) bool {
	d := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj  bool
		key  bool // the next string token is a key
		seen map[string]bool
	}
	var stack []*frame
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err != nil {
			return true
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &frame{obj: true, key: true, seen: map[string]bool{}})
				continue
			case '[':
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.obj && top.key {
				raw := data[off:d.InputOffset()] // the key as written, after the separator before it
				if top.seen[v] || bytes.ContainsFunc(raw, func(r rune) bool { return r >= utf8.RuneSelf || r == '\\' || 'A' <= r && r <= 'Z' }) {
					return false
				}
				top.seen[v] = true
				top.key = false
				continue
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].key = true
		}
	}
}

// FuzzChunkRoundTrip: what the mock's writers (AppendChatChunk, AppendCompletionChunk,
// AppendContentBlockDelta, AppendResponseTextDelta) write for any text, ChunkParser
// reads back as that text (invalid UTF-8 as encoding/json replaces it).
func FuzzChunkRoundTrip(f *testing.F) {
	f.Add("Hi", "stop")
	f.Add("q\"b\\s\u2028\x00\xff", "")
	f.Add("🙂 é", "length")
	var p ChunkParser
	f.Fuzz(func(t *testing.T, text, finish string) {
		b, _ := json.Marshal(text)
		var want string
		json.Unmarshal(b, &want) // invalid UTF-8 as encoding/json replaces it
		h := ChunkHeader{ID: "chatcmpl-1", Created: 1, Model: text}
		for name, data := range map[string][]byte{
			"chat":        AppendChatChunk(nil, h, "assistant", text, finish, true),
			"completions": AppendCompletionChunk(nil, h, text, finish, false),
			"messages":    AppendContentBlockDelta(nil, 0, false, text),
			"responses":   AppendResponseTextDelta(nil, text, 3, text),
		} {
			var c StreamChunk
			if err := p.Parse(data, &c); err != nil || string(c.Text) != want {
				t.Fatalf("%s: %s read back as %q, %v; want %q", name, data, c.Text, err, want)
			}
		}
		var c StreamChunk
		if err := p.Parse(AppendContentBlockDelta(nil, 0, true, text), &c); err != nil || string(c.Reasoning) != want {
			t.Fatalf("thinking delta read back as %q, %v; want %q", c.Reasoning, err, want)
		}
	})
}
