package perfhistory

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// With PERFGATE_HISTORY set, every Run is recorded: two runs, two results of one series.
func TestRunRecordsHistory(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv(history.EnvHistory, db)
	t.Setenv("PERFGATE_COMMIT", "cafe0123")
	sc := perftest.Scenario{
		Name: "gate",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:8"), OSL: distribution.MustSpec("fixed:2")},
			Load:     loadgen.Load{Concurrency: 2},
			Stop:     loadgen.Stop{Requests: 12},
		},
	}
	perftest.Run(t, sc)
	perftest.Run(t, sc)
	s, err := history.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs, err := s.Results(t.Context(), history.Query{Scenario: "gate"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Commit != "cafe0123" || rs[0].Series() != rs[1].Series() || len(rs[1].Values("ttft_p50")) != 1 {
		t.Fatalf("history after two runs: %+v", rs)
	}
	// The history is a baseline for the run-level gate: its runs, and a workload the
	// gate takes for the same.
	base := Baseline(t, db, "history:gate?branch=*")
	if base.Len() != 2 || base.Runs[1].Stats["ttft_p50"] != rs[1].Runs[0].Stats["ttft_p50"] {
		t.Errorf("baseline from the history: %d runs %+v", base.Len(), base.Runs)
	}
	back, err := run.SeriesScenario(base.Series)
	if err != nil {
		t.Fatal(err)
	}
	if ds := scenario.DiffWorkload(back, sc); len(ds) != 0 || base.Workload == nil {
		t.Errorf("the baseline's scenario is another workload: %v (described: %v)", ds, base.Workload != nil)
	}
	// It gates: the same workload, compared (not refused).
	if r := gate.Compare(base.Series, base.Series, gate.Gate{}, 0); r.Invalid() {
		t.Errorf("the history's baseline against itself: %s", r.Headline())
	}
}

// historyT records failures instead of failing.
type historyT struct {
	testing.TB
	errors []string
}

func (h *historyT) Helper()             {}
func (h *historyT) Logf(string, ...any) {}
func (h *historyT) Errorf(format string, a ...any) {
	h.errors = append(h.errors, fmt.Sprintf(format, a...))
}

// A history that cannot be written fails the test that asked to record.
func TestRecordHistoryFailure(t *testing.T) {
	res := perftest.Load(t, "../testdata/example")
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &historyT{TB: t}
	Record(rec, res, filepath.Join(file, "history.db"))
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "perftest: history:") {
		t.Errorf("Record into an unwritable place: %q", rec.errors)
	}
	ok := &historyT{TB: t}
	Record(ok, res, filepath.Join(t.TempDir(), "history.db"))
	if len(ok.errors) != 0 {
		t.Errorf("Record: %q", ok.errors)
	}
}

// Each job's runs, recorded with RecordRuns, are one result: a history baseline holds one
// session per job, and the gate counts them. The current side a sequential gate returns
// records too (its runs read from disk). Bad input: no runs.
func TestRecordRunsSessions(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	sc := perftest.Scenario{
		Name: "nightly",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:8"), OSL: distribution.MustSpec("fixed:2")},
			Load:     loadgen.Load{Concurrency: 2},
			Stop:     loadgen.Stop{Requests: 6},
		},
	}
	RecordRuns(t, perftest.RunRuns(t, sc, 1), db)
	RecordRuns(t, perftest.RunRuns(t, sc, 2), db)
	base := Baseline(t, db, "history:nightly?branch=*")
	if base.Len() != 3 || base.Sessions() != 2 {
		t.Fatalf("baseline of two recorded jobs: %d runs in %d sessions, want 3 in 2", base.Len(), base.Sessions())
	}
	cur, _ := perftest.AssertNoRegression(t, sc, base, perftest.Gate{Runs: 2, MaxRuns: 2, Margin: 0.5})
	RecordRuns(t, cur, db)
	if base := Baseline(t, db, "history:nightly?branch=*"); base.Len() != 5 || base.Sessions() != 3 {
		t.Errorf("after the gated job recorded its runs: %d runs in %d sessions, want 5 in 3", base.Len(), base.Sessions())
	}
	rec := &historyT{TB: t}
	RecordRuns(rec, &perftest.Runs{Series: &gate.Series{}}, db)
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "no runs to record") {
		t.Errorf("RecordRuns of no runs: %q", rec.errors)
	}
}
