package mockserver

import (
	"math/rand/v2"

	"github.com/perfgate/perfgate/distribution"
)

// ReasoningEffortTokens is AIPerf's mock-server rule for a request's reasoning_effort
// when reasoning is on ([Config.ReasoningTokens]): the reasoning tokens generated for
// "low", "medium" and "high".
var ReasoningEffortTokens = map[string]int{"low": 100, "medium": 250, "high": 500}

// reasoningEnabled reports whether the mock generates reasoning for requests of kind k:
// the kinds that reason (chat completions with delta.reasoning_content, Anthropic
// messages with thinking blocks), when Config.ReasoningTokens is set.
func (s *Server) reasoningEnabled(k kind) bool {
	g, ok := k.(generative)
	return !s.cfg.ReasoningTokens.IsZero() && ok && g.reasons()
}

// decideReasoning returns how many reasoning tokens j generates before its content:
// the reasoning_effort rule when the request sends one, else a draw from
// Config.ReasoningTokens; at most the output cap (reasoning counts toward max_tokens,
// as in vLLM) and, for Anthropic messages, the thinking budget.
func (s *Server) decideReasoning(j *job, rng *rand.Rand) int {
	if !s.reasoningEnabled(j.kind) {
		return 0
	}
	n, ok := ReasoningEffortTokens[j.effort]
	if !ok {
		l := distribution.Length{Dist: distribution.WithSrc(s.cfg.ReasoningTokens.Distribution, rngSource{rng}), Min: 0, Max: j.maxOut}
		n = l.Rand()
	}
	if j.thinkingBudget > 0 {
		n = min(n, j.thinkingBudget)
	}
	return min(max(n, 0), j.maxOut)
}

// decideOutput is decideOSL after reasoning: the content length, with the reasoning
// tokens taken off the cap, and the finish reason.
func (s *Server) decideOutput(j *job, rng *rand.Rand, reasoning int) (int, string) {
	if reasoning == 0 {
		return s.decideOSL(j, rng)
	}
	left := j.maxOut - reasoning
	if left <= 0 {
		return 0, "length"
	}
	jj := *j
	jj.maxOut, jj.minTokens = left, min(j.minTokens, left)
	return s.decideOSL(&jj, rng)
}

// inReasoning reports whether the next token drawn is a reasoning token.
func (g *gen) inReasoning() bool { return g.i < g.reason }

// reasoningSent is the number of reasoning tokens drawn so far.
func (g *gen) reasoningSent() int { return min(g.i, g.reason) }
