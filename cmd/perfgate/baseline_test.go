package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// savedSeries writes a series of runs (no records: runs.json only) whose primary
// statistics are speed × nominal, in session id, and returns its directory.
func savedSeries(t *testing.T, dir, id string, sc scenario.Scenario, speeds ...float64) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	s := &gate.Series{Dir: dir, Scenario: b} // read back (and described) by perfrun.LoadSeries
	for i, x := range speeds {
		s.Runs = append(s.Runs, gate.RunStats{Run: i + 1, Session: id, Stats: map[string]float64{
			"ttft_p50": 0.05 * x, "itl_p50": 0.01 * x, "latency_p50": 0.3 * x, "output_tps": 500 / x}})
		s.Dirs = append(s.Dirs, gate.RunDir(i))
	}
	if err := s.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBaselinePlanCLI(t *testing.T) {
	code, out, errOut := cli(t, "baseline", "plan", "--cv", "3%", "--margin", "5%")
	if code != ExitOK || !strings.Contains(out, "1 session of 12 runs for the baseline, 12 current runs") || !strings.Contains(out, "10 sessions of 9 runs for the baseline, 9 current runs") {
		t.Errorf("baseline plan --cv 3%%: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := cli(t, "baseline", "plan", "--cv", "5%", "--session-cv", "5%"); code != ExitOK || !strings.Contains(out, "the current side is one session, and its own offset hides the change") {
		t.Errorf("sessions as noisy as δ: exit %d, want 0 and why no plan\n%s", code, out)
	}
	for _, args := range [][]string{{"plan"}, {"plan", "--cv", "3%", "--session-cv", "150%"}, {"plan", "--cv", "3%", "--power", "1"}, {"nope"}, {}} {
		if code, _, errOut := cli(t, append([]string{"baseline"}, args...)...); code != ExitInvalidConfig || errOut == "" {
			t.Errorf("baseline %q: exit %d, want 2 with a reason (%q)", args, code, errOut)
		}
	}
}

// baseline add records a baseline in sessions; the gate then measures how far they
// wander (ten sessions), and --session-cv is what it assumes with fewer. A session of
// another workload, and a session CV outside (0, 1), are invalid (exit 2).
func TestBaselineAddCLI(t *testing.T) {
	dir := t.TempDir()
	sc := scenario.Scenario{}
	base := filepath.Join(dir, "base")
	var sessions []string
	for k := range 10 {
		off := 1 + 0.004*float64(k%3-1)
		sessions = append(sessions, savedSeries(t, filepath.Join(dir, fmt.Sprint("day", k)), "", sc, off*1.00, off*1.01, off*0.99, off*1.005, off*0.995))
	}
	code, out, errOut := cli(t, append([]string{"baseline", "add", base}, sessions[:3]...)...)
	if code != ExitOK || !strings.Contains(out, "15 runs in 3 sessions (7 more and the gate measures how far sessions wander)") {
		t.Fatalf("baseline add three sessions: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = cli(t, append([]string{"baseline", "add", base}, sessions[3:]...)...); code != ExitOK || !strings.Contains(out, "50 runs in 10 sessions\n") {
		t.Fatalf("baseline add seven more: exit %d\n%s%s", code, out, errOut)
	}
	cur := savedSeries(t, filepath.Join(dir, "cur"), "now", sc, 1.002, 0.998, 1.004, 0.996, 1.0)
	code, out, _ = cli(t, "regress", "-v", "--html", "-", base, cur)
	if code != ExitOK || !strings.HasPrefix(out, "PASS regression gate: no regression") || !strings.Contains(out, "(measured; baseline 10 sessions, current one session)") {
		t.Errorf("regress against ten sessions: exit %d, want 0, no regression, measured\n%s", code, out)
	}
	one := sessions[0]
	if code, out, _ = cli(t, "regress", "-v", "--html", "-", "--session-cv", "0.3%", one, cur); code != ExitOK || !strings.Contains(out, "assumed the configured between-session CV 0.3%") {
		t.Errorf("regress against one session, --session-cv 0.3%%: exit %d\n%s", code, out)
	}
	for _, bad := range []string{"0", "100%", "x"} {
		if code, _, errOut := cli(t, "regress", "--session-cv", bad, one, cur); code != ExitInvalidConfig || !strings.Contains(errOut, "--session-cv: want a fraction") {
			t.Errorf("--session-cv %s: exit %d, want 2 naming the flag\n%s", bad, code, errOut)
		}
	}
	other := sc
	other.Config = loadgen.Config{Load: loadgen.Load{Concurrency: 7}}
	odd := savedSeries(t, filepath.Join(dir, "odd"), "", other, 1, 1.01)
	if code, _, errOut := cli(t, "baseline", "add", base, odd); code != ExitInvalidConfig || !strings.Contains(errOut, "another workload") {
		t.Errorf("baseline add of another workload: exit %d, want 2\n%s", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "day9", gate.RunsFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli(t, "baseline", "add", sessions[9], cur); code != ExitInvalidConfig || !strings.Contains(errOut, "runs.json") {
		t.Errorf("baseline add to a broken runs.json: exit %d, want 2 naming it\n%s", code, errOut)
	}
	if code, _, errOut := cli(t, "baseline", "add", base); code != ExitInvalidConfig || !strings.Contains(errOut, "want BASELINE_DIR and at least one RUNS_DIR") {
		t.Errorf("baseline add with no runs: exit %d\n%s", code, errOut)
	}
}
