package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The regression block of a scenario file: the baseline, margins, runs and settings;
// a misspelt field is named at its line, a bad margin or statistic by Validate.
func TestRegressionInFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	write := func(s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`name: chat
concurrency: 4
regression:
  baseline: baselines/chat
  margin: 0.03
  margins: {ttft_p99: 0.1}
  fail: [ttft_p99]
  runs: 5
  max_runs: 20
  fail_inconclusive: true
  ignore_workload: [concurrency]
`)
	s, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	g := s.Regression
	if g.Baseline != "baselines/chat" || g.Margin != 0.03 || g.Margins["ttft_p99"] != 0.1 || g.Fail[0] != "ttft_p99" ||
		g.Runs != 5 || g.MaxRuns != 20 || !g.FailInconclusive || g.IgnoreWorkload[0] != "concurrency" {
		t.Errorf("regression = %+v", g)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate = %v", err)
	}
	if sch := g.Schedule(); sch.Start != 5 || sch.Cap != 20 {
		t.Errorf("Schedule = %+v", sch)
	}
	write("regression:\n  margn: 0.05\n")
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), `s.yaml:2:3: unknown field "regression.margn" (did you mean "margin"?)`) {
		t.Errorf("a misspelt field: %v", err)
	}
	write("regression:\n  margin: 5\n  fail: [ttft_p95]\n")
	s, err = ReadFile(p)
	if err == nil {
		err = s.Validate()
	}
	if !errors.Is(err, ErrInvalidScenario) || !strings.Contains(err.Error(), "regression: margin 5: want a fraction in (0, 1)") ||
		!strings.Contains(err.Error(), `fail: no run statistic "ttft_p95"`) {
		t.Errorf("bad margin and statistic: %v", err)
	}
}
