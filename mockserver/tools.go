package mockserver

// Tool calls (docs/tools.md): a chat request with tools, whose tool_choice is not
// "none", is answered with one call of a function instead of text — the function
// tool_choice names, else the first of the tools. The call's arguments are the
// output tokens, drawn as a text answer's are (Config.ToolCallTokens when set, else
// the OSL rules), wrapped as the JSON object {"input": "…"}: streamed as OpenAI's
// tool_calls deltas (the call's id, type and name with empty arguments, then argument
// fragments, one per chunk), whole as message.tool_calls, with finish_reason
// "tool_calls". OSL and usage.completion_tokens count the arguments' text as the
// tokenizer encodes it (the wrapper included), as a client counting the text does.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
)

// Tool-call answers' fixed parts.
const (
	toolArgsOpen  = `{"input": "`
	toolArgsClose = `"}`
	// finishToolCalls is the finish_reason of an answer that calls a tool.
	finishToolCalls = "tool_calls"
)

// toolArgs is the arguments' JSON text around the generated words.
func toolArgs(words []byte) string { return toolArgsOpen + string(words) + toolArgsClose }

// toolToCall resolves a chat request's tools and tool_choice to the function the
// answer calls ("" = answer in text), or the 400 vLLM gives for a bad pair.
func toolToCall(tools, choice json.RawMessage) (string, *apiError) {
	var names []string
	if len(tools) > 0 && string(tools) != "null" {
		var ts []struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(tools, &ts); err != nil {
			return "", badRequest("invalid_value", "tools", "tools must be a list of function tools: %v", err)
		}
		for i, t := range ts {
			if t.Function.Name == "" {
				return "", badRequest("missing_field", fmt.Sprintf("tools[%d].function.name", i), "tools[%d].function.name is required", i)
			}
			names = append(names, t.Function.Name)
		}
	}
	mode := "auto"
	if len(names) == 0 {
		mode = "none"
	}
	named := ""
	switch c := string(choice); {
	case len(choice) == 0 || c == "null":
	case c == `"none"`, c == `"auto"`, c == `"required"`:
		mode = c[1 : len(c)-1]
	default:
		var obj struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(choice, &obj); err != nil || obj.Function.Name == "" {
			return "", badRequest("invalid_value", "tool_choice", `tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": …}}`)
		}
		mode, named = "named", obj.Function.Name
	}
	switch {
	case mode == "none":
		return "", nil
	case len(names) == 0:
		return "", badRequest("invalid_value", "tool_choice", "tool_choice %q needs tools", mode)
	case mode == "named" && !slices.Contains(names, named):
		return "", badRequest("invalid_value", "tool_choice", "tool_choice names the function %q, which is not among the tools", named)
	case mode == "named":
		return named, nil
	}
	return names[0], nil
}

// toolCallID is the id of the call answering the request with response id id.
func toolCallID(requestID string) string { return "call_" + requestID }

// toolDelta appends the stream chunks of one argument fragment: the call's opening
// delta first (role when first, the id and name, empty arguments) when opened is
// false.
func (f *chatFrames) toolDelta(buf []byte, first bool, text string) []byte {
	if !f.opened {
		role := ""
		if first {
			role = "assistant"
		}
		buf = sse.BeginData(buf)
		buf = openai.AppendChatToolCallChunk(buf, f.h, role, 0, toolCallID(f.requestID), f.j.tool, "", f.j.includeUsage)
		buf = sse.EndData(buf)
		f.opened = true
		text = toolArgsOpen + text
	}
	buf = sse.BeginData(buf)
	buf = openai.AppendChatToolCallChunk(buf, f.h, "", 0, "", "", text, f.j.includeUsage)
	return sse.EndData(buf)
}

// toolOutput is the total output of a tool-call answer (reason reasoning tokens, then
// the call's argument words): Config.ToolCallTokens' draw for the words, within what
// the output cap leaves, or target (the text answer's length) when it is unset.
func (s *Server) toolOutput(j *job, rng *rand.Rand, reason, target int) int {
	if s.cfg.ToolCallTokens.IsZero() {
		return target
	}
	left := max(j.maxOut-reason, 0)
	l := distribution.Length{Dist: distribution.WithSrc(s.cfg.ToolCallTokens.Distribution, rngSource{rng}), Min: min(1, left), Max: left}
	return reason + l.Rand()
}
