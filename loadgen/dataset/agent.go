package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// AgentLine is one line of an agent trace (JSONL, docs/agents.md): one request, turn
// Turn of session SessionID. Times are milliseconds.
type AgentLine struct {
	// SessionID names the session (a sequence of turns); ParentSessionID, when set,
	// names the session that started this one as a sub-agent.
	SessionID       string `json:"session_id"`
	ParentSessionID string `json:"parent_session_id,omitempty"`
	// Turn is the turn's 0-based index in its session.
	Turn int `json:"turn"`
	// T is the start of a job (a root session's first turn) in ms since the trace's
	// start; Delay is the think time in ms after the previous turn's answer (for a
	// sub-agent's first turn, after its parent's turn that started it; for a root
	// session's first turn, after the previous job's start). One or neither.
	T     *float64 `json:"t,omitempty"`
	Delay *float64 `json:"delay,omitempty"`
	// InputTokens is the turn's whole prompt, context included; OutputTokens the
	// answer's length asked for.
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// HashIDs name the prompt's blocks, as a mooncake trace's: equal ids, equal text.
	HashIDs []int `json:"hash_ids,omitempty"`
	// ToolCallMS is how long the tools the previous turn called ran: the turn waits
	// for them, then for Delay.
	ToolCallMS float64 `json:"tool_call_ms,omitempty"`
}

// AgentJob is one job of an agent trace: a root session and the sub-agent sessions
// under it.
type AgentJob struct {
	// ID is the root session's id; Line its first line (1-based).
	ID   string
	Line int
	// At is the job's start relative to the trace's start (t).
	At   time.Duration
	Root *AgentSession
}

// AgentSession is a session of a job: its turns, in order.
type AgentSession struct {
	ID, Parent string
	// After is the parent's turn after which the session starts (-1 for the root).
	After int
	Turns []AgentTurn
}

// AgentTurn is one request of a session.
type AgentTurn struct {
	Line                      int // its line in the trace (1-based)
	InputTokens, OutputTokens int
	HashIDs                   []int
	// Delay is the think time and ToolWait the tool time waited before the turn is
	// sent, after the previous turn's answer (a sub-agent's first turn: after its
	// parent's turn After).
	Delay, ToolWait time.Duration
	// Agents are the sub-agent sessions started after this turn's answer: they run in
	// parallel, and the session's next turn (or, after its last, the session's end)
	// waits for all of them.
	Agents []*AgentSession
}

// Requests is the number of turns in the job, sub-agents included.
func (j *AgentJob) Requests() int { return j.Root.requests() }

// Sessions is the number of sessions in the job, the root included.
func (j *AgentJob) Sessions() int { return j.Root.sessions() }

func (s *AgentSession) requests() int {
	n := len(s.Turns)
	for _, t := range s.Turns {
		for _, a := range t.Agents {
			n += a.requests()
		}
	}
	return n
}

func (s *AgentSession) sessions() int {
	n := 1
	for _, t := range s.Turns {
		for _, a := range t.Agents {
			n += a.sessions()
		}
	}
	return n
}

// AgentTrace reads an agent trace one job at a time (see [NewAgentTrace]). Not safe
// for concurrent use.
type AgentTrace struct {
	br       *bufio.Reader
	line     int
	maxCtx   int
	pending  *AgentLine // a root line read ahead: the next job's first
	pendLine int
	lastT    float64 // the previous job's start, ms
	jobs     int
	err      error
	long     []byte
}

// NewAgentTrace reads the agent trace r as it is drawn ([AgentTrace.Next]): a job is
// returned when the next job's first line (or the end) is read, so memory holds one
// job, never the trace. maxContext bounds input_tokens + output_tokens of every line
// (the model's context); <= 0: no bound.
//
// The lines of a job come together: its root session's first line (no
// parent_session_id, turn 0), then its turns and those of its sub-agents in the order
// they happen. Jobs are in order of t. A sub-agent session starts after the parent's
// turn read last before the sub-agent's first line, and is joined before the parent's
// next turn. Refused, with the line (a [*LineError]): a line that is not a JSON object
// of the fields; an empty session_id; a turn out of order; a parent_session_id
// naming no session of the job read so far (a turn before its parent exists), the
// session itself, or a chain of parents that comes back to it (a cycle); a sub-agent
// turn after its parent moved on past the join; t on a turn other than a job's first,
// t and delay both, t before the previous job's; a negative t, delay or tool_call_ms;
// input_tokens below 1, output_tokens below 0 or their sum over maxContext; a negative
// hash id.
func NewAgentTrace(r io.Reader, maxContext int) *AgentTrace {
	return &AgentTrace{br: bufio.NewReaderSize(r, 64<<10), maxCtx: maxContext}
}

// Err is the error that ended the trace early (a bad line, as a [*LineError]; a read
// error), or nil after a clean end.
func (a *AgentTrace) Err() error { return a.err }

// Jobs is the number of jobs returned so far.
func (a *AgentTrace) Jobs() int { return a.jobs }

