package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
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

// toolCallsBody returns a chat answer whose message carries n tool_calls entries,
// entry(i) each (a JSON object or null).
func toolCallsBody(n int, entry func(i int) string) []byte {
	b := []byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, entry(i)...)
	}
	return append(b, `]},"finish_reason":"tool_calls"}]}`...)
}

// toolCallEvents returns n stream events' data, each a chunk whose delta carries one
// tool_calls entry, entry(i).
func toolCallEvents(n int, entry func(i int) string) [][]byte {
	evs := make([][]byte, n)
	for i := range evs {
		evs[i] = []byte(`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[` + entry(i) + `]},"finish_reason":null}]}`)
	}
	return evs
}

// addToolEvents parses each event and adds it to res, as the client's stream reading
// does (worker.event).
func addToolEvents(t testing.TB, p *openai.ChunkParser, res *result, evs [][]byte) {
	var ch openai.StreamChunk
	for _, ev := range evs {
		if err := p.Parse(ev, &ch); err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
		res.add(ch.Text, ch.Reasoning)
		res.addTools(&ch)
	}
}

// TestToolCallsBounded: an answer's tool calls past MaxToolCalls are not kept, whole
// (100,000 empty entries, a 300 KB answer) or streamed, and the arguments' text of
// every entry, kept or not, still counts as output.
func TestToolCallsBounded(t *testing.T) {
	var p openai.ChunkParser
	var ch openai.StreamChunk
	res := &result{}
	body := toolCallsBody(100_000, func(int) string { return `{}` })
	if _, _, err := (openaiAPI{}).parseWhole(&p, body, &ch, res); err != nil {
		t.Fatal(err)
	}
	if len(res.calls) != MaxToolCalls || res.calls[MaxToolCalls-1].index != MaxToolCalls-1 {
		t.Errorf("100,000 empty entries: %d calls kept; want the first %d", len(res.calls), MaxToolCalls)
	}
	const n = 3000 // past openai.MaxToolDeltas in one answer, and past MaxToolCalls
	entry := func(i int) string {
		return fmt.Sprintf(`{"index":%d,"id":"call_%d","type":"function","function":{"name":"f","arguments":"x"}}`, i, i)
	}
	for name, add := range map[string]func(*result){
		"whole": func(res *result) {
			if _, _, err := (openaiAPI{}).parseWhole(&p, toolCallsBody(n, entry), &ch, res); err != nil {
				t.Fatal(err)
			}
		},
		"streamed": func(res *result) { addToolEvents(t, &p, res, toolCallEvents(n, entry)) },
	} {
		res := &result{}
		add(res)
		if len(res.calls) != MaxToolCalls || string(res.tool) != strings.Repeat("x", n) || string(res.text) != string(res.tool) {
			t.Errorf("%s, %d calls with arguments \"x\": %d calls kept, tool text %d bytes, text %d bytes; want %d, %d, %d",
				name, n, len(res.calls), len(res.tool), len(res.text), MaxToolCalls, n, n)
		}
		if c := res.calls[MaxToolCalls-1]; c.id != fmt.Sprintf("call_%d", MaxToolCalls-1) || string(c.name) != "f" || string(c.args) != "x" {
			t.Errorf("%s: the last call kept is %+v; want call_%d, f(x)", name, c, MaxToolCalls-1)
		}
	}
}

// TestToolCallsMerge: a call's deltas are merged by index into the latest call with
// that index; an id on a call that has one opens another; a new answer starts with no
// calls.
func TestToolCallsMerge(t *testing.T) {
	var p openai.ChunkParser
	res := &result{}
	addToolEvents(t, &p, res, [][]byte{
		[]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"get_","arguments":""}}]}}]}`),
		[]byte(`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{"}}]}}]}`),
		[]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"weather","arguments":"{\"q\""}}]}}]}`),
		[]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}},{"index":1,"function":{"arguments":"}"}}]}}]}`),
		[]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"h","arguments":"["}}]}}]}`),
		[]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"]"}}]}}]}`),
	})
	got := fmt.Sprint(res.wireCalls())
	want := fmt.Sprint([]openai.ToolCall{
		{ID: "a", Type: "function", Function: openai.FunctionCall{Name: "get_weather", Arguments: `{"q":1}`}},
		{ID: "b", Type: "function", Function: openai.FunctionCall{Name: "g", Arguments: "{}"}},
		{ID: "c", Type: "function", Function: openai.FunctionCall{Name: "h", Arguments: "[]"}},
	})
	if got != want {
		t.Errorf("calls %s; want %s", got, want)
	}
	res.calls = res.calls[:0] // the next answer (scratch.result)
	addToolEvents(t, &p, res, [][]byte{[]byte(`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"z"}}]}}]}`)})
	if len(res.calls) != 1 || string(res.calls[0].args) != "z" {
		t.Errorf("next answer's calls %+v; want one, with arguments z", res.calls)
	}
}

