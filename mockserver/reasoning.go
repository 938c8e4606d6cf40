package mockserver

import (
	"math/rand/v2"

	"github.com/perfgate/perfgate/distribution"
)

// ReasoningEffortTokens is AIPerf's mock-server rule for a request's reasoning_effort
// when reasoning is on ([Config.ReasoningTokens]): the reasoning tokens generated for
// "low", "medium" and "high".
var ReasoningEffortTokens = map[string]int{"low": 100, "medium": 250, "high": 500}

// lengths decides how long a generation is, from the configured distributions:
// Config.OSL for the content and Config.ReasoningTokens for the reasoning before it.
type lengths struct {
	osl, reasoning distribution.Spec
}

func newLengths(cfg *Config) lengths { return lengths{osl: cfg.OSL, reasoning: cfg.ReasoningTokens} }

// reasons reports whether the mock generates reasoning for requests of kind k: the
// kinds that reason (chat completions with delta.reasoning_content, Anthropic
// messages with thinking blocks), when Config.ReasoningTokens is set.
func (l lengths) reasons(k kind) bool {
	g, ok := k.(generative)
	return !l.reasoning.IsZero() && ok && g.reasons()
}

// reasoningTokens returns how many reasoning tokens j generates before its content:
// the reasoning_effort rule when the request sends one, else a draw from
// Config.ReasoningTokens; at most the output cap (reasoning counts toward max_tokens,
// as in vLLM) and, for Anthropic messages, the thinking budget.
func (l lengths) reasoningTokens(j *job, rng *rand.Rand) int {
	if !l.reasons(j.kind) {
		return 0
	}
	n, ok := ReasoningEffortTokens[j.effort]
	if !ok {
		d := distribution.Length{Dist: distribution.WithSrc(l.reasoning.Distribution, rngSource{rng}), Min: 0, Max: j.maxOut}
		n = d.Rand()
	}
	if j.thinkingBudget > 0 {
		n = min(n, j.thinkingBudget)
	}
	return min(max(n, 0), j.maxOut)
}

// output is the content length after reasoning tokens of reasoning, with them taken
// off the cap, and the finish reason.
func (l lengths) output(j *job, rng *rand.Rand, reasoning int) (int, string) {
	if reasoning == 0 {
		return l.content(j, rng)
	}
	left := j.maxOut - reasoning
	if left <= 0 {
		return 0, "length"
	}
	jj := *j
	jj.maxOut, jj.minTokens = left, min(j.minTokens, left)
	return l.content(&jj, rng)
}

// content applies the output-length rules: ignore_eos → exactly the cap; otherwise a
// draw from Config.OSL clamped to [min_tokens, cap] (the cap when OSL is unset).
func (l lengths) content(j *job, rng *rand.Rand) (int, string) {
	if j.ignoreEOS || l.osl.IsZero() {
		return j.maxOut, "length"
	}
	d := distribution.Length{Dist: distribution.WithSrc(l.osl.Distribution, rngSource{rng}), Min: j.minTokens, Max: j.maxOut}
	n := d.Rand()
	if n >= j.maxOut {
		return j.maxOut, "length"
	}
	return n, "stop"
}

// inReasoning reports whether the next token drawn is a reasoning token.
func (g *gen) inReasoning() bool { return g.i < g.reason }

// reasoningSent is the number of reasoning tokens drawn so far.
func (g *gen) reasoningSent() int { return min(g.i, g.reason) }
