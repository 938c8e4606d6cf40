package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{"", "hello", `q"b\s`, "tab\tnl\ncr\r", "\x00\x01\x1f", "é日本語🙂", "bad\xffutf8\xc3", "\u2028\u2029", "<html>&amp;", "\x7f"}
	for _, s := range inputs {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("AppendString(%q) = %s: not valid JSON: %v", s, got, err)
			continue
		}
		want, _ := json.Marshal(s) // encoding/json also replaces invalid UTF-8 with U+FFFD
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("AppendString(%q) decodes to %q, want %q", s, back, wantBack)
		}
	}
}

func TestAppendChatChunkDecodes(t *testing.T) {
	h := ChunkHeader{ID: "chatcmpl-1", Created: 1700000000, Model: "gpt2"}
	var c ChatChunk
	b := AppendChatChunk(nil, h, "assistant", "", "", true)
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("role chunk %s: %v", b, err)
	}
	if c.Choices[0].Delta.Role != "assistant" || c.Choices[0].FinishReason != nil || c.Object != "chat.completion.chunk" {
		t.Errorf("role chunk decoded to %+v", c)
	}
	b = AppendChatChunk(nil, h, "", " wo\"rld", "", false)
	c = ChatChunk{}
	if err := json.Unmarshal(b, &c); err != nil || c.Choices[0].Delta.Content != " wo\"rld" {
		t.Errorf("content chunk %s decoded to %+v, %v", b, c, err)
	}
	b = AppendChatChunk(nil, h, "", "", "length", false)
	c = ChatChunk{}
	if err := json.Unmarshal(b, &c); err != nil || *c.Choices[0].FinishReason != "length" {
		t.Errorf("finish chunk %s decoded to %+v, %v", b, c, err)
	}
	b = AppendChatUsageChunk(nil, h, Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7})
	c = ChatChunk{}
	if err := json.Unmarshal(b, &c); err != nil || c.Usage == nil || *c.Usage != (Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}) || len(c.Choices) != 0 {
		t.Errorf("usage chunk %s decoded to %+v, %v", b, c, err)
	}
	var cc Completion
	b = AppendCompletionChunk(nil, h, "x\ny", "stop", true)
	if err := json.Unmarshal(b, &cc); err != nil || cc.Choices[0].Text != "x\ny" || *cc.Choices[0].FinishReason != "stop" {
		t.Errorf("completion chunk %s decoded to %+v, %v", b, cc, err)
	}
}

// TestAppendChatCompletionDecodes: the whole chat completion the mock writes without
// reflection decodes to the ChatCompletion encoding/json wrote before (with and
// without reasoning and completion_tokens_details, text needing escapes), and the
// client's parser reads its text and usage.
func TestAppendChatCompletionDecodes(t *testing.T) {
	h := ChunkHeader{ID: "chatcmpl-req-1", Created: 1700000000, Model: "mock \"model\""}
	for _, c := range []struct {
		reasoning, content string
		u                  Usage
	}{
		{"", " a <b> & \"c\"\n\u2028 é", Usage{PromptTokens: 30, CompletionTokens: 16, TotalTokens: 46}},
		{"think\t", "", Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3, CompletionTokensDetails: &CompletionTokensDetails{ReasoningTokens: 2}}},
	} {
		b := AppendChatCompletion(nil, h, c.reasoning, c.content, "length", c.u)
		var got ChatCompletion
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		u := c.u
		want := ChatCompletion{ID: h.ID, Object: "chat.completion", Created: h.Created, Model: h.Model,
			Choices: []ChatChoice{{Message: ResponseMessage{Role: "assistant", Content: c.content, ReasoningContent: c.reasoning}, FinishReason: "length",
				Logprobs: json.RawMessage("null")}}, Usage: &u}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s decoded to\n%+v, want\n%+v", b, got, want)
		}
		var p ChunkParser
		var ch StreamChunk
		if err := p.Parse(b, &ch); err != nil || string(ch.Text) != c.content || ch.Usage.CompletionTokens != c.u.CompletionTokens {
			t.Errorf("%s: the client's parser read %q, usage %+v, %v", b, ch.Text, ch.Usage, err)
		}
	}
}

