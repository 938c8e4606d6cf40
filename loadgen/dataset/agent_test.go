package dataset

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/agent_trace.jsonl from SmallAgentTrace")

// SmallAgentTrace is the spec of testdata/agent_trace.jsonl (docs/agents.md): rewrite
// it with go test ./loadgen/dataset -run TestAgentTraceTestdata -update.
var SmallAgentTrace = AgentTraceSpec{
	Jobs: 6, Turns: 5, FanOut: 2, FanOutEvery: 2, SubTurns: 2, Rate: 2,
	InputTokens: 200, GrowTokens: 40, OutputTokens: 24, BlockTokens: 64, SharedBlocks: 2,
	ThinkMS: 300, ToolMS: 800, ToolShare: 0.5, Seed: 39,
}

// TestAgentTraceTestdata: the shipped trace is the generator's output for its spec.
func TestAgentTraceTestdata(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteAgentTrace(&buf, SmallAgentTrace); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "testdata/agent_trace.jsonl", buf.Bytes(), *update)
}

// readAll draws every job of an agent trace.
func readAll(t *testing.T, in string, maxCtx int) ([]*AgentJob, error) {
	t.Helper()
	a := NewAgentTrace(strings.NewReader(in), maxCtx)
	var jobs []*AgentJob
	for j, ok := a.Next(); ok; j, ok = a.Next() {
		jobs = append(jobs, j)
	}
	return jobs, a.Err()
}

