package run

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/reportgen"
)

// A run's summary heads with the answer the console prints under its verdicts
// (check.Answer), lists each verdict and validity check with its mark, has a row per
// run statistic (the current column only: one run has no baseline), and links the
// report and exports it wrote; a run whose measurement is invalid says so instead.
func TestOutcomeSummary(t *testing.T) {
	dir := t.TempDir()
	sc := scenario.Scenario{
		Name: "summary",
		Mock: mockserver.Config{Fast: true},
		Objectives: scenario.Objectives{Rules: []string{
			"error_rate <= 0",
			"ttft_p50 <= 1ns", // fails: nothing answers in a nanosecond
		}},
		Config: loadgen.Config{
			Target:   loadgen.Target{API: loadgen.EndpointChat},
			Workload: loadgen.Workload{ISL: distribution.Spec{Distribution: distribution.Fixed{Value: 24}}, OSL: distribution.Spec{Distribution: distribution.Fixed{Value: 4}}, Seed: 3},
			Load:     loadgen.Load{Concurrency: 2},
			Stop:     loadgen.Stop{Requests: 20},
		},
	}
	out, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	s := out.Summary()
	mark, answer := check.Answer(out.Verdicts())
	if s.Mark != "FAIL" || mark != "FAIL" || s.Headline != answer || !strings.HasPrefix(answer, "FAIL: 1 of 2") {
		t.Errorf("summary %q %q; want the console's answer %q %q (FAIL: 1 of 2 …)", s.Mark, s.Headline, mark, answer)
	}
	if len(s.Verdicts) != 2 || s.Verdicts[1].Mark != "FAIL" || !strings.Contains(s.Verdicts[1].Text, "TTFT p50") {
		t.Errorf("verdict lines %+v; want two, the TTFT p50 rule failing", s.Verdicts)
	}
	rows := map[string]reportgen.SummaryStat{}
	for _, r := range s.Stats {
		rows[r.Name] = r
	}
	if r, ok := rows["TTFT p50"]; !ok || r.Current == "" || r.Baseline != "" || r.Change != "" {
		t.Errorf("TTFT p50 row %+v (rows %v); want the run's value and no baseline", r, s.Stats)
	}
	links := map[string]string{}
	for _, a := range s.Artifacts {
		links[a.Label] = a.Path
		if _, err := os.Stat(a.Path); err != nil {
			t.Errorf("artifact link %q: %v", a.Label, err)
		}
	}
	if links["report"] == "" || links["verdicts"] == "" || links["AIPerf JSON"] == "" {
		t.Errorf("links %v; want the report, the verdicts and the AIPerf export", links)
	}

}

// runAnswer puts first what makes the objectives moot: nothing completed, an abort, an
// invalid measurement; else the assertions' answer.
func TestRunAnswer(t *testing.T) {
	pass := check.Verdict{Check: "quantile", Pass: true}
	fail := check.Verdict{Check: "quantile"}
	done := check.Verdict{Check: "completed", Pass: true}
	bound := check.Verdict{Check: "client-bound", Status: check.Invalid}
	warn := check.Verdict{Check: "steady-state", Pass: true, Status: check.Invalid}
	for _, c := range []struct {
		name      string
		vs, val   []check.Verdict
		completed check.Verdict
		aborted   string
		mark      string
		head      string
	}{
		{"all pass", []check.Verdict{pass, pass}, []check.Verdict{warn}, done, "", "PASS", "PASS: 2 assertion(s)"},
		{"one fails", []check.Verdict{pass, fail}, nil, done, "", "FAIL", "FAIL: 1 of 2 assertion(s)"},
		{"invalid", []check.Verdict{pass}, []check.Verdict{warn, bound}, done, "", "INVALID", "invalid measurement: client-bound; the objectives are not judged"},
		{"aborted", []check.Verdict{pass}, []check.Verdict{bound}, done, "error_rate>0.5 held", "FAIL", "ABORTED: error_rate>0.5 held"},
		{"nothing completed", []check.Verdict{pass}, []check.Verdict{bound}, check.Verdict{Check: "completed", Summary: "no request completed"}, "x", "FAIL", "no request completed"},
	} {
		mark, head := runAnswer(c.vs, c.val, c.completed, c.aborted)
		if mark != c.mark || !strings.HasPrefix(head, c.head) {
			t.Errorf("%s: runAnswer = %q, %q; want %q, %q…", c.name, mark, head, c.mark, c.head)
		}
	}
}

// ValidityMark marks a failing check INVALID, a warning WARN and a pass PASS.
func TestValidityMark(t *testing.T) {
	for _, c := range []struct {
		v    check.Verdict
		want string
	}{
		{check.Verdict{Pass: true}, "PASS"},
		{check.Verdict{Pass: true, Status: check.Invalid}, "WARN"},
		{check.Verdict{Status: check.Invalid}, "INVALID"},
	} {
		if got := ValidityMark(c.v); got != c.want {
			t.Errorf("ValidityMark(%+v) = %q, want %q", c.v, got, c.want)
		}
	}
}
