package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/tokenizer/internal/jinja"
)

// ErrNoChatTemplate is returned by [Tokenizer.ApplyChatTemplate] when the tokenizer has
// no chat template. Callers that want a rendering anyway use [RenderChatMLFallback].
var ErrNoChatTemplate = errors.New("tokenizer: no chat template (tokenizer_config.json has no chat_template and there is no chat_template.jinja)")

// Message is one chat message, as in an OpenAI chat-completions request. Templates see it
// as the dict Python code would pass to apply_chat_template: keys in the order role,
// content, name, tool_call_id, tool_calls, reasoning_content, and only the optional keys
// that are set.
//
// Content is the text. If Parts is non-nil, content is that list of parts instead (the
// OpenAI "array of content parts" form) and Content is ignored. JSON decoding accepts
// content as a string, an array of parts, or null ("").
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Parts, when non-nil, replaces Content with a list of typed parts.
	Parts []ContentPart `json:"-"`
	// Name is the optional participant name.
	Name string `json:"name,omitempty"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a role "tool" message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ReasoningContent is the reasoning ("thinking") text of an assistant message, which
	// templates such as Qwen3's and DeepSeek's render or drop.
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

// ContentPart is one element of a list-valued message content. Templates see
// {"type": "text", "text": ...} for text parts, {"type": "image_url", "image_url":
// {"url": ...}} for images, and {"type": T} for other types.
type ContentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"-"`
}

// ToolCall is a function call made by an assistant message, in the OpenAI wire shape.
type ToolCall struct {
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type"` // "function" when empty
	Function ToolFunction `json:"function"`
}

// ToolFunction is the called function. Arguments is the JSON text of the arguments, as
// OpenAI sends it; templates see it decoded to a dict when it is a JSON object (as vLLM
// passes it to templates), else as the string.
type ToolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// UnmarshalJSON accepts content as a string, null, or an array of content parts.
func (m *Message) UnmarshalJSON(data []byte) error {
	type plain Message
	var raw struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("tokenizer: message: %w", err)
	}
	*m = Message(raw.plain)
	c := strings.TrimSpace(string(raw.Content))
	switch {
	case c == "" || c == "null":
	case c[0] == '"':
		if err := json.Unmarshal(raw.Content, &m.Content); err != nil {
			return fmt.Errorf("tokenizer: message content: %w", err)
		}
	case c[0] == '[':
		var parts []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL *struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if err := json.Unmarshal(raw.Content, &parts); err != nil {
			return fmt.Errorf("tokenizer: message content: %w", err)
		}
		m.Parts = make([]ContentPart, len(parts))
		for i, p := range parts {
			m.Parts[i] = ContentPart{Type: p.Type, Text: p.Text}
			if p.ImageURL != nil {
				m.Parts[i].ImageURL = p.ImageURL.URL
			}
		}
	default:
		return fmt.Errorf("tokenizer: message content must be a string, an array or null, got %.20s", c)
	}
	return nil
}

// MarshalJSON writes content as a string, or as the parts array when Parts is set.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	var content any = m.Content
	if m.Parts != nil {
		parts := make([]map[string]any, len(m.Parts))
		for i, p := range m.Parts {
			parts[i] = map[string]any{"type": p.Type}
			if p.Text != "" || p.Type == "text" {
				parts[i]["text"] = p.Text
			}
			if p.ImageURL != "" {
				parts[i]["image_url"] = map[string]any{"url": p.ImageURL}
			}
		}
		content = parts
	}
	return json.Marshal(struct {
		plain
		Content any `json:"content"`
	}{plain(m), content})
}

// UnmarshalJSON accepts arguments as a JSON string (OpenAI) or as an object, which is
// kept as its JSON text.
func (f *ToolFunction) UnmarshalJSON(data []byte) error {
	var raw struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("tokenizer: tool call function: %w", err)
	}
	f.Name = raw.Name
	a := strings.TrimSpace(string(raw.Arguments))
	switch {
	case a == "" || a == "null":
		f.Arguments = ""
	case a[0] == '"':
		return json.Unmarshal(raw.Arguments, &f.Arguments)
	default:
		f.Arguments = a
	}
	return nil
}

