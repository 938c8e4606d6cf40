package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// looseChunk is what ChunkParser reads, typed as encoding/json would read it: a chunk
// that decodes into it is well-formed for the parser too.
type looseChunk struct {
	Object  *string `json:"object"`
	Type    *string `json:"type"`
	Choices []struct {
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
		Delta        *struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     *int `json:"prompt_tokens"`
		CompletionTokens *int `json:"completion_tokens"`
		TotalTokens      *int `json:"total_tokens"`
		InputTokens      *int `json:"input_tokens"`
		OutputTokens     *int `json:"output_tokens"`
	} `json:"usage"`
}

// FuzzChunkParser feeds response bodies and stream events of every API the client
// reads (chat, completions, Responses, Anthropic Messages) to ChunkParser, the
// client's parser of untrusted server bytes. Property: no panic; what it cannot read
// is an error, never a chunk read past the input; a chunk encoding/json reads with
// the parser's field types (looseChunk) is read without error; and the text it
// returns matches encoding/json's for a well-formed chat chunk. Seeds:
// testdata/chunks/*.json.
func FuzzChunkParser(f *testing.F) {
	paths, _ := filepath.Glob("testdata/chunks/*.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	var p ChunkParser
	f.Fuzz(func(t *testing.T, data []byte) {
		var c StreamChunk
		err := p.Parse(data, &c)
		if err != nil {
			return
		}
		var loose looseChunk
		// A key given twice or in another case reads differently in encoding/json, which
		// keeps the last and ignores case; compare only chunks without such keys.
		if json.Unmarshal(data, &loose) != nil || !plainKeys(data) {
			return
		}
		if len(loose.Choices) != c.Choices {
			t.Fatalf("%s: %d choices, encoding/json %d", data, c.Choices, len(loose.Choices))
		}
		if len(loose.Choices) > 0 && loose.Choices[0].Delta != nil && loose.Choices[0].Delta.Content != nil && loose.Choices[0].Text == nil {
			if want := *loose.Choices[0].Delta.Content; string(c.Text) != want {
				t.Fatalf("%s: text %q, encoding/json %q", data, c.Text, want)
			}
		}
	})
}

// plainKeys reports whether every key in data is lower case (encoding/json matches
// keys in any case, the parser as servers write them) and no object repeats a key.
func plainKeys(data []byte) bool {
	d := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj  bool
		key  bool // the next string token is a key
		seen map[string]bool
	}
	var stack []*frame
	for {
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
				k := v
				if top.seen[k] || strings.ToLower(k) != k {
					return false
				}
				top.seen[k] = true
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
