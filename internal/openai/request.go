package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ChatRequest is a POST /v1/chat/completions body.
type ChatRequest struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Stream   bool      `json:"stream,omitempty"`
	// StreamOptions.IncludeUsage asks for a final chunk carrying usage.
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	// MaxTokens is the legacy output cap; MaxCompletionTokens, when set, wins.
	MaxTokens           *int `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int `json:"max_completion_tokens,omitempty"`
	// MinTokens and IgnoreEOS are vLLM/SGLang/TRT-LLM extensions benchmarks send to
	// pin the output length.
	MinTokens       *int            `json:"min_tokens,omitempty"`
	IgnoreEOS       *bool           `json:"ignore_eos,omitempty"`
	Stop            Strings         `json:"stop,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	TopP            *float64        `json:"top_p,omitempty"`
	N               *int            `json:"n,omitempty"`
	Seed            *int64          `json:"seed,omitempty"`
	User            string          `json:"user,omitempty"`
	ReasoningEffort *string         `json:"reasoning_effort,omitempty"`
	Tools           json.RawMessage `json:"tools,omitempty"`
	// ToolChoice is "none", "auto", "required" or {"type":"function","function":{"name":…}}.
	ToolChoice json.RawMessage `json:"tool_choice,omitempty"`
	// PromptTokenIDs is a pre-tokenized prompt (TRT-LLM/Dynamo extension); when
	// present it is the input, counted directly.
	PromptTokenIDs []int `json:"prompt_token_ids,omitempty"`
	// AddGenerationPrompt (vLLM extension) defaults to true when absent.
	AddGenerationPrompt *bool `json:"add_generation_prompt,omitempty"`
}

