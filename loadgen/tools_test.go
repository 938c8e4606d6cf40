package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/openai"
)

// TestToolResultsTurn: with ToolResults, a conversation's turn after a tool-call
// answer sends the assistant's calls back and the turn's prompt as a tool message
// with the call's id, instead of a user message; every request carries the tools and
// a tool_choice. The answers' arguments are counted in OSL and as tool-call tokens.
func TestToolResultsTurn(t *testing.T) {
	var mu sync.Mutex
	var bodies []openai.ChatRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req openai.ChatRequest
		if err := json.Unmarshal(b, &req); err != nil {
			t.Errorf("body %s: %v", b, err)
		}
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"tool_1","arguments":"{\"input\": \"hello world\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`, n)
	}))
	defer srv.Close()
	out, err := Run(t.Context(), Config{
		Target:   Target{URLs: []string{srv.URL}, NoStream: true},
		Workload: Workload{Turns: distribution.MustSpec("fixed:3"), Tools: 2, ToolResults: true, ToolChoice: "required", OSL: fixed(8)},
		Stop:     Stop{Requests: 3},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 3 || len(out.Records) != 3 {
		t.Fatalf("%d bodies, %d records; want 3 (one conversation of three turns)", len(bodies), len(out.Records))
	}
	args := `{"input": "hello world"}`
	for i, b := range bodies {
		var tools []openai.Tool
		if json.Unmarshal(b.Tools, &tools) != nil || len(tools) != 2 || tools[1].Function.Name != "tool_1" || string(b.ToolChoice) != `"required"` {
			t.Errorf("request %d: tools %s, tool_choice %s; want the 2 synthetic tools, required", i, b.Tools, b.ToolChoice)
		}
		last := b.Messages[len(b.Messages)-1]
		if i == 0 {
			if last.Role != "user" {
				t.Errorf("request 0 ends with a %s message; want user", last.Role)
			}
			continue
		}
		// ... user, assistant(tool_calls call_{i-1}), tool(call_{i-1}, the prompt)
		asst := b.Messages[len(b.Messages)-2]
		var calls []openai.ToolCall
		if json.Unmarshal(asst.ToolCalls, &calls) != nil || asst.Role != "assistant" || len(calls) != 1 ||
			calls[0].ID != fmt.Sprintf("call_%d", i-1) || calls[0].Function.Arguments != args {
			t.Errorf("request %d: the message before the last is %+v; want the assistant's call_%d with its arguments", i, asst, i-1)
		}
		if last.Role != "tool" || last.ToolCallID != fmt.Sprintf("call_%d", i-1) || last.Content.Text == "" {
			t.Errorf("request %d ends with %+v; want a tool message answering call_%d with the prompt", i, last, i-1)
		}
	}
	want := gpt2(t).Count(args, false)
	for _, r := range out.Records {
		if r.ToolCalls != 1 || r.ToolCallTokens != want || r.OSL != want || r.FinishReason != "tool_calls" || r.ISLTemplate == 0 {
			t.Errorf("record %d: tool_calls %d, tool_call_tokens %d, osl %d, finish %q, isl_template %d; want 1, %d, %d, tool_calls, counted",
				r.Index, r.ToolCalls, r.ToolCallTokens, r.OSL, r.FinishReason, r.ISLTemplate, want, want)
		}
	}
}

// TestToolChoiceDraws: tool_choice draws fit their weights (chi-square, n = 20,000,
// seed 3, alpha 0.001), a named function is one of the tools, and ParseToolChoice
// refuses bad weights with what was wrong.
func TestToolChoiceDraws(t *testing.T) {
	ts, err := newToolSet(&Workload{Tools: 4, ToolChoice: "auto:5,required:3,none:1,function:1", Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{"auto": 0, "required": 1, "none": 2, "function": 3}
	counts := make([]int, 4)
	named := map[string]int{}
	for i := range 20000 {
		switch c := ts.choice(i).(type) {
		case string:
			counts[idx[c]]++
		case map[string]any:
			counts[3]++
			named[c["function"].(map[string]string)["name"]]++
		}
	}
	if p := chiSquareP(counts, []float64{0.5, 0.3, 0.1, 0.1}); p < 0.001 {
		t.Errorf("counts %v: chi-square p = %.3g < alpha 0.001 against 0.5, 0.3, 0.1, 0.1", counts, p)
	}
	if p := chiSquareP(counts, []float64{0.25, 0.25, 0.25, 0.25}); p >= 0.001 {
		t.Errorf("counts %v fit uniform weights too (p = %.3g): the test cannot fail", counts, p)
	}
	if len(named) != 4 {
		t.Errorf("named functions drawn: %v; want all four tools", named)
	}
	for _, c := range []struct{ in, want string }{
		{"auto:x", `the weight "x" is not a number >= 0`},
		{"sometimes", "want auto, required, none or function"},
		{"auto,auto", `"auto" is given twice`},
		{"auto:0,none:0", "every weight is 0"},
	} {
		if _, _, err := ParseToolChoice(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseToolChoice(%q) = %v; want %q", c.in, err, c.want)
		}
	}
}