// TestAgentTraceStructure reads the shipped trace back: jobs, their start times in
// order, sub-agents after every second root turn, joined by the next, and every line
// once.
func TestAgentTraceStructure(t *testing.T) {
	data, err := os.ReadFile("testdata/agent_trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := readAll(t, string(data), 8192)
	if err != nil {
		t.Fatal(err)
	}
	s := SmallAgentTrace
	if len(jobs) != s.Jobs {
		t.Fatalf("%d jobs; want %d", len(jobs), s.Jobs)
	}
	lines, prev := 0, time.Duration(-1)
	for _, j := range jobs {
		if j.At < prev {
			t.Errorf("job %s at %v before the previous job's %v", j.ID, j.At, prev)
		}
		prev = j.At
		if len(j.Root.Turns) != s.Turns {
			t.Fatalf("job %s: %d root turns; want %d", j.ID, len(j.Root.Turns), s.Turns)
		}
		for k, turn := range j.Root.Turns {
			want := 0
			if (k+1)%s.FanOutEvery == 0 && k < s.Turns-1 {
				want = s.FanOut
			}
			if len(turn.Agents) != want {
				t.Errorf("job %s turn %d: %d sub-agents; want %d", j.ID, k, len(turn.Agents), want)
			}
			for _, a := range turn.Agents {
				if a.After != k || a.Parent != j.ID || len(a.Turns) != s.SubTurns {
					t.Errorf("job %s: sub-agent %+v; want after turn %d of %s with %d turns", j.ID, a, k, j.ID, s.SubTurns)
				}
				if a.Turns[0].Line <= turn.Line || (k+1 < len(j.Root.Turns) && a.Turns[len(a.Turns)-1].Line >= j.Root.Turns[k+1].Line) {
					t.Errorf("job %s: sub-agent %s's lines are not between its parent's turns %d and %d", j.ID, a.ID, k, k+1)
				}
			}
			if k > 0 && turn.InputTokens <= j.Root.Turns[k-1].InputTokens {
				t.Errorf("job %s turn %d: input %d does not grow from %d", j.ID, k, turn.InputTokens, j.Root.Turns[k-1].InputTokens)
			}
		}
		lines += j.Requests()
		if j.Sessions() != 1+s.FanOut*((s.Turns-1)/s.FanOutEvery) {
			t.Errorf("job %s: %d sessions", j.ID, j.Sessions())
		}
	}
	if n := bytes.Count(data, []byte("\n")); lines != n {
		t.Errorf("jobs hold %d requests; the file has %d lines", lines, n)
	}
}

// TestAgentTraceTimes: t, delay and tool_call_ms in ms; a job's first line may give
// a delay after the previous job's start, or nothing (the same start).
func TestAgentTraceTimes(t *testing.T) {
	in := `{"session_id":"a","turn":0,"t":100,"input_tokens":5,"output_tokens":1}
{"session_id":"a","turn":1,"delay":250.5,"tool_call_ms":40,"input_tokens":9,"output_tokens":1}
{"session_id":"b","turn":0,"delay":50,"input_tokens":5,"output_tokens":1}
{"session_id":"c","turn":0,"input_tokens":5,"output_tokens":1}
`
	jobs, err := readAll(t, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{100 * time.Millisecond, 150 * time.Millisecond, 150 * time.Millisecond}
	for i, j := range jobs {
		if j.At != want[i] {
			t.Errorf("job %d at %v; want %v", i, j.At, want[i])
		}
	}
	if tu := jobs[0].Root.Turns[1]; tu.Delay != 250500*time.Microsecond || tu.ToolWait != 40*time.Millisecond {
		t.Errorf("turn 1: delay %v, tool wait %v; want 250.5ms, 40ms", tu.Delay, tu.ToolWait)
	}
}

// TestAgentTraceRefused: every bad trace is refused naming its line and what is wrong.
func TestAgentTraceRefused(t *testing.T) {
	const (
		a0 = `{"session_id":"a","turn":0,"t":0,"input_tokens":10,"output_tokens":5}` + "\n"
		a1 = `{"session_id":"a","turn":1,"delay":1,"input_tokens":20,"output_tokens":5}` + "\n"
		b0 = `{"session_id":"b","parent_session_id":"a","turn":0,"delay":1,"input_tokens":10,"output_tokens":5}` + "\n"
	)
	for _, c := range []struct {
		name, in string
		line     int
		want     string
	}{
		{"cycle through a changed parent", a0 + b0 + `{"session_id":"a","parent_session_id":"b","turn":1,"input_tokens":20,"output_tokens":5}`, 3, "cycle in parent_session_id: a → b → a"},
		{"own parent", a0 + `{"session_id":"b","parent_session_id":"b","turn":0,"input_tokens":10,"output_tokens":5}`, 2, "cycle in parent_session_id: session \"b\" is its own parent"},
		{"turn before its parent exists", a0 + `{"session_id":"c","parent_session_id":"x","turn":0,"input_tokens":10,"output_tokens":5}`, 2, "a turn before its parent exists"},
		{"a job that starts with a sub-agent", b0, 1, `names parent_session_id "a", but no turn of it comes before this line`},
		{"negative delay", a0 + `{"session_id":"a","turn":1,"delay":-3,"input_tokens":20,"output_tokens":5}`, 2, "delay -3: want a number of milliseconds >= 0"},
		{"negative t", `{"session_id":"a","turn":0,"t":-1,"input_tokens":10,"output_tokens":5}`, 1, "t -1: want"},
		{"negative tool time", a0 + `{"session_id":"a","turn":1,"tool_call_ms":-1,"input_tokens":20,"output_tokens":5}`, 2, "tool_call_ms -1"},
		{"over the context", a0 + `{"session_id":"a","turn":1,"input_tokens":90,"output_tokens":20}`, 2, "input_tokens 90 + output_tokens 20 = 110 tokens, over the model's context of 100"},
		{"t on a later turn", a0 + `{"session_id":"a","turn":1,"t":5,"input_tokens":20,"output_tokens":5}`, 2, "only a job's first turn has t"},
		{"t going back", a0 + `{"session_id":"c","turn":0,"t":50,"input_tokens":10,"output_tokens":5}` + "\n" + `{"session_id":"d","turn":0,"t":20,"input_tokens":10,"output_tokens":5}`, 3, "before the previous job's 50 ms"},
		{"t and delay", `{"session_id":"a","turn":0,"t":1,"delay":1,"input_tokens":10,"output_tokens":5}`, 1, "t and delay both"},
		{"a turn skipped", a0 + `{"session_id":"a","turn":2,"input_tokens":20,"output_tokens":5}`, 2, "turn 2 after turn 0; want 1"},
		{"a sub-agent after its join", a0 + b0 + a1 + `{"session_id":"b","parent_session_id":"a","turn":1,"input_tokens":20,"output_tokens":5}`, 4, "comes after its parent \"a\"'s turn 1, which joins it"},
		{"a root session's later turn in another job", a0 + `{"session_id":"c","turn":0,"input_tokens":10,"output_tokens":5}` + "\n" + a1, 3, `session "a" has no parent_session_id and is not this job's root "c"`},
		{"no session id", `{"turn":0,"input_tokens":10}`, 1, "session_id is empty"},
		{"no input", `{"session_id":"a","turn":0,"input_tokens":0}`, 1, "input_tokens 0 < 1"},
		{"negative hash id", `{"session_id":"a","turn":0,"input_tokens":3,"hash_ids":[1,-2]}`, 1, "hash_ids[1] = -2 < 0"},
		{"not JSON", a0 + "\n\n{not json", 4, "invalid character"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAll(t, c.in, 100)
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v; want a *LineError", err)
			}
			if le.Line != c.line || !strings.Contains(le.Error(), c.want) {
				t.Errorf("error %q; want line %d saying %q", le.Error(), c.line, c.want)
			}
		})
	}
}

