package mockserver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// responsesKind is the OpenAI Responses API (/v1/responses): input text or items in,
// a response object out, or the response.* event sequence.
type responsesKind struct{ generating }

func (responsesKind) idPrefix() string { return "resp_" }

func (responsesKind) outputParam(*record.Server) string { return "max_output_tokens" }

func (responsesKind) whole(dst []byte, rp *reply, _, text string, u openai.Usage) []byte {
	rs := &respStream{h: rp.h, itemID: "msg_" + rp.requestID}
	body, _ := json.Marshal(rs.response("completed", text, &openai.ResponseUsage{InputTokens: u.PromptTokens,
		OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}, false))
	return rp.j.appendServerData(append(dst, body...))
}

func (responsesKind) frames(rp *reply) frames {
	return &respStream{h: rp.h, itemID: "msg_" + rp.requestID, j: rp.j}
}

// respStream writes the Responses API event sequence.
type respStream struct {
	h      openai.ChunkHeader
	itemID string
	seq    int
	text   strings.Builder
	j      *job // nil: no server data
}

func (rs *respStream) event(buf []byte, typ string, v map[string]any) []byte {
	v["type"] = typ
	v["sequence_number"] = rs.seq
	rs.seq++
	b, _ := json.Marshal(v)
	return sse.AppendEvent(buf, typ, b)
}

func (rs *respStream) response(status string, text string, usage *openai.ResponseUsage, incomplete bool) openai.Response {
	resp := openai.Response{ID: rs.h.ID, Object: "response", CreatedAt: rs.h.Created, Status: status, Model: rs.h.Model, Output: []openai.ResponseOutput{}, Usage: usage}
	if status != "in_progress" {
		resp.Output = []openai.ResponseOutput{{Type: "message", ID: rs.itemID, Status: "completed", Role: "assistant",
			Content: []openai.ResponseContent{{Type: "output_text", Text: text, Annotations: []any{}}}}}
	}
	if incomplete {
		resp.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{"max_output_tokens"}
	}
	return resp
}

func (rs *respStream) start(buf []byte) []byte {
	buf = rs.event(buf, openai.EventResponseCreated, map[string]any{"response": rs.response("in_progress", "", nil, false)})
	buf = rs.event(buf, openai.EventResponseInProgress, map[string]any{"response": rs.response("in_progress", "", nil, false)})
	buf = rs.event(buf, openai.EventOutputItemAdded, map[string]any{"output_index": 0,
		"item": map[string]any{"type": "message", "id": rs.itemID, "status": "in_progress", "role": "assistant", "content": []any{}}})
	buf = rs.event(buf, openai.EventContentPartAdded, map[string]any{"item_id": rs.itemID, "output_index": 0, "content_index": 0,
		"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
	return buf
}

func (rs *respStream) delta(buf []byte, _, _ bool, text string) []byte {
	rs.text.WriteString(text)
	buf = sse.BeginEvent(buf, openai.EventOutputTextDelta)
	buf = openai.AppendResponseTextDelta(buf, rs.itemID, rs.seq, text)
	rs.seq++
	return sse.EndData(buf)
}

func (rs *respStream) finish(buf []byte, _ *gen, _ bool, u openai.Usage) []byte {
	text := rs.text.String()
	buf = rs.event(buf, openai.EventOutputTextDone, map[string]any{"item_id": rs.itemID, "output_index": 0, "content_index": 0, "text": text})
	part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	buf = rs.event(buf, openai.EventContentPartDone, map[string]any{"item_id": rs.itemID, "output_index": 0, "content_index": 0, "part": part})
	buf = rs.event(buf, openai.EventOutputItemDone, map[string]any{"output_index": 0,
		"item": map[string]any{"type": "message", "id": rs.itemID, "status": "completed", "role": "assistant", "content": []any{part}}})
	usage := &openai.ResponseUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	var resp any = rs.response("completed", text, usage, false)
	if rs.j != nil && rs.j.srv != "" {
		// vLLM's metrics ride the completed response, and no earlier event.
		b, _ := json.Marshal(resp)
		resp = json.RawMessage(rs.j.appendServerData(b))
	}
	return rs.event(buf, openai.EventResponseCompleted, map[string]any{"response": resp})
}

func (responsesKind) parse(in *inputs, body, _ []byte, j *job, rec *record.Server) *apiError {
	var req openai.ResponsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model, j.stream = req.Model, req.Stream
	rec.Model, rec.Stream = req.Model, req.Stream
	if s := in.cfg.serverTimings(); s == record.ServerVLLM {
		// vLLM returns its per-request metrics on /v1/responses as on chat and
		// completions (vllm-project/vllm docs/features/per_request_metrics.md,
		// "Responses API"); llama.cpp's timings and SGLang's meta_info are documented
		// on chat and completions only, so the mock sends them there only.
		j.srv = s
	}
	if req.Reasoning != nil && req.Reasoning.Effort != nil {
		rec.ReasoningEffort = req.Reasoning.Effort
	}
	if e := in.outputLimits(j, rec, nil, req.MaxOutputTokens, req.MinTokens, req.IgnoreEOS, "max_output_tokens"); e != nil {
		if e.param == "max_completion_tokens" {
			e.param = "max_output_tokens"
			e.msg = strings.ReplaceAll(e.msg, "max_completion_tokens", "max_output_tokens")
		}
		return e
	}
	if e := sampling(req.Temperature, req.TopP, nil); e != nil {
		return e
	}
	// The Responses API has only max_output_tokens; record it where AIPerf does.
	rec.MaxTokens, rec.MaxCompletionTokens = nil, intPtrCopy(req.MaxOutputTokens)
	switch {
	case req.Input.IsList:
		if len(req.Input.Messages) == 0 {
			return badRequest("invalid_value", "input", "input must contain at least one item")
		}
		var msgs []tokenizer.Message
		if req.Instructions != "" {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: req.Instructions})
		}
		for i, m := range req.Input.Messages {
			if m.Role == "" {
				m.Role = "user"
			}
			if !validRole(m.Role) {
				return badRequest("invalid_value", fmt.Sprintf("input[%d].role", i),
					"input[%d].role %q is not one of system, developer, user, assistant, tool, function", i, m.Role)
			}
			msgs = append(msgs, tokenizer.Message{Role: m.Role, Content: m.Content.Text})
			rec.NonTextParts += m.Content.NonText
		}
		return in.encodeChat(msgs, true, "input", j, rec)
	case req.Input.Text != "":
		text := req.Input.Text
		if req.Instructions != "" {
			text = req.Instructions + "\n" + text
		}
		ids, n := in.encodeBounded(text, in.maxModelLen())
		j.ids, rec.ISL, rec.TokenizationMode = ids, n, record.ModeTokenizerCall
		return in.checkLen(n, "input")
	default:
		return badRequest("missing_field", "input", "you must provide an input parameter")
	}
}