// Next returns the next job; false at the end of the trace or on the first error
// (see Err). Nothing of a job with a bad line is returned.
func (a *AgentTrace) Next() (*AgentJob, bool) {
	if a.err != nil {
		return nil, false
	}
	first, n := a.pending, a.pendLine
	a.pending = nil
	if first == nil {
		l, ln, err := a.read()
		if err != nil {
			a.fail(err)
			return nil, false
		}
		if l == nil {
			return nil, false
		}
		first, n = l, ln
	}
	b := &jobBuilder{maxCtx: a.maxCtx, sessions: map[string]*builtSession{}}
	job, err := b.start(first, n, a.lastT)
	if err != nil {
		a.fail(&LineError{Line: n, Err: err})
		return nil, false
	}
	for {
		l, ln, err := a.read()
		if err != nil {
			a.fail(err)
			return nil, false
		}
		if l == nil {
			break
		}
		if l.ParentSessionID == "" && l.Turn == 0 && b.sessions[l.SessionID] == nil {
			a.pending, a.pendLine = l, ln // the next job's
			break
		}
		if err := b.add(l, ln); err != nil {
			a.fail(&LineError{Line: ln, Err: err})
			return nil, false
		}
	}
	a.lastT = b.atMS
	a.jobs++
	return job, true
}

func (a *AgentTrace) fail(err error) { a.err = err }

// read decodes the next non-blank line; nil at the end.
func (a *AgentTrace) read() (*AgentLine, int, error) {
	for {
		b, err := a.readLine()
		if len(b) == 0 && err == io.EOF {
			return nil, 0, nil
		}
		if err != nil && err != io.EOF {
			return nil, 0, fmt.Errorf("dataset: agent trace: read: line %d: %w", a.line+1, err)
		}
		a.line++
		if t := bytes.TrimSpace(b); len(t) > 0 {
			l, derr := decodeAgentLine(t)
			if derr != nil {
				return nil, 0, &LineError{Line: a.line, Err: derr}
			}
			return l, a.line, nil
		}
		if err == io.EOF {
			return nil, 0, nil
		}
	}
}

// readLine returns the next line (any length), valid until the next call.
func (a *AgentTrace) readLine() ([]byte, error) {
	a.long = a.long[:0]
	for {
		b, err := a.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			a.long = append(a.long, b...)
			continue
		}
		if len(a.long) > 0 {
			a.long = append(a.long, b...)
			b = a.long
		}
		return b, err
	}
}

// decodeAgentLine reads one line's JSON object and checks its own fields.
func decodeAgentLine(b []byte) (*AgentLine, error) {
	var l AgentLine
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, err
	}
	switch {
	case l.SessionID == "":
		return nil, errors.New("session_id is empty or missing")
	case l.Turn < 0:
		return nil, fmt.Errorf("turn %d < 0", l.Turn)
	case l.T != nil && l.Delay != nil:
		return nil, errors.New("t and delay both given: a turn has one or the other")
	case l.InputTokens < 1:
		return nil, fmt.Errorf("input_tokens %d < 1", l.InputTokens)
	case l.OutputTokens < 0:
		return nil, fmt.Errorf("output_tokens %d < 0", l.OutputTokens)
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"t", l.T}, {"delay", l.Delay}, {"tool_call_ms", &l.ToolCallMS}} {
		if f.v != nil && (*f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0) || *f.v > maxAgentMS) {
			return nil, fmt.Errorf("%s %v: want a number of milliseconds >= 0 (at most %g)", f.name, *f.v, maxAgentMS)
		}
	}
	for i, h := range l.HashIDs {
		if h < 0 {
			return nil, fmt.Errorf("hash_ids[%d] = %d < 0", i, h)
		}
	}
	return &l, nil
}

// maxAgentMS bounds a time of the trace and a job's start (about 3 years), so a
// duration never overflows.
const maxAgentMS = 1e11

// ms converts milliseconds to a duration.
func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// jobBuilder assembles one job from its lines.
type jobBuilder struct {
	maxCtx   int
	atMS     float64 // the job's start, ms (as the trace wrote it, for the next job's check)
	job      *AgentJob
	sessions map[string]*builtSession
}

type builtSession struct {
	s      *AgentSession
	parent *builtSession
	joined bool // its parent has moved past the join
}

func (b *jobBuilder) checkContext(l *AgentLine) error {
	if b.maxCtx > 0 && l.InputTokens+l.OutputTokens > b.maxCtx {
		return fmt.Errorf("input_tokens %d + output_tokens %d = %d tokens, over the model's context of %d",
			l.InputTokens, l.OutputTokens, l.InputTokens+l.OutputTokens, b.maxCtx)
	}
	return nil
}

func (b *jobBuilder) turn(l *AgentLine, line int) AgentTurn {
	t := AgentTurn{Line: line, InputTokens: l.InputTokens, OutputTokens: l.OutputTokens, HashIDs: l.HashIDs, ToolWait: ms(l.ToolCallMS)}
	if l.Delay != nil {
		t.Delay = ms(*l.Delay)
	}
	return t
}

