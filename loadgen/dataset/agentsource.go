package dataset

import (
	"errors"
	"io"
	"strings"
	"time"

	"github.com/perfgate/perfgate/tokenizer"
)

// AgentOptions are how an agent trace is replayed ([NewAgentSource]).
type AgentOptions struct {
	// BlockTokens is the token count of one hash block (> 0).
	BlockTokens int
	// MaxContext bounds every turn's input_tokens + output_tokens; <= 0: no bound.
	MaxContext int
	// SampleRatio keeps this fraction of the jobs, chosen by Seed and each job's place
	// in the trace (AIPerf's --trace-session-sample-ratio); 0 or 1 keeps every job.
	SampleRatio float64
	// Speedup divides every time of the trace (job starts, think and tool times);
	// 0 = 1.
	Speedup float64
	// MaxIdleGap, when > 0, caps each wait of the trace (a think time plus a tool
	// time, a gap between job starts) after Speedup (AIPerf's
	// --max-idle-gap-cap-seconds).
	MaxIdleGap time.Duration
	// Seed seeds the prompts' text and the sample.
	Seed uint64
}

// AgentSource is a [Source] of an agent trace's jobs: each job a [Conversation] (the
// root session) whose turns carry their sub-agent sessions ([Turn.Agents]). A turn's
// prompt is made when its job is drawn, exactly input_tokens long where possible, from
// the text blocks its hash_ids name (equal ids, equal text, so the prefix cache sees
// the trace's reuse) and text of its own after them; it is the turn's whole context
// ([Conversation.Whole]). The trace is read as it is drawn ([NewAgentTrace]): a bad
// line ends the source, and Err says which. Not safe for concurrent use.
type AgentSource struct {
	trace *AgentTrace
	opt   AgentOptions
	tok   *tokenizer.Tokenizer
	bw    *blockWriter
	index int // jobs read, kept or not
	prev  time.Duration
	at    time.Duration // the replayed start of the last job kept
}

// NewAgentSource returns the source over the agent trace r.
func NewAgentSource(r io.Reader, tok *tokenizer.Tokenizer, opt AgentOptions) (*AgentSource, error) {
	if tok == nil {
		return nil, errors.New("agent traces need a tokenizer")
	}
	if opt.BlockTokens <= 0 {
		return nil, errors.New("block tokens must be > 0")
	}
	if opt.SampleRatio < 0 || opt.SampleRatio > 1 {
		return nil, errors.New("sample ratio must be in [0, 1]")
	}
	return &AgentSource{trace: NewAgentTrace(r, opt.MaxContext), opt: opt, tok: tok, bw: newBlockWriter(tok, opt.BlockTokens, opt.Seed)}, nil
}

// Err is the error that ended the source early (a bad line: a [*LineError]).
func (s *AgentSource) Err() error { return s.trace.Err() }

// NextJob returns the next job kept by the sample, as read, with its replayed start
// (the trace's t divided by Speedup, gaps capped by MaxIdleGap); false at the end.
func (s *AgentSource) NextJob() (*AgentJob, time.Duration, bool) {
	for {
		j, ok := s.trace.Next()
		if !ok {
			return nil, 0, false
		}
		i := s.index
		s.index++
		if i == 0 {
			s.prev = j.At // the schedule starts at the first job
		}
		gap := s.opt.scale(j.At - s.prev)
		s.prev = j.At
		if !s.opt.keep(i) {
			continue // its gap still passes: the kept jobs keep their places in time
		}
		s.at += gap
		return j, s.at, true
	}
}

// keep reports whether job i is in the sample: a hash of (Seed, i) below the ratio.
func (o *AgentOptions) keep(i int) bool {
	if o.SampleRatio == 0 || o.SampleRatio >= 1 {
		return true
	}
	h := splitmix(o.Seed ^ 0x5a5a ^ uint64(i)*0x9e3779b97f4a7c15)
	return float64(h>>11)/(1<<53) < o.SampleRatio
}