// TestAgentTraceLongLine: a line longer than the reader's buffer is read whole.
func TestAgentTraceLongLine(t *testing.T) {
	ids := strings.Repeat("7,", 40000) + "7"
	in := `{"session_id":"a","turn":0,"input_tokens":10,"hash_ids":[` + ids + `]}` + "\n"
	jobs, err := readAll(t, in, 0)
	if err != nil || len(jobs) != 1 || len(jobs[0].Root.Turns[0].HashIDs) != 40001 {
		t.Fatalf("jobs %v, err %v; want one job of 40001 hash ids", len(jobs), err)
	}
}

// TestAgentTraceStreams reads a trace of a million lines (short: 2,400) written as it
// is read, through a pipe, so the trace is never in memory whole: the jobs and lines
// all arrive, and the heap stays bounded by a job, not by the trace.
func TestAgentTraceStreams(t *testing.T) {
	spec := AgentTraceSpec{Turns: 20, FanOut: 4, FanOutEvery: 10, SubTurns: 1, Rate: 50,
		InputTokens: 300, GrowTokens: 30, OutputTokens: 20, BlockTokens: 64, SharedBlocks: 1, ThinkMS: 100, ToolMS: 200, ToolShare: 0.3, Seed: 7}
	perJob := spec.Turns + spec.FanOut*spec.SubTurns
	spec.Jobs = 100
	if !testing.Short() {
		testutil.Long(t)
		spec.Jobs = (1_000_000 + perJob - 1) / perJob
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(WriteAgentTrace(pw, spec)) }()
	a := NewAgentTrace(pr, 0)
	var jobs, lines int
	var peak, top uint64
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	for j, ok := a.Next(); ok; j, ok = a.Next() {
		jobs++
		lines += j.Requests()
		if jobs%max(1, spec.Jobs/20) == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc-min(ms.HeapAlloc, base))
			top = max(top, ms.HeapAlloc)
		}
	}
	if err := a.Err(); err != nil {
		t.Fatal(err)
	}
	if jobs != spec.Jobs || lines != spec.Jobs*perJob {
		t.Fatalf("%d jobs, %d lines; want %d, %d", jobs, lines, spec.Jobs, spec.Jobs*perJob)
	}
	t.Logf("%d lines in %d jobs; heap after a GC at 20 points at most %.2f MB, %.2f MB over the %.2f MB before", lines, jobs, float64(top)/(1<<20), float64(peak)/(1<<20), float64(base)/(1<<20))
	if peak > 16<<20 {
		t.Errorf("heap grew %.1f MB while streaming; want a job's worth, under 16 MB", float64(peak)/(1<<20))
	}
}

// TestBlockPromptsExact: prompts made of hash blocks are exactly their length even
// where the blocks' texts together tokenize to more tokens than they count apart (a
// merge or split where two blocks meet), which the sample must include: 2 of the first
// 1,500 triples do.
func TestBlockPromptsExact(t *testing.T) {
	tk := gpt2(t)
	bw := newBlockWriter(tk, 16, 3)
	over := 0
	for i := 190; i < 210; i++ { // block triple 196 overflows (seed 3, gpt2)
		ids := []int{0, 2*i + 1, 2*i + 2}
		if tk.Count(bw.block(ids[0])+bw.block(ids[1])+bw.block(ids[2]), false) > 48 {
			over++
		}
		if p, got := bw.prompt(ids, 48, uint64(i)); got != 48 || tk.Count(p, false) != 48 {
			t.Fatalf("ids %v: a prompt of %d tokens (re-encoded %d); want 48", ids, got, tk.Count(p, false))
		}
	}
	t.Logf("%d of 20 block triples tokenize to more than 48 tokens together", over)
	if over == 0 {
		t.Fatal("no block triple overflowed: the sample does not test the overflow")
	}
}
