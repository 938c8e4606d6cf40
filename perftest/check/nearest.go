package check

import (
	"slices"
	"strings"
)

// Nearest returns the candidate nearest to s by edit distance, if it is within a
// third of s's length (at least 2 edits), else "". For "did you mean" hints.
func Nearest(s string, candidates []string) string {
	best, bestD := "", max(2, len(s)/3)+1
	slices.Sort(candidates)
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
