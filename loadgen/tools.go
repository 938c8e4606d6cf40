package loadgen

// Tool calls (docs/tools.md): chat requests carry tools — Workload.Tools synthetic
// function definitions, or Workload.ToolsFile's — with a tool_choice drawn per
// request from Workload.ToolChoice's weights. An answer's tool calls (whole, or
// streamed as tool_calls deltas) are output: their arguments' text counts in OSL and
// in each chunk's tokens; the record keeps when the first one arrived
// (FirstToolCall), how many there were and their tokens. With Workload.ToolResults a
// conversation's next turn sends each call's result back as a tool message.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/openai"
)

// Tool choices ([Workload.ToolChoice]'s names).
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
	ToolChoiceNone     = "none"
	// ToolChoiceFunction names one of the tools ({"type": "function", "function":
	// {"name": …}}), drawn uniformly.
	ToolChoiceFunction = "function"
)

// ToolChoices are the names [Workload.ToolChoice] weighs.
var ToolChoices = []string{ToolChoiceAuto, ToolChoiceRequired, ToolChoiceNone, ToolChoiceFunction}

// MaxTools bounds Workload.Tools.
const MaxTools = 1024

// toolSet is a run's tools and tool_choice distribution.
type toolSet struct {
	raw     json.RawMessage // the "tools" array sent
	names   []string        // the functions' names
	choices []string        // tool_choice names ...
	cum     []float64       // ... and their cumulative probabilities
	seed    uint64
}

// ParseToolChoice reads a tool_choice distribution: "auto", or weights such as
// "auto:0.5,required:0.3,none:0.1,function:0.1" (relative, need not sum to 1). It
// returns the names and their probabilities.
func ParseToolChoice(s string) (names []string, p []float64, err error) {
	sum := 0.0
	for _, part := range strings.Split(s, ",") {
		name, w, hasW := strings.Cut(strings.TrimSpace(part), ":")
		v := 1.0
		if hasW {
			if v, err = strconv.ParseFloat(strings.TrimSpace(w), 64); err != nil || !(v >= 0) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("%q: the weight %q is not a number >= 0", part, w)
			}
		}
		switch {
		case !slices.Contains(ToolChoices, name):
			return nil, nil, fmt.Errorf("%q: want %s, each with an optional :WEIGHT", part, OrList(ToolChoices))
		case slices.Contains(names, name):
			return nil, nil, fmt.Errorf("%q is given twice", name)
		}
		names, p = append(names, name), append(p, v)
		sum += v
	}
	if sum <= 0 {
		return nil, nil, fmt.Errorf("%q: every weight is 0", s)
	}
	for i := range p {
		p[i] /= sum
	}
	return names, p, nil
}

// checkTools checks the tool settings, each problem naming its field.
func (c *Config) checkTools(p *problems) {
	switch {
	case c.Tools < 0 || c.Tools > MaxTools:
		p.add("tools %d: want 0 (none) to %d synthetic function definitions", c.Tools, MaxTools)
	case c.Tools > 0 && c.ToolsFile != "":
		p.add("tools %d and tools_file %s: give the tools one way", c.Tools, c.ToolsFile)
	}
	hasTools := c.Tools > 0 || c.ToolsFile != ""
	if c.ToolChoice != "" {
		if _, _, err := ParseToolChoice(c.ToolChoice); err != nil {
			p.add("tool_choice %v", err)
		} else if !hasTools {
			p.add("tool_choice %q needs tools or tools_file", c.ToolChoice)
		}
	}
	if c.ToolResults && !hasTools {
		p.add("tool_results needs tools or tools_file")
	}
	if a := adapterOf(c.endpoint()); hasTools && a != nil && !a.tools() {
		p.add("tools are sent with chat requests only; endpoint_type is %s", c.endpoint())
	}
}