// ChatOptions controls [Tokenizer.ApplyChatTemplate]. The zero value renders the messages
// with no generation prompt, no tools and the current time for strftime_now.
type ChatOptions struct {
	// AddGenerationPrompt appends the template's assistant header (add_generation_prompt).
	AddGenerationPrompt bool
	// ContinueFinalMessage renders the last message open-ended so generation continues
	// it, as transformers' continue_final_message. It excludes AddGenerationPrompt.
	ContinueFinalMessage bool
	// Tools are the tool (function) schemas, passed to the template as "tools". Go maps
	// have no key order, so their keys appear sorted in tojson output; to keep the order of
	// a request, set ToolsJSON instead. nil Tools and ToolsJSON: the template sees
	// tools=None, as transformers passes.
	Tools []map[string]any
	// ToolsJSON is a JSON array of tool schemas; object key order is kept. It wins over Tools.
	ToolsJSON json.RawMessage
	// Documents are the retrieval documents (RAG templates), like Tools.
	Documents []map[string]any
	// DocumentsJSON is a JSON array of documents; it wins over Documents.
	DocumentsJSON json.RawMessage
	// Kwargs are extra template variables (transformers' **kwargs), e.g.
	// {"enable_thinking": false}. Values are converted as Tools are; json.RawMessage
	// values keep their order.
	Kwargs map[string]any
	// Template selects a named template ("default", "tool_use", …) or, if no template
	// has that name, is itself the template source. Empty: "tool_use" when tools are
	// given and the tokenizer has it, else "default", as transformers picks.
	Template string
	// Now is the clock of strftime_now; nil means time.Now. Set it for stable renders.
	Now func() time.Time
}

// chatConfig is what a tokenizer directory says about chat: the template(s) and the
// special-token strings the template may use.
type chatConfig struct {
	templates map[string]*chatTemplate // "default" for a single template
	names     []string                 // template names in file order
	special   []specialVar             // bos_token, eos_token, … in config order
	addBOS    *bool                    // add_bos_token, if set
	addEOS    *bool                    // add_eos_token, if set
	genEOSIDs []int                    // generation_config.json eos_token_id
}

type specialVar struct {
	name  string
	value any // string, or []any of strings for additional_special_tokens
}

// chatTemplate is one template source, compiled on first use.
type chatTemplate struct {
	src  string
	once sync.Once
	tpl  *jinja.Template
	err  error
}

func (c *chatTemplate) compiled() (*jinja.Template, error) {
	c.once.Do(func() { c.tpl, c.err = jinja.Parse(c.src) })
	return c.tpl, c.err
}

// HasChatTemplate reports whether the tokenizer came with a chat template.
func (t *Tokenizer) HasChatTemplate() bool { return t.chat != nil && len(t.chat.templates) > 0 }

// ChatTemplate returns the source of the named template ("" = the default one) and
// whether it exists.
func (t *Tokenizer) ChatTemplate(name string) (string, bool) {
	if t.chat == nil {
		return "", false
	}
	if name == "" {
		name = "default"
	}
	c, ok := t.chat.templates[name]
	if !ok {
		return "", false
	}
	return c.src, true
}

// ApplyChatTemplate renders msgs with the model's chat template exactly as transformers'
// apply_chat_template(msgs, tokenize=False, ...) does with jinja2. The result already
// contains the BOS token if the template writes it; count it with [Tokenizer.CountChat]
// (or Encode(text, false)), not with addSpecial=true.
//
// Errors: [ErrNoChatTemplate]; a template syntax error (with line and column); a template
// that raises (raise_exception) — the error text then ends with the template's message;
// render errors such as an unknown filter. It is safe for concurrent use.
func (t *Tokenizer) ApplyChatTemplate(msgs []Message, opts ChatOptions) (string, error) {
	return t.chat.apply(messagesValue(msgs), opts)
}

// ApplyChatTemplateJSON is ApplyChatTemplate for messages given as the JSON array of an
// OpenAI request's "messages": the template sees each message object exactly as sent,
// with its key order and any extra fields.
func (t *Tokenizer) ApplyChatTemplateJSON(messages json.RawMessage, opts ChatOptions) (string, error) {
	v, err := jinja.ParseJSON(messages)
	if err != nil {
		return "", fmt.Errorf("tokenizer: chat messages: %w", err)
	}
	if _, ok := v.([]any); !ok {
		return "", errors.New("tokenizer: chat messages must be a JSON array")
	}
	return t.chat.apply(v.([]any), opts)
}

// CountChat returns the number of tokens of the rendered conversation, as
// len(apply_chat_template(msgs, tokenize=True)): the rendering encoded without adding
// special tokens, since the template writes them itself.
func (t *Tokenizer) CountChat(msgs []Message, opts ChatOptions) (int, error) {
	s, err := t.ApplyChatTemplate(msgs, opts)
	if err != nil {
		return 0, err
	}
	return t.Count(s, false), nil
}

// ChatInput is the text a chat-serving server counts as a conversation's input: msgs
// rendered with the model's chat template or, for a tokenizer without one, with
// [RenderChatMLFallback] (as vLLM falls back). fallback reports the latter. Its tokens
// are Encode(text, false), since the rendering writes the special tokens itself;
// [Tokenizer.CountChatInput] counts them. The mock server and the load generator both
// count a chat request's input through this function, so the two counts behind a
// tokenizer-match check cannot drift apart.
func (t *Tokenizer) ChatInput(msgs []Message, opts ChatOptions) (text string, fallback bool, err error) {
	if !t.HasChatTemplate() {
		return RenderChatMLFallback(msgs, opts.AddGenerationPrompt), true, nil
	}
	text, err = t.ApplyChatTemplate(msgs, opts)
	return text, false, err
}