func TestChunkParser(t *testing.T) {
	h := ChunkHeader{ID: "x", Created: 1, Model: "m"}
	tests := []struct {
		name string
		data []byte
		want StreamChunk
	}{
		{"chat content", AppendChatChunk(nil, h, "", "hi \"there\"\n", "", false),
			StreamChunk{Object: []byte("chat.completion.chunk"), Text: []byte("hi \"there\"\n"), Choices: 1}},
		{"chat finish", AppendChatChunk(nil, h, "", "", "stop", true),
			StreamChunk{Object: []byte("chat.completion.chunk"), FinishReason: []byte("stop"), Choices: 1}},
		{"chat usage", AppendChatUsageChunk(nil, h, Usage{PromptTokens: 5, CompletionTokens: 6, TotalTokens: 11}),
			StreamChunk{Object: []byte("chat.completion.chunk"), HasUsage: true, Usage: Usage{PromptTokens: 5, CompletionTokens: 6, TotalTokens: 11}}},
		{"completion text", AppendCompletionChunk(nil, h, "ab", "length", false),
			StreamChunk{Object: []byte("text_completion"), Text: []byte("ab"), FinishReason: []byte("length"), Choices: 1}},
		{"responses delta", AppendResponseTextDelta(nil, "msg_1", 4, "tok"),
			StreamChunk{Type: []byte(EventOutputTextDelta), Text: []byte("tok")}},
		{"responses completed", []byte(`{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":9,"output_tokens":3,"total_tokens":12}}}`),
			StreamChunk{Type: []byte(EventResponseCompleted), HasUsage: true, Usage: Usage{PromptTokens: 9, CompletionTokens: 3, TotalTokens: 12}}},
		{"reasoning and unicode escapes", []byte(`{ "choices" : [ { "delta" : { "reasoning_content" : "\u00e9\ud83d\ude42" , "content": null } , "finish_reason" : null } ] }`),
			StreamChunk{Reasoning: []byte("é🙂"), Choices: 1}},
		{"two choices, first wins", []byte(`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`),
			StreamChunk{Text: []byte("a"), Choices: 2}},
		{"non-stream message", []byte(`{"choices":[{"message":{"role":"assistant","content":"full"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`),
			StreamChunk{Text: []byte("full"), FinishReason: []byte("stop"), Choices: 1, HasUsage: true, Usage: Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}}},
		{"usage null", []byte(`{"choices":[],"usage":null}`), StreamChunk{}},
	}
	var p ChunkParser
	for _, tc := range tests {
		var got StreamChunk
		if err := p.Parse(tc.data, &got); err != nil {
			t.Errorf("%s: Parse(%s) error %v", tc.name, tc.data, err)
			continue
		}
		if show(got) != show(tc.want) {
			t.Errorf("%s: Parse(%s)\n got %s\nwant %s", tc.name, tc.data, show(got), show(tc.want))
		}
	}
}

func TestChunkParserRejectsMalformed(t *testing.T) {
	var p ChunkParser
	for _, in := range []string{``, `[]`, `{"choices":[{"delta":{"content":"x"}`, `{"a" 1}`, `{"choices":[{"delta":{"content":"\q"}}]}`, `{"usage":{"prompt_tokens":"x"}}`, `{"a":1,}`} {
		var c StreamChunk
		if err := p.Parse([]byte(in), &c); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%s) error = %v, want ErrSyntax", in, err)
		}
	}
}

func TestChunkParserAllocs(t *testing.T) {
	data := AppendChatChunk(nil, ChunkHeader{ID: "x", Model: "m"}, "", "esc\"aped", "", true)
	var p ChunkParser
	var c StreamChunk
	_ = p.Parse(data, &c)
	if n := testing.AllocsPerRun(100, func() { _ = p.Parse(data, &c) }); n != 0 {
		t.Errorf("Parse allocs = %v, want 0", n)
	}
}

