// Package perfhistory records perftest results in a history and reads baselines from it.
// The history is package history's: a SQLite file or a PostgreSQL database. It is the
// one perftest package that links the database drivers: a test binary that does not
// import it records nothing and links neither SQLite nor pgx.
//
// Importing it (even as `import _ "github.com/perfgate/perfgate/perftest/perfhistory"`)
// makes every perftest.Run record its result in the history named by the environment
// variable PERFGATE_HISTORY, as perftest.Run did by itself before this package existed; [Record] records
// one result explicitly, and [Baseline] reads a baseline:
//
//	func TestNightly(t *testing.T) {
//		res := perftest.Run(t, sc)
//		perfhistory.Record(t, res, "history.db")                 // or PERFGATE_HISTORY
//		base := perfhistory.Baseline(t, "history.db", "history:nightly?last=10")
//		perftest.AssertNoRegression(t, sc, base, perftest.Gate{})
//	}
package perfhistory

import (
	"cmp"
	"context"
	"os"
	"testing"

	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/perftest"
	"github.com/perfgate/perfgate/perftest/internal/historyhook"
	"github.com/perfgate/perfgate/perftest/run"
)

// init makes perftest.Run record into the history PERFGATE_HISTORY names, as [Record] does.
func init() {
	historyhook.Record = func(ctx context.Context, out *run.Outcome, addr string) (string, error) {
		return history.Redact(addr), record(ctx, out, addr)
	}
}

// Record adds res (one run) to the history at addr (a SQLite file or a "postgres://"
// URL; see package history) as one result, with the server's commit, branch and build
// from the CI system's variables (PERFGATE_COMMIT, GITHUB_SHA, …), and updates the
// series' change points. perftest.Run calls it by itself when the environment variable
// PERFGATE_HISTORY names a history and this package is linked, so a `go test` gate
// records every run without code. A history that cannot be written fails the test
// (t.Errorf).
func Record(t testing.TB, res *perftest.Result, addr string) {
	t.Helper()
	if err := record(t.Context(), res.Outcome, addr); err != nil {
		t.Errorf("perftest: history: %v", err)
		return
	}
	t.Logf("perftest: scenario %q recorded in the history %s", res.Scenario.Name, history.Redact(addr))
}

func record(ctx context.Context, out *run.Outcome, addr string) error {
	r, err := FromOutcomes([]*run.Outcome{out}, history.Identity{}.FromEnv(os.Getenv))
	if err != nil {
		return err
	}
	return add(ctx, r, addr)
}

// RecordRuns adds runs (K runs of one scenario: a perftest.RunRuns, or the current side
// perftest.AssertNoRegression returns) to the history at addr as one result, with
// the identity [Record] takes. A result is one session of a history baseline
// ("history:SCENARIO?last=N" takes the last N results, each a session of its runs), so
// a CI job that gates against the history and records its own runs grows tomorrow's
// baseline by one session; from ten the gate measures how far sessions wander. A history
// that cannot be written, or runs with no statistics, fail the test (t.Errorf).
func RecordRuns(t testing.TB, runs *perftest.Runs, addr string) {
	t.Helper()
	if runs == nil || runs.Series == nil || runs.Len() == 0 {
		t.Errorf("perftest: history: no runs to record")
		return
	}
	id := history.Identity{}.FromEnv(os.Getenv)
	var r *history.Result
	var err error
	if len(runs.Outcomes) == runs.Len() {
		r, err = FromOutcomes(runs.Outcomes, id)
	} else {
		r, err = history.FromSeries(runs.Series, nil, id) // read from disk: the statistics the gate compared
	}
	if err == nil {
		err = add(t.Context(), r, addr)
	}
	if err != nil {
		t.Errorf("perftest: history: %v", err)
		return
	}
	t.Logf("perftest: %d runs of scenario %q recorded in the history %s as one result", runs.Len(), r.Scenario, history.Redact(addr))
}

// add adds r to the history at addr and updates its series' change points.
func add(ctx context.Context, r *history.Result, addr string) error {
	s, err := history.Open(ctx, addr)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.Add(ctx, r); err != nil {
		return err
	}
	k := r.Series()
	_, err = history.Analyze(ctx, s, history.Query{Series: &k}, history.Detection{}, nil)
	return err
}

// FromOutcomes builds a history result of the runs outs (K runs of one scenario, in
// order): each run's statistics (its runstats.json, else Outcome.RunStats), the
// verdicts of each (named "run N: check" when there are several), the workload it is
// filed under, and the identity from the first run's manifest and id
// (history.FromSeries of run.RecordingOf).
func FromOutcomes(outs []*run.Outcome, id history.Identity) (*history.Result, error) {
	rec := run.RecordingOf(outs...)
	id.Topology = cmp.Or(id.Topology, rec.Topology)
	return history.FromSeries(rec.Series, rec.Verdicts, id)
}

// Baseline reads a regression gate's baseline from the history at addr: spec is
// "history:SCENARIO", optionally "?last=N" (results, default 10), "&branch=B" (default
// main; * = any) or "&since=change" (the results since the series' last change point).
// Every run of those results is a baseline run, so the baseline holds the
// night-to-night noise. It calls t.Fatalf when the history has no such results.
func Baseline(t testing.TB, addr, spec string) *perftest.Runs {
	t.Helper()
	bs, err := history.ParseBaselineSpec(spec)
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return nil
	}
	s, err := history.Open(t.Context(), addr)
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return nil
	}
	defer s.Close()
	series, results, err := history.LoadBaseline(t.Context(), s, bs)
	if err != nil {
		t.Fatalf("perftest: %v", err)
		return nil
	}
	if err := run.DescribeSeries(series); err != nil {
		t.Fatalf("perftest: history: baseline %s: result %d's scenario: %v", bs, results[len(results)-1].ID, err)
		return nil
	}
	t.Logf("perftest: baseline %s: %d runs of %d results from %s", bs, len(series.Runs), len(results), history.Redact(addr))
	return perftest.RunsOf(t, series)
}