// CountChatInput returns the number of tokens of [Tokenizer.ChatInput]'s text and
// whether that text is the ChatML fallback. Unlike [Tokenizer.CountChat] it never
// returns [ErrNoChatTemplate].
func (t *Tokenizer) CountChatInput(msgs []Message, opts ChatOptions) (n int, fallback bool, err error) {
	text, fallback, err := t.ChatInput(msgs, opts)
	if err != nil {
		return 0, false, err
	}
	return t.Count(text, false), fallback, nil
}

func (c *chatConfig) pick(opts ChatOptions, hasTools bool) (*chatTemplate, error) {
	if c == nil || len(c.templates) == 0 {
		return nil, ErrNoChatTemplate
	}
	if opts.Template != "" {
		if tpl, ok := c.templates[opts.Template]; ok {
			return tpl, nil
		}
		return &chatTemplate{src: opts.Template}, nil
	}
	if hasTools {
		if tpl, ok := c.templates["tool_use"]; ok {
			return tpl, nil
		}
	}
	if tpl, ok := c.templates["default"]; ok {
		return tpl, nil
	}
	return nil, fmt.Errorf("tokenizer: the model has several chat templates (%s) and none is named \"default\"; set ChatOptions.Template", strings.Join(c.names, ", "))
}

// apply renders messages (already template values).
func (c *chatConfig) apply(messages []any, opts ChatOptions) (string, error) {
	if opts.ContinueFinalMessage && opts.AddGenerationPrompt {
		return "", errors.New("tokenizer: continue_final_message and add_generation_prompt are not compatible")
	}
	vars, err := c.vars(messages, opts)
	if err != nil {
		return "", err
	}
	tpl, err := c.pick(opts, vars["tools"] != nil)
	if err != nil {
		return "", err
	}
	compiled, err := tpl.compiled()
	if err != nil {
		return "", fmt.Errorf("tokenizer: chat template: %w", err)
	}
	out, err := compiled.Render(vars, jinja.Limits{})
	if err != nil {
		var re *jinja.RaiseError
		if errors.As(err, &re) {
			return "", fmt.Errorf("tokenizer: chat template raised: %s", re.Msg)
		}
		return "", fmt.Errorf("tokenizer: chat template: %w", err)
	}
	if opts.ContinueFinalMessage {
		return continueFinal(out, messages)
	}
	return out, nil
}

// vars builds the template context as transformers' render_jinja_template does.
func (c *chatConfig) vars(messages []any, opts ChatOptions) (map[string]any, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	vars := make(map[string]any, 12+len(opts.Kwargs))
	vars["raise_exception"] = jinja.Func(raiseException)
	vars["strftime_now"] = jinja.Func(func(args []any, _ *jinja.Dict) (any, error) {
		if len(args) != 1 {
			return nil, errors.New("strftime_now() takes exactly one argument")
		}
		f, ok := args[0].(string)
		if !ok {
			return nil, errors.New("strftime_now() argument must be str")
		}
		return strftime(now(), f), nil
	})
	if c != nil {
		for _, s := range c.special {
			vars[s.name] = s.value
		}
	}
	for k, v := range opts.Kwargs {
		jv, err := jinja.FromGo(v)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: chat kwarg %q: %w", k, err)
		}
		vars[k] = jv
	}
	tools, err := listValue("tools", opts.Tools, opts.ToolsJSON)
	if err != nil {
		return nil, err
	}
	docs, err := listValue("documents", opts.Documents, opts.DocumentsJSON)
	if err != nil {
		return nil, err
	}
	vars["messages"] = messages
	vars["tools"] = tools
	vars["documents"] = docs
	vars["add_generation_prompt"] = opts.AddGenerationPrompt
	return vars, nil
}

func raiseException(args []any, _ *jinja.Dict) (any, error) {
	msg := ""
	if len(args) > 0 {
		if s, ok := args[0].(string); ok {
			msg = s
		} else {
			out, _ := jinja.ToJSON(args[0], jinja.JSONOptions{})
			msg = out
		}
	}
	return nil, &jinja.RaiseError{Msg: msg}
}

// listValue converts tools/documents to a template value: nil (None) when absent.
func listValue(what string, maps []map[string]any, raw json.RawMessage) (any, error) {
	if raw != nil {
		v, err := jinja.ParseJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: chat %s: %w", what, err)
		}
		if v == nil {
			return nil, nil
		}
		if _, ok := v.([]any); !ok {
			return nil, fmt.Errorf("tokenizer: chat %s must be a JSON array", what)
		}
		return v, nil
	}
	if maps == nil {
		return nil, nil
	}
	out := make([]any, len(maps))
	for i, m := range maps {
		v, err := jinja.FromGo(m)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: chat %s[%d]: %w", what, i, err)
		}
		out[i] = v
	}
	return out, nil
}

