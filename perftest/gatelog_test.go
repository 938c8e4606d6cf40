package perftest

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/run"
)

// constructedRuns are 5 runs in session id at speed f (each statistic within ±0.2%).
func constructedRuns(id string, f float64) *Runs {
	s := run.NewSeries("", sessionScenario(2))
	for i := range 5 {
		x := f * (1 + 0.002*float64(i%3-1))
		s.Runs = append(s.Runs, gate.RunStats{Run: i + 1, Session: id, Stats: map[string]float64{
			"ttft_p50": 0.05 * x, "itl_p50": 0.01 * x, "latency_p50": 0.3 * x, "output_tps": 500 / x, "ttft_p99": 0.5 * x}})
		s.Dirs = append(s.Dirs, gate.RunDir(i))
	}
	return &Runs{Series: s}
}

// A gate that passed logs its headline and one line per gating statistic (the evidence
// is in the HTML report); a failing gate logs its failing statistic with the evidence
// and a passing one as its line.
func TestGateLogCompact(t *testing.T) {
	l := &logTB{TB: t}
	if !reportGate(l, gate.Compare(constructedRuns("b", 1).Series, constructedRuns("c", 1).Series, Gate{SessionCV: 0.002}, 0), "") {
		t.Fatalf("identical runs failed the gate:\n%s", strings.Join(l.logs, "\n"))
	}
	logs := strings.Join(l.logs, "\n")
	if len(l.logs) != 5 || strings.Contains(logs, "ratio:") || strings.Contains(logs, "reported, not gating") || strings.Count(logs, ": no regression") != 5 {
		t.Errorf("a passing gate: want the headline and 4 one-line verdicts, got %d lines:\n%s", len(l.logs), logs)
	}
	cur := constructedRuns("c", 1)
	for i := range cur.Runs {
		cur.Runs[i].Stats["ttft_p50"] *= 1.3
	}
	l = &logTB{}
	c := Capture(t, func(t testing.TB) {
		l.TB = t
		reportGate(l, gate.Compare(constructedRuns("b", 1).Series, cur.Series, Gate{SessionCV: 0.002}, 0), "")
	})
	logs = strings.Join(l.logs, "\n")
	if !c.Failed() || !strings.Contains(c.Text(), "TTFT p50 regressed") || !strings.Contains(c.Text(), "ratio:") {
		t.Errorf("TTFT +30%%: want it failed with its evidence:\n%s", c.Text())
	}
	if !strings.Contains(logs, "perftest: ITL p50: no regression") || strings.Contains(logs, "ratio:") || !strings.Contains(logs, "reported, not gating") {
		t.Errorf("a failing gate's passing statistics: want one line each, and the reported ones:\n%s", logs)
	}
}
