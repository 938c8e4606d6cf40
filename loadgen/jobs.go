package loadgen

// Synthetic agent jobs (Workload.SubAgents): each synthetic conversation becomes a job
// whose turn SubAgentAfterTurn fans out to sub-agent sessions drawn from a second
// synthetic source, made as the job is drawn, so a run holds the jobs in flight,
// never a list of them.

import (
	"slices"
	"strconv"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/tokenizer"
)

// jobSeed is mixed into Workload.Seed for the sub-agents' source, so their prompts
// and lengths are their own stream, not the root sessions'.
const jobSeed = 0x5ab_a6e7

// jobSource makes each of root's conversations an agent job: after its turn after,
// fanOut sub-agent sessions drawn from sub (fresh contexts), joined by the next turn.
type jobSource struct {
	root, sub     dataset.Source
	fanOut, after int
}

// Next implements dataset.Source. The job's id is its root session's; a sub-agent's
// session is "ROOT.aI", I its place in the fan-out.
func (s *jobSource) Next() (dataset.Conversation, bool) {
	c, ok := s.root.Next()
	if !ok {
		return c, false
	}
	c.Job = c.ID
	if s.after >= len(c.Turns) {
		return c, true // a job shorter than the fan-out's turn has none
	}
	agents := make([]dataset.Conversation, s.fanOut)
	for i := range agents {
		a, ok := s.sub.Next()
		if !ok {
			return c, false
		}
		a.ID, a.Job = c.ID+".a"+strconv.Itoa(i), c.ID
		agents[i] = a
	}
	c.Turns = slices.Clone(c.Turns) // the turn gets its sub-agents; the source's stays as made
	c.Turns[s.after].Agents = agents
	return c, true
}

// newJobSource wraps the synthetic root source for cfg's sub-agents: theirs is
// cfg's synthetic workload with SubAgentTurns turns (zero = 1) and its own seed.
func newJobSource(root dataset.Source, cfg *Config, tok *tokenizer.Tokenizer, docs int) (dataset.Source, error) {
	sc := *cfg
	sc.Seed = cfg.Seed ^ jobSeed
	sc.Turns = distribution.Spec{Distribution: distribution.Fixed{Value: float64(max(cfg.SubAgentTurns, 1))}}
	sub, err := newSynthetic(&sc, tok, docs)
	if err != nil {
		return nil, err
	}
	return &jobSource{root: root, sub: sub, fanOut: cfg.SubAgents, after: cfg.SubAgentAfterTurn}, nil
}

// checkJobs checks the synthetic jobs' settings: counts >= 0, synthetic prompts,
// and a fan-out turn the jobs have.
func (c *Config) checkJobs(p *problems) {
	if c.SubAgents < 0 || c.SubAgentAfterTurn < 0 || c.SubAgentTurns < 0 {
		p.add("subagents %d, subagent_after_turn %d, subagent_turns %d: want >= 0", c.SubAgents, c.SubAgentAfterTurn, c.SubAgentTurns)
		return
	}
	if c.SubAgents == 0 {
		if c.SubAgentAfterTurn > 0 || c.SubAgentTurns > 0 {
			p.add("subagent_after_turn and subagent_turns need subagents >= 1")
		}
		return
	}
	if c.InputFile != "" || c.Corpus == CorpusVLLM {
		p.add("subagents need synthetic prompts (no input_file, corpus shakespeare or random): an agent trace carries its own sub-agents")
	}
	if f, ok := c.Turns.Distribution.(distribution.Fixed); ok && c.SubAgentAfterTurn >= int(f.Value) || c.Turns.Distribution == nil && c.SubAgentAfterTurn > 0 {
		turns := 1
		if ok {
			turns = int(f.Value)
		}
		p.add("subagent_after_turn %d: the jobs have %d turns (turns), counted from 0", c.SubAgentAfterTurn, turns)
	}
}