// messagesValue converts messages to the dicts a template sees.
func messagesValue(msgs []Message) []any {
	out := make([]any, len(msgs))
	dicts := jinja.NewDicts(len(msgs), 2)
	for i := range msgs {
		out[i] = msgs[i].value(&dicts[i])
	}
	return out
}

// value fills d (empty) with the message's template dict.
func (m *Message) value(d *jinja.Dict) *jinja.Dict {
	d.Set("role", m.Role)
	if m.Parts != nil {
		parts := make([]any, len(m.Parts))
		for i, p := range m.Parts {
			pd := jinja.NewDict(2)
			pd.Set("type", p.Type)
			switch {
			case p.Type == "text" || p.Text != "":
				pd.Set("text", p.Text)
			case p.Type == "image_url":
				u := jinja.NewDict(1)
				u.Set("url", p.ImageURL)
				pd.Set("image_url", u)
			}
			parts[i] = pd
		}
		d.Set("content", parts)
	} else {
		d.Set("content", m.Content)
	}
	if m.Name != "" {
		d.Set("name", m.Name)
	}
	if m.ToolCallID != "" {
		d.Set("tool_call_id", m.ToolCallID)
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]any, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			cd := jinja.NewDict(3)
			if tc.ID != "" {
				cd.Set("id", tc.ID)
			}
			typ := tc.Type
			if typ == "" {
				typ = "function"
			}
			cd.Set("type", typ)
			fd := jinja.NewDict(2)
			fd.Set("name", tc.Function.Name)
			var args any = tc.Function.Arguments
			if a := strings.TrimSpace(tc.Function.Arguments); strings.HasPrefix(a, "{") {
				if v, err := jinja.ParseJSON([]byte(a)); err == nil {
					args = v
				}
			}
			fd.Set("arguments", args)
			cd.Set("function", fd)
			calls[i] = cd
		}
		d.Set("tool_calls", calls)
	}
	if m.ReasoningContent != "" {
		d.Set("reasoning_content", m.ReasoningContent)
	}
	return d
}

// continueFinal cuts the rendering after the final message's content, as transformers
// does for continue_final_message.
func continueFinal(rendered string, messages []any) (string, error) {
	if len(messages) == 0 {
		return "", errors.New("tokenizer: continue_final_message needs at least one message")
	}
	last, _ := messages[len(messages)-1].(*jinja.Dict)
	content, _ := last.Get("content")
	final := ""
	switch x := content.(type) {
	case string:
		final = x
	case []any:
		found := false
		for i := len(x) - 1; i >= 0; i-- {
			if p, ok := x[i].(*jinja.Dict); ok {
				if t, ok := p.Get("text"); ok {
					final, _ = t.(string)
					found = true
					break
				}
			}
		}
		if !found {
			return "", errors.New("tokenizer: continue_final_message is set but we could not find any text to continue in the final message")
		}
	}
	stripped := strings.TrimFunc(final, isPySpace)
	loc := strings.LastIndex(rendered, stripped)
	if loc < 0 {
		return "", errors.New("tokenizer: continue_final_message is set but the final message does not appear in the chat after applying the chat template")
	}
	lstripped := strings.TrimLeftFunc(final, isPySpace)
	if end := loc + len(lstripped); end <= len(rendered) && rendered[loc:end] == final {
		return rendered[:end], nil
	}
	return rendered[:loc+len(stripped)], nil
}

func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// RenderChatMLFallback renders msgs in ChatML, the format vLLM and many servers fall back
// to for models without a template:
//
//	<|im_start|>{role}\n{content}<|im_end|>\n   (per message)
//	<|im_start|>assistant\n                      (if addGenerationPrompt)
//
// List content is the concatenation of its text parts.
//
// Overhead over the bare contents (measured, pinned by a test): with Qwen3, whose
// <|im_start|> and <|im_end|> are special tokens, 5 tokens per message (markers, role,
// two newlines) and 3 for the generation prompt. Tokenizers without those special tokens
// split the markers into ordinary tokens: Llama-3.1 13 per message and 8 for the prompt,
// gpt2 about 16-17 per message and 10. Count the rendering with the tokenizer at hand.
func RenderChatMLFallback(msgs []Message, addGenerationPrompt bool) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>")
		b.WriteString(m.Role)
		b.WriteByte('\n')
		if m.Parts != nil {
			for _, p := range m.Parts {
				b.WriteString(p.Text)
			}
		} else {
			b.WriteString(m.Content)
		}
		b.WriteString("<|im_end|>\n")
	}
	if addGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String()
}
