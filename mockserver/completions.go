package mockserver

import (
	"encoding/json"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/record"
)

// completionKind is the OpenAI (legacy) completions API (/v1/completions): a prompt
// in, text_completion out, or text_completion chunks ending with [DONE]; echo puts
// the prompt before the output, as vLLM does.
type completionKind struct{ generating }

func (completionKind) idPrefix() string { return "cmpl-" }

func (completionKind) appendContent(buf []byte, h openai.ChunkHeader, text string, includeUsage bool) []byte {
	return openai.AppendCompletionChunk(buf, h, text, "", includeUsage)
}

func (completionKind) whole(dst []byte, rp *reply, _, text string, u openai.Usage) []byte {
	h, j := rp.h, rp.j
	out := text
	if j.echo {
		out = j.prompt + text
	}
	fin := rp.g.finish
	body, _ := json.Marshal(openai.Completion{ID: h.ID, Object: "text_completion", Created: h.Created, Model: h.Model,
		Choices: []openai.CompletionChoice{{Text: out, FinishReason: &fin, Logprobs: json.RawMessage("null")}}, Usage: &u})
	return j.appendServerData(append(dst, body...))
}

func (completionKind) frames(rp *reply) frames {
	return &completionFrames{j: rp.j, h: rp.h, tmpl: newChunkTemplate(rp.j, rp.h)}
}

// completionFrames writes a completions stream.
type completionFrames struct {
	j    *job
	h    openai.ChunkHeader
	tmpl *chunkTemplate
}

func (f *completionFrames) start(buf []byte) []byte { return buf }

func (f *completionFrames) delta(buf []byte, first, _ bool, text string) []byte {
	if !first && f.tmpl != nil {
		return f.tmpl.append(buf, text)
	}
	if first && f.j.echo {
		// echo: the prompt leads the first chunk's text, as vLLM streams it.
		text = f.j.prompt + text
	}
	buf = sse.BeginData(buf)
	buf = openai.AppendCompletionChunk(buf, f.h, text, "", f.j.includeUsage)
	return sse.EndData(buf)
}

func (f *completionFrames) finish(buf []byte, g *gen, first bool, u openai.Usage) []byte {
	if first && f.j.echo && f.j.prompt != "" { // no output at all: the echo still goes out
		buf = f.delta(buf, true, false, "")
	}
	buf = sse.BeginData(buf)
	buf = openai.AppendCompletionChunk(buf, f.h, "", g.finish, f.j.includeUsage)
	buf = sse.EndData(buf)
	if f.j.includeUsage {
		buf = sse.BeginData(buf)
		buf = openai.AppendCompletionUsageChunk(buf, f.h, u)
		buf = f.j.appendServerData(buf)
		buf = sse.EndData(buf)
	}
	return append(buf, sse.Done...)
}

func (completionKind) parse(in *inputs, body, _ []byte, j *job, rec *record.Server) *apiError {
	var req openai.CompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model, j.stream, j.echo, j.stop, j.seed = req.Model, req.Stream, req.Echo, req.Stop, req.Seed
	rec.Model, rec.Stream = req.Model, req.Stream
	j.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	j.srv = in.cfg.serverTimings()
	if e := in.outputLimits(j, rec, req.MaxTokens, req.MaxCompletionTokens, req.MinTokens, req.IgnoreEOS, "max_tokens"); e != nil {
		return e
	}
	if e := sampling(req.Temperature, req.TopP, req.N); e != nil {
		return e
	}
	if req.Prompt.Empty() {
		return badRequest("missing_field", "prompt", "you must provide a prompt parameter")
	}
	if len(req.Prompt.Texts) > 1 || len(req.Prompt.IDs) > 1 {
		return badRequest("invalid_value", "prompt", "batched prompts are not supported by the mock server; send one prompt per request")
	}
	ids, e := in.encodePrompt(req.Prompt, "prompt", rec)
	if e != nil {
		return e
	}
	if len(req.Prompt.Texts) == 1 {
		j.prompt = req.Prompt.Texts[0]
	} else if j.echo {
		j.prompt = in.tok.Decode(ids, false)
	}
	j.ids, rec.ISL = ids, len(ids)
	return nil
}