func TestContentShapes(t *testing.T) {
	var m Message
	in := `{"role":"user","content":[{"type":"text","text":"Describe "},{"type":"image_url","image_url":{"url":"data:x"}},{"type":"text","text":" please"},{"type":"input_audio","input_audio":{}}]}`
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if m.Content.Text != "Describe <image> please<audio>" || m.Content.NonText != 2 || len(m.Content.Parts) != 4 {
		t.Errorf("list content decoded to %+v", m.Content)
	}
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":null}`), &m); err != nil || !m.Content.Null {
		t.Errorf("null content: %+v, %v", m.Content, err)
	}
	err := json.Unmarshal([]byte(`{"role":"user","content":42}`), &m)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		t.Errorf("numeric content error = %v, want *json.UnmarshalTypeError", err)
	}
	out, _ := json.Marshal(Message{Role: "user", Content: Content{Text: "hi"}})
	if string(out) != `{"role":"user","content":"hi"}` {
		t.Errorf("Marshal = %s", out)
	}
}

func TestPromptShapes(t *testing.T) {
	tests := []struct {
		in   string
		want Prompt
	}{
		{`"a"`, Prompt{Texts: []string{"a"}}},
		{`["a","b"]`, Prompt{Texts: []string{"a", "b"}}},
		{`[1,2,3]`, Prompt{IDs: [][]int{{1, 2, 3}}}},
		{`[[1],[2,3]]`, Prompt{IDs: [][]int{{1}, {2, 3}}}},
		{`[]`, Prompt{Texts: []string{}}},
		{`null`, Prompt{}},
	}
	for _, tc := range tests {
		var p Prompt
		if err := json.Unmarshal([]byte(tc.in), &p); err != nil {
			t.Errorf("Unmarshal(%s): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(p, tc.want) {
			t.Errorf("Unmarshal(%s) = %+v, want %+v", tc.in, p, tc.want)
		}
		if tc.in != "null" && tc.in != "[]" {
			b, _ := json.Marshal(p)
			if !bytes.Equal(b, []byte(tc.in)) {
				t.Errorf("Marshal(Unmarshal(%s)) = %s", tc.in, b)
			}
		}
	}
	var p Prompt
	for _, bad := range []string{`42`, `{"a":1}`, `[1,"a"]`, `[true]`} {
		if err := json.Unmarshal([]byte(bad), &p); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want error", bad, p)
		}
	}
}

func TestRankingShapes(t *testing.T) {
	var nim, cohere RankingRequest
	if err := json.Unmarshal([]byte(`{"model":"r","query":{"text":"q"},"passages":[{"text":"p1"},{"text":"p2"}]}`), &nim); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"model":"r","query":"q","documents":["d1","d2","d3"],"top_n":2}`), &cohere); err != nil {
		t.Fatal(err)
	}
	if nim.Query.Text != "q" || len(nim.Docs()) != 2 || nim.Docs()[1].Text != "p2" {
		t.Errorf("NIM ranking decoded to %+v", nim)
	}
	if cohere.Query.Text != "q" || len(cohere.Docs()) != 3 || *cohere.TopN != 2 {
		t.Errorf("rerank decoded to %+v", cohere)
	}
	if err := json.Unmarshal([]byte(`{"query":{"txt":"q"}}`), &nim); err == nil {
		t.Error("query object without text: want error")
	}
}

func TestChatRequestDistinguishesAbsentFromZero(t *testing.T) {
	var r ChatRequest
	if err := json.Unmarshal([]byte(`{"model":"m","messages":[],"max_tokens":0,"stop":"x"}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.MaxTokens == nil || *r.MaxTokens != 0 || r.MaxCompletionTokens != nil || r.IgnoreEOS != nil {
		t.Errorf("pointers: max_tokens=%v max_completion_tokens=%v ignore_eos=%v", r.MaxTokens, r.MaxCompletionTokens, r.IgnoreEOS)
	}
	if len(r.Stop) != 1 || r.Stop[0] != "x" {
		t.Errorf("stop = %q, want [x]", r.Stop)
	}
}

func TestNewError(t *testing.T) {
	b, _ := json.Marshal(NewError(ErrInvalidRequest, "bad", "max_tokens", ""))
	if string(b) != `{"error":{"message":"bad","type":"invalid_request_error","param":"max_tokens","code":null}}` {
		t.Errorf("error body = %s", b)
	}
}

