package loadgen

// The OpenAI-style adapters (see adapter.go): chat completions, completions and the
// Responses API, which generate, and embeddings, rankings and rerank, which do not.
// The Anthropic Messages adapter is in messages.go.

import (
	"bytes"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/loadgen/dataset"
)

// chatAPI is OpenAI chat completions: the system prompt, history and prompt as
// messages, with images and audio when configured; input counted through the chat
// template (with vLLM's add_generation_prompt); reasoning read from reasoning_content.
type chatAPI struct{ openaiAPI }

func (chatAPI) path() string      { return openai.PathChat }
func (chatAPI) generates() bool   { return true }
func (chatAPI) streamUsage() bool { return true }
func (chatAPI) media() bool       { return true }
func (chatAPI) tools() bool       { return true }

func (chatAPI) input(t *dataset.Turn, _ *turnCtx) inputCount {
	if t.Body != nil {
		return inputPayload
	}
	return inputTemplateExtra
}

func (k chatAPI) body(b *bodyBuilder, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	return b.json(k, t, tc, stream)
}

func (chatAPI) fill(w *wireBody, t *dataset.Turn, tc *turnCtx) {
	w.Messages = chatMessages(w.Messages, t, tc)
}

// completionsAPI is OpenAI completions: one prompt string (the system prompt and
// history joined before it by newlines); the output cap is max_tokens by default.
type completionsAPI struct{ openaiAPI }

func (completionsAPI) path() string      { return openai.PathCompletions }
func (completionsAPI) generates() bool   { return true }
func (completionsAPI) streamUsage() bool { return true }

func (k completionsAPI) body(b *bodyBuilder, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	return b.json(k, t, tc, stream)
}

func (completionsAPI) fill(w *wireBody, t *dataset.Turn, tc *turnCtx) {
	p := completionPrompt(t, tc)
	w.Prompt = &p
}

// completionPrompt is the prompt string a completions request sends for t: the system
// prompt and history joined before the prompt by newlines.
func completionPrompt(t *dataset.Turn, tc *turnCtx) string {
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
	return p
}

func (completionsAPI) capOutput(w *wireBody, field string, osl *int) { capOpenAI(w, field, osl, true) }

// responsesAPI is the OpenAI Responses API: the prompt as input (a list of messages
// when there is a system prompt or history, then counted through the chat template),
// max_output_tokens, usage in response.completed, no [DONE]; a whole answer's text is
// its output_text parts.
type responsesAPI struct{ openaiAPI }

func (responsesAPI) path() string       { return openai.PathResponses }
func (responsesAPI) generates() bool    { return true }
func (responsesAPI) endsWithDone() bool { return false }

func (responsesAPI) input(t *dataset.Turn, tc *turnCtx) inputCount {
	switch {
	case len(tc.history) == 0 && tc.system == "":
		return inputPrompt
	case t.Body != nil:
		return inputPayload
	}
	return inputTemplate
}

func (k responsesAPI) body(b *bodyBuilder, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	return b.json(k, t, tc, stream)
}

func (responsesAPI) fill(w *wireBody, t *dataset.Turn, tc *turnCtx) {
	if len(tc.history) == 0 && tc.system == "" {
		w.Input = t.Prompt
		return
	}
	w.Input = chatMessages(nil, t, tc)
}

func (responsesAPI) capOutput(w *wireBody, field string, osl *int) {
	if field != OSLNone {
		w.MaxOutputTokens = osl
	}
}

func (responsesAPI) parseWhole(p *openai.ChunkParser, body []byte, ch *openai.StreamChunk, res *result) (content, choices bool, err error) {
	if err := p.Parse(body, ch); err != nil {
		return false, false, err
	}
	res.add(ch.Text, ch.Reasoning)
	return len(ch.Text) > 0, ch.Choices > 0, nil
}

// embeddingsAPI is OpenAI embeddings: the prompt as input; nothing generated.
type embeddingsAPI struct{ openaiAPI }

func (embeddingsAPI) path() string { return openai.PathEmbeddings }

func (k embeddingsAPI) body(b *bodyBuilder, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	return b.json(k, t, tc, stream)
}

func (embeddingsAPI) fill(w *wireBody, t *dataset.Turn, _ *turnCtx) { w.Input = t.Prompt }

// rankingsAPI is NVIDIA NIM's ranking API: the prompt as the query's text, the
// turn's passages as passages[].text.
type rankingsAPI struct{ openaiAPI }

func (rankingsAPI) path() string { return openai.PathRanking }
func (rankingsAPI) docs() bool   { return true }

func (k rankingsAPI) body(b *bodyBuilder, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	return b.json(k, t, tc, stream)
}

func (rankingsAPI) fill(w *wireBody, t *dataset.Turn, _ *turnCtx) {
	w.Query = textField{Text: t.Prompt}
	for _, d := range t.Docs {
		w.Passages = append(w.Passages, textField{Text: d})
	}
}

// rerankAPI is the vLLM/Cohere rerank API: the prompt as the query, the turn's
// passages as documents.
type rerankAPI struct{ openaiAPI }

func (rerankAPI) path() string { return openai.PathRerank }
func (rerankAPI) docs() bool   { return true }

func (k rerankAPI) body(b *bodyBuilder, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	return b.json(k, t, tc, stream)
}

func (rerankAPI) fill(w *wireBody, t *dataset.Turn, _ *turnCtx) {
	w.Query = t.Prompt
	w.Documents = append(w.Documents, t.Docs...)
}