// scale divides a wait of the trace by Speedup and caps it at MaxIdleGap.
func (o *AgentOptions) scale(d time.Duration) time.Duration {
	if o.Speedup > 0 {
		d = time.Duration(float64(d) / o.Speedup)
	}
	if o.MaxIdleGap > 0 {
		d = min(d, o.MaxIdleGap)
	}
	return d
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Next implements [Source]: the next job as a conversation, At its replayed start.
func (s *AgentSource) Next() (Conversation, bool) {
	j, at, ok := s.NextJob()
	if !ok {
		return Conversation{}, false
	}
	c := s.session(j.Root, j.ID)
	c.At = at
	return c, true
}

// Offsets reads the rest of the trace from r (a second reader of the same file) and
// returns the replayed start of every job the sample keeps, for a fixed schedule:
// 8 bytes a job. Prompts are not made.
func (o AgentOptions) Offsets(r io.Reader) ([]time.Duration, error) {
	s := &AgentSource{trace: NewAgentTrace(r, o.MaxContext), opt: o}
	var offs []time.Duration
	for {
		_, at, ok := s.NextJob()
		if !ok {
			return offs, s.Err()
		}
		offs = append(offs, at)
	}
}

// session makes a session's conversation: its turns' prompts and their sub-agents.
func (s *AgentSource) session(a *AgentSession, job string) Conversation {
	c := Conversation{ID: a.ID, Job: job, At: -1, Whole: true, Turns: make([]Turn, len(a.Turns))}
	for k := range a.Turns {
		at := &a.Turns[k]
		prompt, got := s.bw.prompt(at.HashIDs, at.InputTokens, uint64(at.Line))
		t := Turn{Prompt: prompt, ISL: got, RequestedISL: at.InputTokens, Exact: got == at.InputTokens, OSL: at.OutputTokens}
		wait := s.opt.scale(at.Delay + at.ToolWait)
		if at.Delay+at.ToolWait > 0 {
			// The capped wait, split between think and tool time as the trace's.
			t.ToolWait = time.Duration(float64(wait) * float64(at.ToolWait) / float64(at.Delay+at.ToolWait))
			t.Delay = wait - t.ToolWait
		}
		for _, sub := range at.Agents {
			t.Agents = append(t.Agents, s.session(sub, job))
		}
		c.Turns[k] = t
	}
	return c
}

// blockWriter makes prompts from hash blocks (a mooncake trace's, an agent trace's):
// block h's text is the same wherever it appears, so prompts sharing leading ids share
// a text prefix; the rest of a prompt, to its exact length, is its own.
type blockWriter struct {
	tok         *tokenizer.Tokenizer
	blockTokens int
	seed        uint64
	blocks      map[int]string // block texts by hash id; bounded (see maxBlocks)
}

func newBlockWriter(tok *tokenizer.Tokenizer, blockTokens int, seed uint64) *blockWriter {
	return &blockWriter{tok: tok, blockTokens: blockTokens, seed: seed, blocks: map[int]string{}}
}

// block is hash id h's text.
func (b *blockWriter) block(id int) string {
	if s, ok := b.blocks[id]; ok {
		return s
	}
	if len(b.blocks) >= maxBlocks {
		clear(b.blocks)
	}
	w, _ := NewWriter(b.tok, StyleShakespeare, b.seed^uint64(id)*0x9e3779b97f4a7c15)
	s, _ := w.Text("", b.blockTokens)
	b.blocks[id] = s
	return s
}

// prompt is the prompt of n tokens whose whole blocks are ids' (see
// [MooncakeRow.FullBlocks]), the rest written by a writer seeded by own: the text and
// its token count. Where the blocks' texts together tokenize to more than n tokens
// (tokens merge or split where two blocks meet), or the writer cannot make the rest
// exact after them, the last block is left to the writer, then the one before, until
// the prompt is exact: it shares a shorter prefix then. Failing that, the first try.
func (b *blockWriter) prompt(ids []int, n int, own uint64) (string, int) {
	row := MooncakeRow{InputLength: n, HashIDs: ids}
	var first string
	firstGot := -1
	for full := row.FullBlocks(b.blockTokens); full >= 0; full-- {
		var sb strings.Builder
		for _, id := range ids[:full] {
			sb.WriteString(b.block(id))
		}
		prompt, got := sb.String(), 0
		if prompt != "" {
			got = b.tok.Count(prompt, false)
		}
		if got > n && full > 0 {
			continue
		}
		if got != n {
			tail, _ := NewWriter(b.tok, StyleShakespeare, b.seed^own*0xbf58476d1ce4e5b9)
			prompt, got = tail.Text(prompt, n)
		}
		if got == n {
			return prompt, got
		}
		if firstGot < 0 {
			first, firstGot = prompt, got
		}
	}
	return first, firstGot
}

var _ Source = (*AgentSource)(nil)
