package loadgen

// Endpoint adapters: the client side of each API kind, one type per kind, in the
// table below. An adapter builds a request's body, parses its answer (whole, and
// event by event when streamed), and states the kind's facts: its default path,
// whether it generates tokens, how its input is counted, whether it sends passages,
// how it authenticates and whether its streams end with [DONE]. The rest of the
// package asks the adapter and compares no endpoint names. The mock server's per-kind
// types (mockserver/api.go) are the other side of each adapter; the wire facts both
// share (kind names, paths, headers, event names) are in internal/openai. See
// docs/endpoints.md for adding a kind.

import (
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// adapter is one API kind as the client speaks it. Its methods run on the request
// path, so they must not allocate beyond what the body and the parsed text need.
type adapter interface {
	// path is the kind's default URL path, appended to a base URL that ends at /v1.
	path() string
	// generates reports whether the kind generates tokens: it may stream, its output
	// can be capped, and its answer's text is counted as output (OSL, TTFT, ITL).
	generates() bool
	// input says how a request's input is counted besides its prompt's own tokens
	// (t.Body is a payload sent as it is; tc the system prompt and history).
	input(t *dataset.Turn, tc *turnCtx) inputCount
	// docs reports whether the kind sends passages with its query (Config.Passages).
	docs() bool
	// media reports whether the kind's messages carry images and audio (Config.Media).
	media() bool
	// tools reports whether the kind's requests carry tools and tool_choice, and its
	// answers tool calls (Workload.Tools; docs/tools.md).
	tools() bool
	// body renders t's request body and its Content-Type ("" = application/json).
	// A kind whose body is one JSON object implements it with [bodyBuilder.json].
	body(b *bodyBuilder, t *dataset.Turn, tc *turnCtx, stream bool) (body []byte, contentType string)
	// auth appends the headers that carry the API key (key may be "") and any the
	// kind requires; configured are the run's own headers, which win.
	auth(hs [][2]string, key string, configured map[string]string) [][2]string
	// parseWhole parses a whole (non-event-stream) 2xx answer into ch, adds its
	// generated content and reasoning to res, and reports whether it had content and
	// whether it carried a choice (a record's chunk counts as carrying output only
	// then). An error means unreadable (res untouched).
	parseWhole(p *openai.ChunkParser, body []byte, ch *openai.StreamChunk, res *result) (content, choices bool, err error)
	// parseEvent parses one stream event's data (never the [DONE] sentinel) into ch.
	parseEvent(p *openai.ChunkParser, typ, data []byte, ch *openai.StreamChunk) error
	// event applies the parsed event ch to rec (usage) and reports whether it carried
	// a choice.
	event(ch *openai.StreamChunk, rec *record.Client) (choices bool)
	// endsWithDone reports whether a complete stream of the kind ends with [DONE]
	// (one that ends at EOF without it is malformed).
	endsWithDone() bool
}

// inputCount is how a request's input is counted beyond its prompt's tokens.
type inputCount uint8

const (
	// inputPrompt: the prompt's tokens are the input (no chat template).
	inputPrompt inputCount = iota
	// inputPayload: the turn's payload is a chat request, whose messages are
	// rendered with the chat template (tokenizer.CountChatInput) and counted.
	inputPayload
	// inputTemplate: the system prompt, history and prompt as messages, rendered with
	// the chat template and the generation prompt.
	inputTemplate
	// inputTemplateExtra: as inputTemplate, but extra_body's add_generation_prompt
	// (vLLM's chat extension) says whether the generation prompt is rendered.
	inputTemplateExtra
)

// apis is the adapter table: every API kind the client speaks, in the order
// [Endpoints] lists them. Adding a kind is one adapter type and one entry here.
var apis = []apiEntry{
	{EndpointChat, chatAPI{}},
	{EndpointCompletions, completionsAPI{}},
	{EndpointEmbeddings, embeddingsAPI{}},
	{EndpointRankings, rankingsAPI{}},
	{EndpointRerank, rerankAPI{}},
	{EndpointResponses, responsesAPI{}},
	{EndpointMessages, messagesAPI{}},
	{EndpointTranscriptions, transcriptionAPI{}},
	{EndpointImages, imagesAPI{}},
}

// apiEntry is one row of the adapter table: a kind's name and its adapter.
type apiEntry struct {
	e Endpoint
	a adapter
}

// endpointNames lists the table's kinds.
func endpointNames() []string {
	out := make([]string, len(apis))
	for i, k := range apis {
		out[i] = string(k.e)
	}
	return out
}

// adapterOf returns e's adapter (the zero Endpoint is chat), nil for an unknown kind.
func adapterOf(e Endpoint) adapter {
	if e == "" {
		e = EndpointChat
	}
	for _, k := range apis {
		if k.e == e {
			return k.a
		}
	}
	return nil
}

// Path returns the endpoint's default URL path (chat's for an unknown endpoint).
func (e Endpoint) Path() string {
	if a := adapterOf(e); a != nil {
		return a.path()
	}
	return openai.PathChat
}

// generates reports whether e is a known kind that generates tokens.
func (e Endpoint) generates() bool {
	a := adapterOf(e)
	return a != nil && a.generates()
}

// openaiAPI is what the OpenAI-style kinds share, embedded by every adapter that
// does not say otherwise: a bearer token, the JSON chunk parser on whole answers and
// stream events, usage as the chunk carries it, and streams that end with [DONE].
type openaiAPI struct{}

func (openaiAPI) generates() bool                               { return false }
func (openaiAPI) docs() bool                                    { return false }
func (openaiAPI) media() bool                                   { return false }
func (openaiAPI) tools() bool                                   { return false }
func (openaiAPI) input(*dataset.Turn, *turnCtx) inputCount      { return inputPrompt }
func (openaiAPI) endsWithDone() bool                            { return true }
func (openaiAPI) streamUsage() bool                             { return false }
func (openaiAPI) capOutput(w *wireBody, field string, osl *int) { capOpenAI(w, field, osl, false) }

func (openaiAPI) auth(hs [][2]string, key string, _ map[string]string) [][2]string {
	if key != "" {
		hs = append(hs, [2]string{"Authorization", "Bearer " + key})
	}
	return hs
}

func (openaiAPI) parseWhole(p *openai.ChunkParser, body []byte, ch *openai.StreamChunk, res *result) (content, choices bool, err error) {
	if err := p.Parse(body, ch); err != nil {
		return false, false, err
	}
	res.add(ch.Text, ch.Reasoning)
	tools := res.addTools(ch)
	return len(ch.Text) > 0 || tools, ch.Choices > 0, nil
}

func (openaiAPI) parseEvent(p *openai.ChunkParser, _, data []byte, ch *openai.StreamChunk) error {
	return p.Parse(data, ch)
}

func (openaiAPI) event(ch *openai.StreamChunk, rec *record.Client) bool {
	if ch.HasUsage {
		rec.UsagePromptTokens, rec.UsageCompletionTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
	}
	return ch.Choices > 0
}

// capOpenAI sets the OpenAI output cap: the field named (Config.OSLField or the
// turn's), max_completion_tokens by default or max_tokens when legacy is set
// (completions), none for OSLNone.
func capOpenAI(w *wireBody, field string, osl *int, legacy bool) {
	switch {
	case field == OSLMaxTokens || (field == "" && legacy):
		w.MaxTokens = osl
	case field == OSLNone:
	default:
		w.MaxCompletionTokens = osl
	}
}

// jsonAPI is an adapter whose body is one JSON object, rendered by
// [bodyBuilder.json] around the kind's own fields.
type jsonAPI interface {
	adapter
	// fill sets the kind's input fields of w.
	fill(w *wireBody, t *dataset.Turn, tc *turnCtx)
	// capOutput sets w's output cap to osl; field is the one configured
	// (Config.OSLField or the turn's), "" for the kind's default.
	capOutput(w *wireBody, field string, osl *int)
	// streamUsage reports whether a streamed request asks for usage in a final
	// chunk (stream_options.include_usage) unless Config.NoUsage.
	streamUsage() bool
}

// chatMessages appends tc's system prompt and history and t's prompt as chat
// messages (the system prompt as a leading system message).
func chatMessages(msgs []message, t *dataset.Turn, tc *turnCtx) []message {
	if tc.system != "" {
		msgs = append(msgs, message{Role: "system", Content: tc.system})
	}
	msgs = append(msgs, tc.history...)
	if len(tc.toolReply) > 0 { // the prompt is the result of the calls just made
		for i, id := range tc.toolReply {
			m := message{Role: "tool", ToolCallID: id}
			if i == 0 {
				m.Content = t.Prompt
			}
			msgs = append(msgs, m)
		}
		return msgs
	}
	if len(tc.media) > 0 {
		return append(msgs, message{Role: "user", Content: mediaSentinel}) // spliceMedia's list replaces it
	}
	return append(msgs, message{Role: "user", Content: t.Prompt})
}
