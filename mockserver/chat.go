package mockserver

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// chatKind is the OpenAI chat completions API (/v1/chat/completions): messages in,
// chat.completion out, or chat.completion.chunk events ending with [DONE]; reasoning
// goes out as delta.reasoning_content.
type chatKind struct{ generating }

func (chatKind) idPrefix() string { return "chatcmpl-" }

func (chatKind) reasons() bool { return true }

func (chatKind) appendContent(buf []byte, h openai.ChunkHeader, text string, includeUsage bool) []byte {
	return openai.AppendChatChunk(buf, h, "", text, "", includeUsage)
}

func (chatKind) whole(dst []byte, rp *reply, thinking, text string, u openai.Usage) []byte {
	if rp.j.tool == "" {
		// Room for the whole answer: the JSON around the texts is about 330 bytes besides
		// the id and model (256 made the usage's append copy the body once more).
		dst = slices.Grow(dst, 400+len(rp.h.ID)+len(rp.h.Model)+len(text)+len(thinking))
		return rp.j.appendServerData(openai.AppendChatCompletion(dst, rp.h, thinking, text, rp.g.finish, u))
	}
	// A tool call (rare): encoding/json. Its own copy of u goes to the heap, so that
	// u does not on the common path above.
	h, tu := rp.h, u
	msg := openai.ResponseMessage{Role: "assistant", ReasoningContent: thinking, ToolCalls: []openai.ToolCall{{ID: toolCallID(rp.requestID), Type: "function",
		Function: openai.FunctionCall{Name: rp.j.tool, Arguments: toolArgs([]byte(text))}}}}
	body, _ := json.Marshal(openai.ChatCompletion{ID: h.ID, Object: "chat.completion", Created: h.Created, Model: h.Model,
		Choices: []openai.ChatChoice{{Message: msg, FinishReason: rp.g.finish,
			Logprobs: json.RawMessage("null")}}, Usage: &tu})
	return rp.j.appendServerData(append(dst, body...))
}

func (chatKind) frames(rp *reply) frames {
	f := &chatFrames{j: rp.j, h: rp.h, requestID: rp.requestID}
	if rp.j.tool == "" {
		f.tmpl = newChunkTemplate(rp.j, rp.h)
	}
	return f
}

// chatFrames writes a chat stream.
type chatFrames struct {
	j         *job
	h         openai.ChunkHeader
	tmpl      *chunkTemplate
	requestID string
	opened    bool // a tool call's opening delta went out
}

func (f *chatFrames) start(buf []byte) []byte { return buf }

func (f *chatFrames) delta(buf []byte, first, thinking bool, text string) []byte {
	switch {
	case thinking:
		role := ""
		if first {
			role = "assistant"
		}
		buf = sse.BeginData(buf)
		buf = openai.AppendChatReasoningChunk(buf, f.h, role, text, f.j.includeUsage)
		return sse.EndData(buf)
	case f.j.tool != "":
		return f.toolDelta(buf, first, text)
	case !first && f.tmpl != nil:
		return f.tmpl.append(buf, text)
	case first:
		// The role chunk goes out with the first token, so TTFT is the same
		// whichever of the two a client times.
		buf = f.role(buf)
	}
	buf = sse.BeginData(buf)
	buf = openai.AppendChatChunk(buf, f.h, "", text, "", f.j.includeUsage)
	return sse.EndData(buf)
}

func (f *chatFrames) role(buf []byte) []byte {
	buf = sse.BeginData(buf)
	buf = openai.AppendChatChunk(buf, f.h, "assistant", "", "", f.j.includeUsage)
	return sse.EndData(buf)
}

func (f *chatFrames) finish(buf []byte, g *gen, first bool, u openai.Usage) []byte {
	switch {
	case f.j.tool != "":
		// The arguments' closing fragment (after the opening one, if no token was sent).
		if !f.opened {
			buf = f.toolDelta(buf, first, "")
		}
		buf = f.toolDelta(buf, false, toolArgsClose)
	case first: // no content at all: still send the role
		buf = f.role(buf)
	}
	buf = sse.BeginData(buf)
	buf = openai.AppendChatChunk(buf, f.h, "", "", g.finish, f.j.includeUsage)
	buf = sse.EndData(buf)
	if f.j.includeUsage {
		buf = sse.BeginData(buf)
		buf = openai.AppendChatUsageChunk(buf, f.h, u)
		buf = f.j.appendServerData(buf)
		buf = sse.EndData(buf)
	}
	return append(buf, sse.Done...)
}

func (chatKind) parse(in *inputs, body, _ []byte, j *job, rec *record.Server) *apiError {
	var req openai.ChatRequest
	if err := openai.DecodeChatRequest(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model, j.stream, j.seed = req.Model, req.Stream, req.Seed
	rec.Model, rec.Stream, rec.ReasoningEffort = req.Model, req.Stream, req.ReasoningEffort
	if req.ReasoningEffort != nil {
		j.effort = *req.ReasoningEffort
	}
	j.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	j.stop = req.Stop
	j.srv = in.cfg.serverTimings()
	var te *apiError
	if j.tool, te = toolToCall(req.Tools, req.ToolChoice); te != nil {
		return te
	}
	rec.ToolCall = j.tool
	if e := in.outputLimits(j, rec, req.MaxTokens, req.MaxCompletionTokens, req.MinTokens, req.IgnoreEOS, "max_tokens"); e != nil {
		return e
	}
	if e := sampling(req.Temperature, req.TopP, req.N); e != nil {
		return e
	}
	if req.PromptTokenIDs != nil {
		if e := in.checkIDs(req.PromptTokenIDs, "prompt_token_ids"); e != nil {
			return e
		}
		j.ids = req.PromptTokenIDs
		rec.ISL, rec.TokenizationMode = len(j.ids), record.ModePromptTokenIDs
		return in.checkLen(len(j.ids), "prompt_token_ids")
	}
	if req.Messages == nil {
		return badRequest("missing_field", "messages", "you must provide a messages parameter")
	}
	if len(req.Messages) == 0 {
		return badRequest("invalid_value", "messages", "messages must contain at least one message")
	}
	// A short conversation's messages stay on the stack (encodeChat keeps none of them).
	var few [8]tokenizer.Message
	msgs := few[:0]
	if len(req.Messages) > len(few) {
		msgs = make([]tokenizer.Message, 0, len(req.Messages))
	}
	msgs = msgs[:len(req.Messages)]
	for i, m := range req.Messages {
		if m.Role == "" {
			return badRequest("missing_field", fmt.Sprintf("messages[%d].role", i), "messages[%d].role is required", i)
		}
		if !validRole(m.Role) {
			return badRequest("invalid_value", fmt.Sprintf("messages[%d].role", i),
				"messages[%d].role %q is not one of system, developer, user, assistant, tool, function", i, m.Role)
		}
		msgs[i] = tokenizer.Message{Role: m.Role, Content: m.Content.Text}
		rec.NonTextParts += m.Content.NonText
	}
	images, audio, e := in.countMedia(req.Model, req.Messages)
	if e != nil {
		return e
	}
	addGen := req.AddGenerationPrompt == nil || *req.AddGenerationPrompt
	if e := in.encodeChat(msgs, addGen, "messages", j, rec); e != nil {
		return e
	}
	return in.addMedia(images, audio, rec)
}
