package dataset

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzAgentTrace: any input either fails naming a line, or gives jobs holding every
// line once, in file order within each session, with no negative time, no turn over
// the context, and every sub-agent starting after a turn its parent has.
func FuzzAgentTrace(f *testing.F) {
	f.Add(`{"session_id":"a","turn":0,"t":0,"input_tokens":10,"output_tokens":5,"hash_ids":[0,1]}`+"\n"+
		`{"session_id":"b","parent_session_id":"a","turn":0,"delay":1,"input_tokens":10,"output_tokens":5}`+"\n"+
		`{"session_id":"a","turn":1,"delay":2,"tool_call_ms":3,"input_tokens":30,"output_tokens":5}`, 100)
	f.Add(`{"session_id":"a","turn":0,"input_tokens":10}`+"\n\n"+`{"session_id":"c","turn":0,"delay":4,"input_tokens":1}`, 0)
	f.Add(`{"session_id":"a","turn":0,"input_tokens":10}`+"\n"+`{"session_id":"b","parent_session_id":"b","turn":0,"input_tokens":1}`, 0)
	f.Add(`{"session_id":"a","turn":0,"t":-1,"input_tokens":10}`, 0)
	f.Add("not json", 1)
	var small bytes.Buffer
	_ = WriteAgentTrace(&small, AgentTraceSpec{Jobs: 2, Turns: 3, FanOut: 2, FanOutEvery: 1, SubTurns: 2, Rate: 1,
		InputTokens: 20, GrowTokens: 5, OutputTokens: 4, BlockTokens: 8, SharedBlocks: 1, ThinkMS: 10, ToolMS: 10, ToolShare: 0.5, Seed: 1})
	f.Add(small.String(), 64)
	f.Fuzz(func(t *testing.T, in string, maxCtx int) {
		a := NewAgentTrace(strings.NewReader(in), maxCtx)
		lines := 0
		for j, ok := a.Next(); ok; j, ok = a.Next() {
			lines += j.Requests()
			if j.At < 0 || j.Root.After != -1 || j.Root.ID != j.ID {
				t.Fatalf("job %+v", j)
			}
			checkSession(t, j.Root, maxCtx)
		}
		err := a.Err()
		var le *LineError
		if err != nil && !errors.As(err, &le) {
			t.Fatalf("error %v names no line", err)
		}
		if err == nil {
			n := 0
			for _, l := range strings.Split(in, "\n") {
				if strings.TrimSpace(l) != "" {
					n++
				}
			}
			if n != lines {
				t.Fatalf("%d non-blank lines, %d requests in the jobs", n, lines)
			}
		}
	})
}

func checkSession(t *testing.T, s *AgentSession, maxCtx int) {
	prev := 0
	for k, tu := range s.Turns {
		if tu.Line <= prev || tu.Delay < 0 || tu.ToolWait < 0 || tu.InputTokens < 1 || tu.OutputTokens < 0 ||
			maxCtx > 0 && tu.InputTokens+tu.OutputTokens > maxCtx {
			t.Fatalf("session %s turn %d: %+v", s.ID, k, tu)
		}
		prev = tu.Line
		for _, a := range tu.Agents {
			if a.Parent != s.ID || a.After != k || a.Turns[0].Line <= tu.Line {
				t.Fatalf("sub-agent %s of %s after turn %d: %+v", a.ID, s.ID, k, a)
			}
			checkSession(t, a, maxCtx)
		}
	}
}
