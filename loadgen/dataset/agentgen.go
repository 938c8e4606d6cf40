package dataset

import (
	"bufio"
	"errors"
	"io"
	"math/rand/v2"
	"strconv"
)

// AgentTraceSpec describes a synthetic agent trace that [WriteAgentTrace] writes from
// a seed: Jobs jobs starting as a Poisson process of Rate jobs/s, each a root session
// of Turns turns; after every FanOutEvery-th root turn (but the last) FanOut
// sub-agents start, each of SubTurns turns, and the root's next turn joins them. A
// turn's input is its whole context: the session's first prompt (InputTokens; a
// sub-agent's, its parent's context plus GrowTokens), then for each later turn the
// previous answer (OutputTokens) and GrowTokens of new input (the user's or the tools'
// text), plus at a join every sub-agent's last answer. hash_ids name the context's
// blocks of BlockTokens: a session's turns share their growing prefix, a sub-agent
// shares its parent's, and every job shares its first SharedBlocks blocks (a system
// prompt). Delays (think time) and tool times are exponential with means ThinkMS and
// ToolMS; a turn after the first waits for a tool with probability ToolShare.
type AgentTraceSpec struct {
	Jobs, Turns                           int
	FanOut, FanOutEvery, SubTurns         int
	Rate                                  float64
	InputTokens, GrowTokens, OutputTokens int
	BlockTokens, SharedBlocks             int
	ThinkMS, ToolMS, ToolShare            float64
	Seed                                  uint64
}

// WriteAgentTrace writes the trace s describes to w as JSONL (docs/agents.md), the
// same bytes for the same s. Each job's lines come together, in the order its turns
// happen.
func WriteAgentTrace(w io.Writer, s AgentTraceSpec) error {
	if s.Jobs < 0 || s.Turns < 1 || s.FanOut < 0 || s.FanOutEvery < 0 || s.SubTurns < 0 || !(s.Rate > 0) ||
		s.InputTokens < 1 || s.GrowTokens < 0 || s.OutputTokens < 1 || s.BlockTokens < 1 || s.SharedBlocks < 0 {
		return errors.New("dataset: agent trace spec: want jobs >= 0, turns >= 1, rate > 0, input, output and block tokens >= 1, the rest >= 0")
	}
	g := &agentGen{s: s, rng: rand.New(rand.NewPCG(s.Seed, 0xa9e47)), bw: bufio.NewWriter(w), next: s.SharedBlocks}
	t := 0.0
	for j := range s.Jobs {
		t += g.rng.ExpFloat64() / s.Rate * 1000
		g.session("j"+strconv.Itoa(j), "", nil, 0, s.Turns, t)
	}
	return g.bw.Flush()
}

type agentGen struct {
	s    AgentTraceSpec
	rng  *rand.Rand
	bw   *bufio.Writer
	next int // the next fresh hash id
	buf  []byte
}

// agentCtx is a session's context: its full blocks' ids and the tokens after them.
type agentCtx struct {
	blocks []int
	tokens int
}

// grow adds n tokens to the context, naming the blocks they complete.
func (g *agentGen) grow(c *agentCtx, n int) {
	c.tokens += n
	for len(c.blocks) < c.tokens/g.s.BlockTokens {
		if len(c.blocks) < g.s.SharedBlocks {
			c.blocks = append(c.blocks, len(c.blocks)) // every job's shared prefix
			continue
		}
		c.blocks = append(c.blocks, g.next)
		g.next++
	}
}

// session writes a session of turns turns; parent's context (nil for a root) is
// where a sub-agent starts. It returns the last answer's length.
func (g *agentGen) session(id, parent string, from *agentCtx, ctxTokens, turns int, t float64) int {
	s := g.s
	c := &agentCtx{}
	if from != nil {
		c.blocks = append(c.blocks, from.blocks...)
		c.tokens = len(from.blocks) * s.BlockTokens // the parent's full blocks; its tail is not shared
		g.grow(c, ctxTokens-c.tokens+s.GrowTokens)
	} else {
		g.grow(c, s.InputTokens)
	}
	for k := range turns {
		var delay, tool float64
		if k > 0 {
			g.grow(c, s.OutputTokens+s.GrowTokens)
			if g.rng.Float64() < s.ToolShare {
				tool = g.rng.ExpFloat64() * s.ToolMS
			}
		}
		if k > 0 || parent != "" {
			delay = g.rng.ExpFloat64() * s.ThinkMS
		}
		g.line(id, parent, k, t, delay, tool, c, parent == "" && k == 0)
		if parent == "" && s.FanOut > 0 && s.FanOutEvery > 0 && (k+1)%s.FanOutEvery == 0 && k < turns-1 {
			answers := 0
			for a := range s.FanOut {
				answers += g.session(id+".a"+strconv.Itoa(k)+"."+strconv.Itoa(a), id, c, c.tokens+s.OutputTokens, s.SubTurns, 0)
			}
			g.grow(c, answers) // the join: their answers are in the next turn's input
		}
	}
	return s.OutputTokens
}

// line writes one line; the last hash id names the partial block, when there is one.
func (g *agentGen) line(id, parent string, turn int, t, delay, tool float64, c *agentCtx, first bool) {
	b := append(g.buf[:0], `{"session_id":`...)
	b = strconv.AppendQuote(b, id)
	if parent != "" {
		b = append(b, `,"parent_session_id":`...)
		b = strconv.AppendQuote(b, parent)
	}
	b = append(b, `,"turn":`...)
	b = strconv.AppendInt(b, int64(turn), 10)
	if first {
		b = append(b, `,"t":`...)
		b = strconv.AppendFloat(b, t, 'f', 1, 64)
	} else {
		b = append(b, `,"delay":`...)
		b = strconv.AppendFloat(b, delay, 'f', 1, 64)
	}
	b = append(b, `,"input_tokens":`...)
	b = strconv.AppendInt(b, int64(c.tokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(g.s.OutputTokens), 10)
	b = append(b, `,"hash_ids":[`...)
	for i, h := range c.blocks {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(h), 10)
	}
	if c.tokens%g.s.BlockTokens != 0 {
		if len(c.blocks) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(g.next), 10) // the partial block: this prompt's own
		g.next++
	}
	b = append(b, ']')
	if tool > 0 {
		b = append(b, `,"tool_call_ms":`...)
		b = strconv.AppendFloat(b, tool, 'f', 1, 64)
	}
	b = append(b, "}\n"...)
	g.bw.Write(b)
	g.buf = b
}