// newToolSet builds the run's tools (nil when it sends none): Tools synthetic
// functions, or ToolsFile's array.
func newToolSet(w *Workload) (*toolSet, error) {
	if w.Tools == 0 && w.ToolsFile == "" {
		return nil, nil
	}
	ts := &toolSet{seed: w.Seed}
	if w.ToolsFile != "" {
		b, err := os.ReadFile(w.ToolsFile)
		if err != nil {
			return nil, fmt.Errorf("%w: tools_file: %w", ErrInvalidConfig, err)
		}
		var tools []openai.Tool
		if err := json.Unmarshal(b, &tools); err != nil {
			return nil, fmt.Errorf("%w: tools_file %s: want a JSON array of function tools: %w", ErrInvalidConfig, w.ToolsFile, err)
		}
		for i, t := range tools {
			if t.Function.Name == "" {
				return nil, fmt.Errorf("%w: tools_file %s: tools[%d].function.name is empty", ErrInvalidConfig, w.ToolsFile, i)
			}
			ts.names = append(ts.names, t.Function.Name)
		}
		if len(ts.names) == 0 {
			return nil, fmt.Errorf("%w: tools_file %s: no tools", ErrInvalidConfig, w.ToolsFile)
		}
		ts.raw = json.RawMessage(b)
	} else {
		tools := make([]openai.Tool, w.Tools)
		for i := range tools {
			name := fmt.Sprintf("tool_%d", i)
			tools[i] = openai.Tool{Type: "function", Function: openai.FunctionDef{Name: name,
				Description: "A synthetic function the benchmark offers (perfgate tool " + strconv.Itoa(i) + ").",
				Parameters:  json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"What to look up."}},"required":["input"]}`)}}
			ts.names = append(ts.names, name)
		}
		ts.raw, _ = json.Marshal(tools)
	}
	names, p, err := ParseToolChoice(cmpOr(w.ToolChoice, ToolChoiceAuto))
	if err != nil {
		return nil, fmt.Errorf("%w: tool_choice %w", ErrInvalidConfig, err)
	}
	ts.choices = names
	acc := 0.0
	for _, v := range p {
		acc += v
		ts.cum = append(ts.cum, acc)
	}
	return ts, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// choice draws request idx's tool_choice (from the seed and the index only).
func (ts *toolSet) choice(idx int) any {
	u := unitHash(ts.seed^0x746f6f6c63686f69, uint64(idx)) // "toolchoi"
	name := ts.choices[len(ts.choices)-1]
	for i, c := range ts.cum {
		if u < c {
			name = ts.choices[i]
			break
		}
	}
	if name != ToolChoiceFunction {
		return name
	}
	f := ts.names[int(unitHash(ts.seed^0x746f6f6c6e616d65, uint64(idx))*float64(len(ts.names)))%len(ts.names)]
	return map[string]any{"type": "function", "function": map[string]string{"name": f}}
}

// MaxToolCalls bounds the tool calls kept from one answer. A model's answer calls a
// few tools; past the bound a server's calls are not kept (nor sent back with
// Workload.ToolResults, nor in the record's tool_calls count), though their
// arguments' text still counts as output, in OSL and tool_call_tokens.
const MaxToolCalls = 1024

// toolCall is one call of an answer, collected from its deltas (or its message).
type toolCall struct {
	index      int
	id         string
	name, args []byte
}

// addTools adds the tool-call entries of one event (or a whole message) to res:
// their argument text is output (text and content), the calls are collected (at most
// MaxToolCalls); it reports whether the event carried any tool call. Its work is
// linear in the entries and their bytes.
func (res *result) addTools(ch *openai.StreamChunk) bool {
	for i := range ch.Tools {
		td := &ch.Tools[i]
		res.addToolText(td.Args)
		c := res.call(td)
		if c == nil {
			continue
		}
		if len(td.ID) > 0 {
			c.id = string(td.ID)
		}
		c.name = append(c.name, td.Name...)
		c.args = append(c.args, td.Args...)
	}
	res.addToolText(ch.ToolArgsDropped) // entries past openai.MaxToolDeltas in one event
	return len(ch.Tools) > 0
}

// addToolText adds a tool call's argument text to the output.
func (res *result) addToolText(args []byte) {
	res.add(args, nil)
	res.tool = append(res.tool, args...)
}

// call returns the call td belongs to: the latest call with td's index, or a new one
// when there is none or td opens another (it has an id and that call has one too);
// nil when it would be a call past MaxToolCalls.
func (res *result) call(td *openai.ToolDelta) *toolCall {
	if len(res.calls) == 0 {
		clear(res.callAt) // a new answer
	}
	if k, ok := res.callAt[td.Index]; ok && (len(td.ID) == 0 || res.calls[k].id == "") {
		return &res.calls[k]
	}
	if len(res.calls) >= MaxToolCalls {
		return nil
	}
	if res.callAt == nil {
		res.callAt = make(map[int]int)
	}
	res.callAt[td.Index] = len(res.calls)
	res.calls = append(res.calls, toolCall{index: td.Index})
	return &res.calls[len(res.calls)-1]
}

// wireCalls returns res's calls as an assistant message's tool_calls.
func (res *result) wireCalls() []openai.ToolCall {
	out := make([]openai.ToolCall, len(res.calls))
	for i, c := range res.calls {
		out[i] = openai.ToolCall{ID: c.id, Type: "function", Function: openai.FunctionCall{Name: string(c.name), Arguments: string(c.args)}}
	}
	return out
}