func BenchmarkAppendChatChunk(b *testing.B) {
	h := ChunkHeader{ID: "chatcmpl-0123456789", Created: 1700000000, Model: "meta-llama/Llama-3.1-8B-Instruct"}
	buf := make([]byte, 0, 512)
	for b.Loop() {
		buf = AppendChatChunk(buf[:0], h, "", " token", "", false)
	}
}

func BenchmarkChunkParser(b *testing.B) {
	data := AppendChatChunk(nil, ChunkHeader{ID: "chatcmpl-0123456789", Created: 1700000000, Model: "meta-llama/Llama-3.1-8B-Instruct"}, "", " token", "", true)
	var p ChunkParser
	var c StreamChunk
	for b.Loop() {
		_ = p.Parse(data, &c)
	}
}

func show(c StreamChunk) string {
	return fmt.Sprintf("object=%q type=%q text=%q reasoning=%q finish=%q(nil=%v) choices=%d usage=%v/%+v",
		c.Object, c.Type, c.Text, c.Reasoning, c.FinishReason, c.FinishReason == nil, c.Choices, c.HasUsage, c.Usage)
}

// Reasoning deltas, usage's reasoning_tokens and Anthropic Messages events parse into
// the same StreamChunk fields the load generator reads.
func TestChunkParserReasoningAndMessages(t *testing.T) {
	h := ChunkHeader{ID: "x", Created: 1, Model: "m"}
	var p ChunkParser
	var c StreamChunk
	b := AppendChatReasoningChunk(nil, h, "assistant", "let me \"think\"", false)
	var cc ChatChunk
	if err := json.Unmarshal(b, &cc); err != nil || cc.Choices[0].Delta.ReasoningContent != `let me "think"` || cc.Choices[0].Delta.Role != "assistant" {
		t.Errorf("reasoning chunk %s decoded to %+v, %v", b, cc, err)
	}
	if err := p.Parse(b, &c); err != nil || string(c.Reasoning) != `let me "think"` || len(c.Text) != 0 {
		t.Errorf("Parse(%s) reasoning = %q text = %q, %v", b, c.Reasoning, c.Text, err)
	}
	u := Usage{PromptTokens: 3, CompletionTokens: 9, TotalTokens: 12, CompletionTokensDetails: &CompletionTokensDetails{ReasoningTokens: 5}}
	b = AppendChatUsageChunk(nil, h, u)
	if err := p.Parse(b, &c); err != nil || !c.HasUsage || c.Usage.CompletionTokens != 9 || c.UsageReasoning != 5 {
		t.Errorf("Parse(%s) = %+v, %v; want completion 9, reasoning 5", b, c, err)
	}
	for _, tc := range []struct {
		data                     string
		text, reasoning, finish  string
		usage, prompt, completed int
	}{
		{data: `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}`, usage: 1, prompt: 25, completed: 1},
		{data: `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`, reasoning: "hmm"},
		{data: `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}`, text: "Hi"},
		{data: `{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":15}}`, finish: "max_tokens", usage: 1, completed: 15},
	} {
		if err := p.Parse([]byte(tc.data), &c); err != nil {
			t.Fatalf("Parse(%s): %v", tc.data, err)
		}
		if string(c.Text) != tc.text || string(c.Reasoning) != tc.reasoning || string(c.FinishReason) != tc.finish ||
			c.HasUsage != (tc.usage == 1) || c.Usage.PromptTokens != tc.prompt || c.Usage.CompletionTokens != tc.completed {
			t.Errorf("Parse(%s) = text %q reasoning %q finish %q usage %v %+v", tc.data, c.Text, c.Reasoning, c.FinishReason, c.HasUsage, c.Usage)
		}
	}
}

// BenchmarkChunkParserWhole parses a whole non-streaming chat answer (the load
// generator's bench server's ~200-byte body), as the client does for each answer.
func BenchmarkChunkParserWhole(b *testing.B) {
	body := []byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}`)
	var p ChunkParser
	var c StreamChunk
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := p.Parse(body, &c); err != nil || string(c.Text) != "hello hello" {
			b.Fatal(err)
		}
	}
}
