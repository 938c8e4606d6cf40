package loadgen

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/loadgen/dataset"
)

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls and ToolCallID carry tool calls back (Workload.ToolResults): an
	// assistant message's calls, a tool message's call.
	ToolCalls  []openai.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
}

type textField struct {
	Text string `json:"text"`
}

// wireBody is every generated request body; omitempty leaves out what an endpoint
// does not use.
type wireBody struct {
	Model               string          `json:"model"`
	System              string          `json:"system,omitempty"` // Anthropic messages: the system prompt
	Messages            []message       `json:"messages,omitempty"`
	Prompt              *string         `json:"prompt,omitempty"`
	Input               any             `json:"input,omitempty"`
	Query               any             `json:"query,omitempty"`
	Passages            []textField     `json:"passages,omitempty"`
	Documents           []string        `json:"documents,omitempty"`
	Tools               json.RawMessage `json:"tools,omitempty"`
	ToolChoice          any             `json:"tool_choice,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
	MaxTokens           *int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"`
	MaxOutputTokens     *int            `json:"max_output_tokens,omitempty"`
	MinTokens           *int            `json:"min_tokens,omitempty"`
	IgnoreEOS           *bool           `json:"ignore_eos,omitempty"`
	Extra               json.RawMessage `json:"-"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// includeUsage is every streamed body's stream_options (read only).
var includeUsage = streamOptions{IncludeUsage: true}

// bodyBuilder renders request bodies for one run.
type bodyBuilder struct {
	cfg      *Config
	extra    []byte       // marshalled ExtraBody, "{...}" or nil
	tools    *toolSet     // the chat requests' tools; nil = none
	media    *mediaDrawer // nil without media
	formKeys []string     // ExtraBody's keys sorted, less a form kind's own fields
}

func newBodyBuilder(cfg *Config) (*bodyBuilder, error) {
	b := &bodyBuilder{cfg: cfg}
	if len(cfg.ExtraBody) > 0 {
		x, err := json.Marshal(cfg.ExtraBody)
		if err != nil {
			return nil, fmt.Errorf("loadgen: extra_body: %w", err)
		}
		b.extra = x
		b.formKeys = formKeys(cfg.ExtraBody)
	}
	var err error
	b.tools, err = newToolSet(&cfg.Workload)
	return b, err
}

// turnCtx is what a body needs besides the turn: the conversation so far.
type turnCtx struct {
	history []message // previous user/assistant messages
	system  string
	// toolChoice is the request's tool_choice (nil: no tools); toolReply, the ids
	// of the calls whose results the turn's prompt answers (Workload.ToolResults).
	toolChoice any
	toolReply  []string
	media      []mediaPart // this turn's images and clips (chat), drawn by mediaDrawer
}

// build renders t for the API kind a: a payload as it is, otherwise the kind's
// body. It returns the body and its Content-Type ("" = application/json).
func (b *bodyBuilder) build(a adapter, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	if t.Body != nil {
		return t.Body, ""
	}
	return a.body(b, t, tc, stream)
}

// json renders a JSON body for the kind k: the fields every kind shares (model;
// for kinds that generate, stream and stream_options, the output cap and vLLM's
// min_tokens and ignore_eos) around k's own, then Config.ExtraBody's fields.
func (b *bodyBuilder) json(k jsonAPI, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	cfg := b.cfg
	keep := t.Memo != nil && plainChat(k, t, tc)
	var m *turnMemo
	if keep {
		m = loadMemo(t)
		if m != nil && m.body != nil && m.bb == b && m.stream == stream && m.osl == t.OSL {
			return m.body, ""
		}
	}
	w := wirePool.Get().(*wireBody)
	defer putWire(w)
	w.Model = b.model(t)
	gen := k.generates()
	if gen && stream {
		w.Stream = true
		if !cfg.NoUsage && k.streamUsage() {
			w.StreamOptions = &includeUsage
		}
	}
	k.fill(w, t, tc)
	if tc.toolChoice != nil {
		w.Tools, w.ToolChoice = b.tools.raw, tc.toolChoice
	}
	if gen && t.OSL > 0 {
		osl := t.OSL
		field := cfg.OSLField
		if t.MaxTokensField != "" {
			field = t.MaxTokensField
		}
		k.capOutput(w, field, &osl)
		if cfg.MinTokens {
			w.MinTokens = &osl
		}
		if cfg.IgnoreEOS {
			yes := true
			w.IgnoreEOS = &yes
		}
	}
	if t.MinTokens != nil {
		w.MinTokens = t.MinTokens
	}
	if t.IgnoreEOS != nil {
		w.IgnoreEOS = t.IgnoreEOS
	}
	size := 160 + len(t.Prompt) + len(tc.system) + len(b.extra)
	for _, m := range tc.history {
		size += 32 + len(m.Content)
	}
	out := appendWireBody(make([]byte, 0, size), w)
	if len(tc.media) > 0 && b.media != nil {
		out = spliceMedia(out, b.media, t.Prompt, tc.media)
	}
	out = spliceExtra(out, b.extra)
	if keep {
		nm := nextMemo(t, m) // keeps its template count
		nm.bb, nm.stream, nm.osl, nm.body = b, stream, t.OSL, slices.Clip(out)
		nm.fp, nm.hasDigest = nil, false // the digest was the old body's
		t.Memo.Store(nm)
	}
	return out, ""
}

// plainChat reports whether a chat body for t depends only on its prompt, the run's
// configuration, streaming and t.OSL, so it can be kept in t.Memo: a single-turn chat
// request with no system prompt, tools, media or per-turn overrides.
func plainChat(k jsonAPI, t *dataset.Turn, tc *turnCtx) bool {
	if _, chat := k.(chatAPI); !chat {
		return false
	}
	return len(tc.history) == 0 && tc.system == "" && tc.toolChoice == nil && len(tc.toolReply) == 0 && len(tc.media) == 0 &&
		t.Body == nil && len(t.Docs) == 0 && len(t.Images) == 0 && t.Model == "" && t.MaxTokensField == "" &&
		t.MinTokens == nil && t.IgnoreEOS == nil
}

// wirePool holds the wireBody values json fills (one per request was an allocation,
// and its message list another); putWire empties one for the next request.
var wirePool = sync.Pool{New: func() any { return new(wireBody) }}

func putWire(w *wireBody) {
	clear(w.Messages) // drop the texts
	*w = wireBody{Messages: w.Messages[:0]}
	wirePool.Put(w)
}

// model is the model t asks for: the turn's, the run's, or DefaultModel.
func (b *bodyBuilder) model(t *dataset.Turn) string {
	switch {
	case t.Model != "":
		return t.Model
	case b.cfg.Model != "":
		return b.cfg.Model
	}
	return DefaultModel
}

// spliceExtra appends the fields of the JSON object extra to the JSON object body;
// later keys win in every common JSON parser, so extra fields override generated ones.
// It appends in place: body is not used after.
func spliceExtra(body, extra []byte) []byte {
	if len(extra) <= 2 {
		return body
	}
	return append(append(body[:len(body)-1], ','), extra[1:]...)
}
