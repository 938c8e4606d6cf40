package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/record"
)

// FinishKind maps a finish reason to "stop" (the model ended: OpenAI "stop", Anthropic
// "end_turn" or "stop_sequence") or "length" (the output cap ended it: OpenAI "length",
// Anthropic "max_tokens"); other reasons are returned as they are, "" as "none".
func FinishKind(reason string) string {
	switch reason {
	case "stop", "end_turn", "stop_sequence", "eos":
		return "stop"
	case "length", "max_tokens":
		return "length"
	case "":
		return "none"
	}
	return reason
}

// OSLEvidence explains an output-length fit from the client recording: how many
// successful measured requests ended with stop against length (finish_reason), how the
// client tokenizer's count of the text compares with the server's
// usage.completion_tokens, and what to change. fromUsage says whether the fitted
// lengths were the usage counts (--use-server-token-count).
func OSLEvidence(cs []record.Client, fromUsage bool) []Line {
	kinds := map[string]int{}
	var diffs []int
	n, noUsage := 0, 0
	for i := range cs {
		c := &cs[i]
		if c.Warmup || !c.OK() {
			continue
		}
		n++
		kinds[FinishKind(c.FinishReason)]++
		if c.UsageCompletionTokens < 0 {
			noUsage++
			continue
		}
		diffs = append(diffs, c.OSL-c.UsageCompletionTokens)
	}
	if n == 0 {
		return nil
	}
	var parts []string
	for _, k := range []string{"stop", "length"} {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	var others []string
	for k := range kinds {
		if k != "stop" && k != "length" {
			others = append(others, k)
		}
	}
	sort.Strings(others)
	for _, k := range others {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	lines := []Line{{"finish", fmt.Sprintf("%s (of %d requests, by finish_reason)", strings.Join(parts, ", "), n)}}
	differ := 0
	if len(diffs) == 0 {
		lines = append(lines, Line{"client vs usage", "the server sent no usage.completion_tokens to compare with"})
	} else {
		for _, d := range diffs {
			if d != 0 {
				differ++
			}
		}
		slices.Sort(diffs)
		text := fmt.Sprintf("client count − usage.completion_tokens: min %+d, median %+d, max %+d; %d of %d differ",
			diffs[0], diffs[len(diffs)/2], diffs[len(diffs)-1], differ, len(diffs))
		if noUsage > 0 {
			text += fmt.Sprintf(" (%d without usage)", noUsage)
		}
		lines = append(lines, Line{"client vs usage", text})
	}
	var hints []string
	if kinds["stop"] > 0 {
		hints = append(hints, fmt.Sprintf("%d requests stopped before their cap: send --ignore-eos (or min_tokens = the cap) so the server generates the length asked for", kinds["stop"]))
	}
	if differ > 0 && !fromUsage {
		hints = append(hints, "the client tokenizer counts the server's text differently: use the server's tokenizer (--tokenizer) or --use-server-token-count")
	}
	if len(hints) > 0 {
		lines = append(lines, Line{"hint", strings.Join(hints, "\n")})
	}
	return lines
}
