package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/perfgate/perfgate/loadgen/dataset"
)

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
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

// bodyBuilder renders request bodies for one run.
type bodyBuilder struct {
	cfg   *Config
	extra []byte // marshalled ExtraBody, "{...}" or nil
}

func newBodyBuilder(cfg *Config) (*bodyBuilder, error) {
	b := &bodyBuilder{cfg: cfg}
	if len(cfg.ExtraBody) > 0 {
		x, err := json.Marshal(cfg.ExtraBody)
		if err != nil {
			return nil, fmt.Errorf("loadgen: extra_body: %w", err)
		}
		b.extra = x
	}
	return b, nil
}

// turnCtx is what a body needs besides the turn: the conversation so far.
type turnCtx struct {
	history []message // previous user/assistant messages
	system  string
}

// build renders t for endpoint e. It returns the body and whether it streams.
func (b *bodyBuilder) build(e Endpoint, t *dataset.Turn, tc *turnCtx, stream bool) []byte {
	if t.Body != nil {
		return t.Body
	}
	cfg := b.cfg
	w := wireBody{Model: cfg.Model}
	if t.Model != "" {
		w.Model = t.Model
	}
	if w.Model == "" {
		w.Model = DefaultModel
	}
	gen := e.generates()
	if gen && stream {
		w.Stream = true
		if !cfg.NoUsage && e != EndpointResponses && e != EndpointMessages {
			w.StreamOptions = &streamOptions{IncludeUsage: true}
		}
	}
	switch e {
	case EndpointChat:
		if tc.system != "" {
			w.Messages = append(w.Messages, message{Role: "system", Content: tc.system})
		}
		w.Messages = append(w.Messages, tc.history...)
		w.Messages = append(w.Messages, message{Role: "user", Content: t.Prompt})
	case EndpointMessages:
		w.System = tc.system
		w.Messages = append(w.Messages, tc.history...)
		w.Messages = append(w.Messages, message{Role: "user", Content: t.Prompt})
		if t.OSL <= 0 {
			n := DefaultMessagesMaxTokens // required by the API
			w.MaxTokens = &n
		}
	case EndpointResponses:
		if len(tc.history) == 0 && tc.system == "" {
			w.Input = t.Prompt
		} else {
			var msgs []message
			if tc.system != "" {
				msgs = append(msgs, message{Role: "system", Content: tc.system})
			}
			msgs = append(msgs, tc.history...)
			w.Input = append(msgs, message{Role: "user", Content: t.Prompt})
		}
	case EndpointCompletions:
		p := t.Prompt
		if len(tc.history) > 0 || tc.system != "" {
			var sb bytes.Buffer
			if tc.system != "" {
				sb.WriteString(tc.system)
				sb.WriteString("\n")
			}
			for _, m := range tc.history {
				sb.WriteString(m.Content)
				sb.WriteString("\n")
			}
			sb.WriteString(p)
			p = sb.String()
		}
		w.Prompt = &p
	case EndpointEmbeddings:
		w.Input = t.Prompt
	case EndpointRankings:
		w.Query = textField{Text: t.Prompt}
		for _, d := range t.Docs {
			w.Passages = append(w.Passages, textField{Text: d})
		}
	case EndpointRerank:
		w.Query = t.Prompt
		w.Documents = append(w.Documents, t.Docs...)
	}
	if gen && t.OSL > 0 {
		osl := t.OSL
		field := cfg.OSLField
		if t.MaxTokensField != "" {
			field = t.MaxTokensField
		}
		switch {
		case e == EndpointResponses && field != OSLNone:
			w.MaxOutputTokens = &osl
		case e == EndpointMessages:
			w.MaxTokens = &osl // Anthropic's only output cap, required
		case field == OSLMaxTokens || (field == "" && e == EndpointCompletions):
			w.MaxTokens = &osl
		case field == OSLNone:
		default:
			w.MaxCompletionTokens = &osl
		}
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
	out, _ := json.Marshal(&w) // cannot fail: only strings, ints, bools and slices of them
	return spliceExtra(out, b.extra)
}

// spliceExtra appends the fields of the JSON object extra to the JSON object body;
// later keys win in every common JSON parser, so extra fields override generated ones.
func spliceExtra(body, extra []byte) []byte {
	if len(extra) <= 2 {
		return body
	}
	out := make([]byte, 0, len(body)+len(extra))
	out = append(out, body[:len(body)-1]...)
	out = append(out, ',')
	return append(out, extra[1:]...)
}