// start begins a job at its root session's first line; lastT is the previous job's t.
func (b *jobBuilder) start(l *AgentLine, line int, lastT float64) (*AgentJob, error) {
	switch {
	case l.ParentSessionID != "":
		return nil, fmt.Errorf("session %q names parent_session_id %q, but no turn of it comes before this line (a job's lines come together, its root session's first)", l.SessionID, l.ParentSessionID)
	case l.Turn != 0:
		return nil, fmt.Errorf("session %q starts at turn %d; want 0 (a job's lines come together, each session's turns in order)", l.SessionID, l.Turn)
	}
	if err := b.checkContext(l); err != nil {
		return nil, err
	}
	at := lastT
	switch {
	case l.T != nil:
		if *l.T < lastT {
			return nil, fmt.Errorf("t %v ms is before the previous job's %v ms (jobs come in order of t)", *l.T, lastT)
		}
		at = *l.T
	case l.Delay != nil:
		at += *l.Delay
	}
	if at > maxAgentMS {
		return nil, fmt.Errorf("the job starts %v ms after the trace's start; want at most %g", at, maxAgentMS)
	}
	t := b.turn(l, line)
	t.Delay = 0 // a job's start is At
	root := &AgentSession{ID: l.SessionID, After: -1, Turns: []AgentTurn{t}}
	b.atMS = at
	b.job = &AgentJob{ID: l.SessionID, Line: line, At: ms(at), Root: root}
	b.sessions[l.SessionID] = &builtSession{s: root}
	return b.job, nil
}

// add places a line of the job after its first.
func (b *jobBuilder) add(l *AgentLine, line int) error {
	if err := b.checkContext(l); err != nil {
		return err
	}
	if l.T != nil {
		return fmt.Errorf("t on turn %d of session %q: only a job's first turn has t; later turns give delay (ms after the previous answer)", l.Turn, l.SessionID)
	}
	bs := b.sessions[l.SessionID]
	if bs == nil {
		return b.startSub(l, line)
	}
	s := bs.s
	if l.ParentSessionID != s.Parent {
		if err := b.cycle(l.SessionID, l.ParentSessionID); err != nil {
			return err
		}
		return fmt.Errorf("session %q: parent_session_id %q, but its earlier lines say %q", l.SessionID, l.ParentSessionID, s.Parent)
	}
	if l.Turn != len(s.Turns) {
		return fmt.Errorf("session %q: turn %d after turn %d; want %d (each session's turns in order, from 0)", l.SessionID, l.Turn, len(s.Turns)-1, len(s.Turns))
	}
	if bs.joined {
		return fmt.Errorf("session %q: turn %d comes after its parent %q's turn %d, which joins it; a sub-agent's turns come before its parent's next turn",
			l.SessionID, l.Turn, s.Parent, s.After+1)
	}
	// This turn joins every sub-agent started after the previous one.
	for _, a := range s.Turns[len(s.Turns)-1].Agents {
		b.join(b.sessions[a.ID])
	}
	s.Turns = append(s.Turns, b.turn(l, line))
	return nil
}

// join marks bs joined, and the sub-agents started after its last turn, which its
// end joins.
func (b *jobBuilder) join(bs *builtSession) {
	bs.joined = true
	for _, a := range bs.s.Turns[len(bs.s.Turns)-1].Agents {
		b.join(b.sessions[a.ID])
	}
}

// startSub begins a sub-agent session at its first line.
func (b *jobBuilder) startSub(l *AgentLine, line int) error {
	switch {
	case l.ParentSessionID == "":
		return fmt.Errorf("session %q has no parent_session_id and is not this job's root %q: a job's lines come together (turn %d)", l.SessionID, b.job.ID, l.Turn)
	case l.ParentSessionID == l.SessionID:
		return fmt.Errorf("cycle in parent_session_id: session %q is its own parent", l.SessionID)
	case l.Turn != 0:
		return fmt.Errorf("session %q starts at turn %d; want 0 (each session's turns in order, from 0)", l.SessionID, l.Turn)
	}
	p := b.sessions[l.ParentSessionID]
	if p == nil {
		return fmt.Errorf("session %q: parent_session_id %q names no session with a turn before this line (a turn before its parent exists)", l.SessionID, l.ParentSessionID)
	}
	if p.joined {
		return fmt.Errorf("session %q: its parent %q was already joined by its own parent, so it can start no sub-agent", l.SessionID, l.ParentSessionID)
	}
	k := len(p.s.Turns) - 1
	s := &AgentSession{ID: l.SessionID, Parent: l.ParentSessionID, After: k, Turns: []AgentTurn{b.turn(l, line)}}
	p.s.Turns[k].Agents = append(p.s.Turns[k].Agents, s)
	b.sessions[l.SessionID] = &builtSession{s: s, parent: p}
	return nil
}

// cycle reports a cycle when session id would get parent as its parent.
func (b *jobBuilder) cycle(id, parent string) error {
	chain := []string{id}
	for p := b.sessions[parent]; p != nil; p = p.parent {
		chain = append(chain, p.s.ID)
		if p.s.ID == id {
			return fmt.Errorf("cycle in parent_session_id: %s", strings.Join(chain, " → "))
		}
	}
	return nil
}
