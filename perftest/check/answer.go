package check

import (
	"fmt"
	"math"
)

// Mark is how perfgate marks a verdict on its own line: INCONCLUSIVE or INVALID for
// a verdict of that [Status] (whether or not it passes), else FAIL or PASS.
func (v Verdict) Mark() string {
	switch {
	case v.Status == Inconclusive:
		return "INCONCLUSIVE"
	case v.Status == Invalid:
		return "INVALID"
	case !v.Pass:
		return "FAIL"
	}
	return "PASS"
}

// Answer is the one-line answer of a run's assertions, as `perfgate profile` prints
// it under them and its markdown summary heads with it: "PASS: 3 assertion(s)" or
// "FAIL: 1 of 3 assertion(s)", with its mark (PASS or FAIL). No verdicts: PASS,
// "no assertions".
func Answer(vs []Verdict) (mark, text string) {
	failed := 0
	for _, v := range vs {
		if !v.Pass {
			failed++
		}
	}
	switch {
	case len(vs) == 0:
		return "PASS", "PASS: no assertions"
	case failed > 0:
		return "FAIL", fmt.Sprintf("FAIL: %d of %d assertion(s)", failed, len(vs))
	}
	return "PASS", fmt.Sprintf("PASS: %d assertion(s)", len(vs))
}

// Cells are the comparison as a summary table prints it, each side's value its runs'
// geometric mean in the comparison's unit, the change the ratio current/baseline less
// one, and the interval that ratio's, both as signed percentages ("" for what cannot
// be computed).
func (c Comparison) Cells() (baseline, current, change, interval string) {
	gm := func(xs []float64) string {
		l, bad := logs(xs, "")
		if bad != "" || len(l) == 0 {
			return ""
		}
		m, _ := meanVar(l)
		return c.Unit.Format(math.Exp(m))
	}
	baseline, current = gm(c.Baseline), gm(c.Current)
	if !math.IsNaN(c.Ratio) && c.Ratio > 0 {
		change = signedPct(c.Ratio - 1)
	}
	if !math.IsNaN(c.Low) && !math.IsNaN(c.High) {
		interval = "[" + signedPct(c.Low-1) + ", " + signedPct(c.High-1) + "]"
	}
	return baseline, current, change, interval
}
