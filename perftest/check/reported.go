package check

import "fmt"

// Reported renders the comparison of a statistic that is reported, not gating: its
// change and interval, with no threshold and no pass or fail language (nothing is
// wanted of it). The verdict passes, Status [Decided]; its evidence is the
// comparison's without the gate's rule.
func (c Comparison) Reported() Verdict {
	const check = "regression"
	if c.Invalid != "" {
		v := invalid(check, "%s: %s", c.Metric, c.Invalid)
		v.Summary = fmt.Sprintf("%s: not compared: %s", c.Metric, c.Invalid)
		v.Pass = true
		return v
	}
	v := Verdict{Check: check, Pass: true, Value: c.Ratio - 1, Unit: Fraction}
	v.Summary = fmt.Sprintf("%s %s vs baseline (%s, %s)", c.Metric, signedPct(c.Ratio-1), c.intervalText(), c.runsText())
	for _, l := range c.evidence() {
		if l.Label != "rule" {
			v.Evidence = append(v.Evidence, l)
		}
	}
	return v
}
