package check

import (
	"math"
	"testing"
)

// Mark names a verdict's kind before its outcome: inconclusive and invalid verdicts
// are marked so even when they pass.
func TestVerdictMark(t *testing.T) {
	for _, c := range []struct {
		v    Verdict
		want string
	}{
		{Verdict{Pass: true}, "PASS"},
		{Verdict{}, "FAIL"},
		{Verdict{Pass: true, Status: Inconclusive}, "INCONCLUSIVE"},
		{Verdict{Status: Inconclusive}, "INCONCLUSIVE"},
		{Verdict{Pass: true, Status: Invalid}, "INVALID"},
	} {
		if got := c.v.Mark(); got != c.want {
			t.Errorf("%+v.Mark() = %q, want %q", c.v, got, c.want)
		}
	}
}

// Answer counts the failing verdicts, as the console's last line says.
func TestAnswer(t *testing.T) {
	pass, fail := Verdict{Pass: true}, Verdict{}
	for _, c := range []struct {
		vs         []Verdict
		mark, text string
	}{
		{nil, "PASS", "PASS: no assertions"},
		{[]Verdict{pass, pass, pass}, "PASS", "PASS: 3 assertion(s)"},
		{[]Verdict{pass, fail, fail}, "FAIL", "FAIL: 2 of 3 assertion(s)"},
	} {
		if mark, text := Answer(c.vs); mark != c.mark || text != c.text {
			t.Errorf("Answer(%d verdicts) = %q, %q; want %q, %q", len(c.vs), mark, text, c.mark, c.text)
		}
	}
}

// Cells shows each side's geometric mean in the unit, the change and the interval as
// signed percentages, and nothing for what cannot be computed.
func TestComparisonCells(t *testing.T) {
	c := Comparison{Unit: Seconds, Baseline: []float64{0.02, 0.08}, Current: []float64{0.05}, Ratio: 1.25, Low: 1.1, High: 1.4}
	b, cur, ch, iv := c.Cells()
	if b != "40ms" || cur != "50ms" || ch != "+25%" || iv != "[+10%, +40%]" {
		t.Errorf("Cells() = %q %q %q %q; want 40ms 50ms +25%% [+10%%, +40%%]", b, cur, ch, iv)
	}
	c = Comparison{Unit: Seconds, Baseline: []float64{0.02, 0}, Ratio: math.NaN(), Low: math.NaN(), High: math.NaN()}
	if b, cur, ch, iv := c.Cells(); b != "" || cur != "" || ch != "" || iv != "" {
		t.Errorf("Cells() of a zero run and no ratio = %q %q %q %q; want all empty", b, cur, ch, iv)
	}
}