// allocBytes returns the bytes f allocates on the heap, as testing.AllocsPerRun
// counts allocations (one processor, so that little else runs).
func allocBytes(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// toolCallShapes are hostile tool-call answers of n entries, whole or streamed.
var toolCallShapes = []struct {
	name   string
	stream bool
	entry  func(i int) string
}{
	{"empty entries, whole", false, func(int) string { return `{}` }},
	{"empty entries, streamed", true, func(i int) string { return fmt.Sprintf(`{"index":%d}`, i) }},
	{"a name in fragments, whole", false, func(int) string { return `{"index":0,"function":{"name":"ab"}}` }},
	{"a name in fragments, streamed", true, func(int) string { return `{"index":0,"function":{"name":"ab"}}` }},
	{"arguments in fragments, streamed", true, func(int) string { return `{"index":0,"function":{"arguments":"ab"}}` }},
	{"ids at one index, streamed", true, func(i int) string { return fmt.Sprintf(`{"index":0,"id":"c%d"}`, i) }},
}

// addToolShape runs one answer of the shape through a new parser and result, as the
// client reads it.
func addToolShape(t testing.TB, stream bool, body []byte, evs [][]byte) *result {
	var p openai.ChunkParser
	var ch openai.StreamChunk
	res := &result{}
	if stream {
		addToolEvents(t, &p, res, evs)
	} else if _, _, err := (openaiAPI{}).parseWhole(&p, body, &ch, res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestToolCallsLinear: reading a hostile tool-call answer is linear in its entries,
// measured by a deterministic proxy, the bytes allocated: 100,000 entries allocate
// at most about 10 times what 10,000 do (a quadratic merge or string append, as an
// answer of 100,000 empty entries once took 14.7 s, allocates about 100 times as
// much, or spends it in a scan the bound on kept calls now stops).
func TestToolCallsLinear(t *testing.T) {
	for _, sh := range toolCallShapes {
		var bytes [2]uint64
		for k, n := range []int{10_000, 100_000} {
			var body []byte
			var evs [][]byte
			if sh.stream {
				evs = toolCallEvents(n, sh.entry)
			} else {
				body = toolCallsBody(n, sh.entry)
			}
			bytes[k] = allocBytes(func() { addToolShape(t, sh.stream, body, evs) })
		}
		t.Logf("%s: %d bytes allocated for 10,000 entries, %d for 100,000", sh.name, bytes[0], bytes[1])
		if bytes[1] > 20*bytes[0]+64<<10 {
			t.Errorf("%s: 100,000 entries allocate %d bytes, 10,000 entries %d: %.0f times as much, want about 10 (linear)",
				sh.name, bytes[1], bytes[0], float64(bytes[1])/float64(bytes[0]))
		}
	}
}

// BenchmarkToolCalls reads each hostile tool-call answer of toolCallShapes with
// 10,000 and 100,000 entries and prints the time per entry (ns/entry), which stays
// flat when reading is linear.
func BenchmarkToolCalls(b *testing.B) {
	for _, sh := range toolCallShapes {
		for _, n := range []int{10_000, 100_000} {
			var body []byte
			var evs [][]byte
			if sh.stream {
				evs = toolCallEvents(n, sh.entry)
			} else {
				body = toolCallsBody(n, sh.entry)
			}
			b.Run(fmt.Sprintf("%s/%d", sh.name, n), func(b *testing.B) {
				for b.Loop() {
					addToolShape(b, sh.stream, body, evs)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
			})
		}
	}
}