// StreamOptions is the "stream_options" object.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one chat message.
type Message struct {
	Role       string          `json:"role"`
	Content    Content         `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// Content is a message's content: a plain string, null, or a list of parts
// ([{"type":"text","text":"…"}, {"type":"image_url",…}]), as multimodal clients and
// `vllm bench serve --backend openai-chat` send it.
type Content struct {
	// Text is the string content, or the text parts concatenated, with each non-text
	// part replaced by a placeholder (see [Placeholder]).
	Text string
	// Parts is the list form as received; nil for string or null content.
	Parts []ContentPart
	// NonText counts the parts that were not text (images, audio, video, files).
	NonText int
	// Null reports that the content was JSON null or absent.
	Null bool
}

// ContentPart is one element of list-form content: text, an image (image_url) or an
// audio clip (input_audio); the payload of other kinds (video, files) is skipped.
type ContentPart struct {
	Type       string      `json:"type"`
	Text       string      `json:"text,omitempty"`
	ImageURL   *ImageURL   `json:"image_url,omitempty"`
	InputAudio *InputAudio `json:"input_audio,omitempty"`
}

// ImageURL is an image_url part's payload: an http(s) URL or a base64 data URI.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// UnmarshalJSON accepts the object form and, as vLLM does, a bare URL string.
func (u *ImageURL) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*u = ImageURL{}
		return json.Unmarshal(b, &u.URL)
	}
	type plain ImageURL
	return json.Unmarshal(b, (*plain)(u))
}

// InputAudio is an input_audio part's payload: base64 audio and its format
// ("wav", "mp3").
type InputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

// Placeholder returns the text a non-text part of the given type stands for when
// content is normalised: "<image>", "<audio>", "<video>" or "<file>" (the spellings of
// AIPerf's recorder, so ISLs agree).
func Placeholder(partType string) string {
	switch {
	case bytes.Contains([]byte(partType), []byte("image")):
		return "<image>"
	case bytes.Contains([]byte(partType), []byte("audio")):
		return "<audio>"
	case bytes.Contains([]byte(partType), []byte("video")):
		return "<video>"
	default:
		return "<file>"
	}
}

// UnmarshalJSON accepts a string, null, or a list of parts.
func (c *Content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*c = Content{}
	switch {
	case len(b) == 0 || string(b) == "null":
		c.Null = true
		return nil
	case b[0] == '"':
		return json.Unmarshal(b, &c.Text)
	case b[0] == '[':
		if err := json.Unmarshal(b, &c.Parts); err != nil {
			return err
		}
		if c.Parts == nil {
			c.Parts = []ContentPart{}
		}
		var sb []byte
		for _, p := range c.Parts {
			switch p.Type {
			case "text", "input_text", "output_text":
				sb = append(sb, p.Text...)
			default:
				c.NonText++
				sb = append(sb, Placeholder(p.Type)...)
			}
		}
		c.Text = string(sb)
		return nil
	}
	return &json.UnmarshalTypeError{Value: jsonKind(b), Type: contentType, Field: ""}
}

var contentType = reflectTypeOf[Content]()

// MarshalJSON writes the list form when Parts is set, else the string (null when Null).
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return json.Marshal(c.Parts)
	}
	if c.Null {
		return []byte("null"), nil
	}
	return json.Marshal(c.Text)
}

// Strings is a JSON value that is either one string or a list of strings ("stop",
// embeddings "input" as text).
type Strings []string

// UnmarshalJSON accepts a string, a list of strings, or null.
func (s *Strings) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*s = nil
		return nil
	case len(b) > 0 && b[0] == '"':
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// Prompt is a completions "prompt" or embeddings "input": a string, a list of strings,
// a list of token ids, or a list of lists of token ids. Exactly one of Texts and IDs is
// set after decoding.
type Prompt struct {
	Texts []string
	IDs   [][]int
}

// IsTokens reports whether the prompt was given as token ids.
func (p Prompt) IsTokens() bool { return p.IDs != nil }

// Empty reports whether the prompt holds nothing at all.
func (p Prompt) Empty() bool { return p.Texts == nil && p.IDs == nil }

// UnmarshalJSON accepts every prompt shape the OpenAI API allows.
func (p *Prompt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*p = Prompt{}
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		p.Texts = []string{s}
		return nil
	case '[':
	default:
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: promptType}
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if len(raw) == 0 {
		p.Texts = []string{}
		return nil
	}
	first := bytes.TrimSpace(raw[0])
	switch {
	case len(first) > 0 && first[0] == '"':
		var ss []string
		if err := json.Unmarshal(b, &ss); err != nil {
			return err
		}
		p.Texts = ss
	case len(first) > 0 && first[0] == '[':
		var ids [][]int
		if err := json.Unmarshal(b, &ids); err != nil {
			return err
		}
		p.IDs = ids
	default:
		var ids []int
		if err := json.Unmarshal(b, &ids); err != nil {
			return err
		}
		p.IDs = [][]int{ids}
	}
	return nil
}

var promptType = reflectTypeOf[Prompt]()

// MarshalJSON writes a single string or id list unwrapped, lists otherwise.
func (p Prompt) MarshalJSON() ([]byte, error) {
	switch {
	case len(p.IDs) == 1:
		return json.Marshal(p.IDs[0])
	case p.IDs != nil:
		return json.Marshal(p.IDs)
	case len(p.Texts) == 1:
		return json.Marshal(p.Texts[0])
	case p.Texts == nil:
		return []byte("null"), nil
	}
	return json.Marshal(p.Texts)
}

// CompletionRequest is a POST /v1/completions body.
type CompletionRequest struct {
	Model         string         `json:"model"`
	Prompt        Prompt         `json:"prompt"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	MaxTokens     *int           `json:"max_tokens,omitempty"`
	MinTokens     *int           `json:"min_tokens,omitempty"`
	IgnoreEOS     *bool          `json:"ignore_eos,omitempty"`
	Stop          Strings        `json:"stop,omitempty"`
	Echo          bool           `json:"echo,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	N             *int           `json:"n,omitempty"`
	Seed          *int64         `json:"seed,omitempty"`
	// MaxCompletionTokens is not part of the completions API but some clients send it;
	// it is honoured like on chat.
	MaxCompletionTokens *int `json:"max_completion_tokens,omitempty"`
}

// ResponsesRequest is a POST /v1/responses body. Input is a string or a list of input
// items (messages with role and content).
type ResponsesRequest struct {
	Model           string        `json:"model"`
	Input           ResponseInput `json:"input"`
	Instructions    string        `json:"instructions,omitempty"`
	Stream          bool          `json:"stream,omitempty"`
	MaxOutputTokens *int          `json:"max_output_tokens,omitempty"`
	MinTokens       *int          `json:"min_tokens,omitempty"`
	IgnoreEOS       *bool         `json:"ignore_eos,omitempty"`
	Temperature     *float64      `json:"temperature,omitempty"`
	TopP            *float64      `json:"top_p,omitempty"`
	Reasoning       *struct {
		Effort *string `json:"effort,omitempty"`
	} `json:"reasoning,omitempty"`
}

// ResponseInput is the Responses API "input": a string, or a list of messages.
type ResponseInput struct {
	Text     string
	Messages []Message
	IsList   bool
}

// UnmarshalJSON accepts a string or a list of message items.
func (in *ResponseInput) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*in = ResponseInput{}
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '"':
		return json.Unmarshal(b, &in.Text)
	case b[0] == '[':
		in.IsList = true
		return json.Unmarshal(b, &in.Messages)
	}
	return &json.UnmarshalTypeError{Value: jsonKind(b), Type: responseInputType}
}

// MarshalJSON writes the list form when IsList, else the string.
func (in ResponseInput) MarshalJSON() ([]byte, error) {
	if in.IsList {
		return json.Marshal(in.Messages)
	}
	return json.Marshal(in.Text)
}

var responseInputType = reflectTypeOf[ResponseInput]()

// EmbeddingRequest is a POST /v1/embeddings body.
type EmbeddingRequest struct {
	Model          string `json:"model"`
	Input          Prompt `json:"input"`
	EncodingFormat string `json:"encoding_format,omitempty"`
	Dimensions     *int   `json:"dimensions,omitempty"`
	User           string `json:"user,omitempty"`
}

// RankingRequest is a rankings body in either common shape: NVIDIA NIM's /v1/ranking(s)
// ({"query":{"text":…},"passages":[{"text":…}]}) or the Cohere/vLLM/TEI /v1/rerank
// ({"query":"…","documents":["…"] or [{"text":…}]}, "texts" for TEI).
type RankingRequest struct {
	Model     string      `json:"model"`
	Query     TextField   `json:"query"`
	Passages  []TextField `json:"passages,omitempty"`
	Documents []TextField `json:"documents,omitempty"`
	Texts     []TextField `json:"texts,omitempty"`
	TopN      *int        `json:"top_n,omitempty"`
	Truncate  string      `json:"truncate,omitempty"`
}

// Docs returns whichever of Passages, Documents or Texts was sent.
func (r *RankingRequest) Docs() []TextField {
	switch {
	case r.Passages != nil:
		return r.Passages
	case r.Documents != nil:
		return r.Documents
	}
	return r.Texts
}

// TextField is a string, or an object with a "text" field.
type TextField struct {
	Text string
	Set  bool
}

// UnmarshalJSON accepts "…" or {"text":"…"}.
func (t *TextField) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*t = TextField{}
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '"':
		t.Set = true
		return json.Unmarshal(b, &t.Text)
	case len(b) > 0 && b[0] == '{':
		var o struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		if o.Text == nil {
			return errors.New(`openai: object has no "text" field`)
		}
		t.Text, t.Set = *o.Text, true
		return nil
	}
	return &json.UnmarshalTypeError{Value: jsonKind(b), Type: textFieldType}
}

// MarshalJSON writes the object form {"text":…}.
func (t TextField) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Text string `json:"text"`
	}{t.Text})
}

var textFieldType = reflectTypeOf[TextField]()

func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "empty"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// FieldError is a request problem tied to one field, as the OpenAI API reports it in
// an [ErrorBody]'s "param".
type FieldError struct {
	Param   string // the field, e.g. "messages[0].content" or "max_tokens"
	Message string
}

// Error returns "openai: PARAM: MESSAGE".
func (e *FieldError) Error() string { return fmt.Sprintf("openai: %s: %s", e.Param, e.Message) }
