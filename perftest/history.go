package perftest

import (
	"context"
	"os"
	"testing"

	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// RecordHistory adds res (one run) to the history at addr (a SQLite file or a
// "postgres://" URL; see package history) as one result, with the server's commit,
// branch and build from the CI system's variables (PERFGATE_COMMIT, GITHUB_SHA, …),
// and updates the series' change points. [Run] calls it by itself when the
// environment variable PERFGATE_HISTORY names a history, so a `go test` gate records
// every run without code. A history that cannot be written fails the test (t.Errorf).
func RecordHistory(t testing.TB, res *Result, addr string) {
	t.Helper()
	if err := recordHistory(t.Context(), res.Outcome, addr); err != nil {
		t.Errorf("perftest: history: %v", err)
		return
	}
	t.Logf("perftest: scenario %q recorded in the history %s", res.Scenario.Name, history.Redact(addr))
}

func recordHistory(ctx context.Context, out *scenario.Outcome, addr string) error {
	r, err := history.FromOutcomes([]*scenario.Outcome{out}, history.Identity{}.FromEnv(os.Getenv))
	if err != nil {
		return err
	}
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

// HistoryBaseline reads a regression gate's baseline from the history at addr: spec
// is "history:SCENARIO", optionally "?last=N" (results, default 5), "&branch=B"
// (default main; * = any) or "&since=change" (the results since the series' last
// change point). Every run of those results is a baseline run, so the baseline holds
// the night-to-night noise. It calls t.Fatalf when the history has no such results.
func HistoryBaseline(t testing.TB, addr, spec string) *Runs {
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
	t.Logf("perftest: baseline %s: %d runs of %d results from %s", bs, len(series.Runs), len(results), history.Redact(addr))
	return &Runs{Series: series, rerun: rerunHint(t, series.Scenario.Seed)}
}
