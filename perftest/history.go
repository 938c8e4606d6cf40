package perftest

import (
	"testing"

	"github.com/perfgate/perfgate/internal/historyenv"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/internal/historyhook"
	"github.com/perfgate/perfgate/perftest/run"
)

// EnvHistory names the environment variable that, in a test binary that imports
// package perftest/perfhistory, makes every [Run] record its result in that history
// (a SQLite file or a "postgres://" URL). It is package history's EnvHistory, one
// constant that both name, so that perftest links no database driver.
const EnvHistory = historyenv.Name

// historyRecorder records a finished run in a history; set by the deprecated
// [SetHistoryRecorder], and used before perfhistory's hook when set.
var historyRecorder func(t testing.TB, res *Result, addr string)

// SetHistoryRecorder makes [Run] call record(t, res, addr) after each run when
// [EnvHistory] names a history. Not safe to call concurrently with Run; call it from an
// init function.
//
// Deprecated: import package perftest/perfhistory (`import _
// "github.com/perfgate/perfgate/perftest/perfhistory"`), which records every run
// itself; removed in v0.3.0.
func SetHistoryRecorder(record func(t testing.TB, res *Result, addr string)) {
	historyRecorder = record
}

// recordHistory records res in the history at addr through perfhistory when a test
// binary links it, or says why it cannot.
func recordHistory(t testing.TB, res *Result, addr string) {
	t.Helper()
	switch {
	case historyRecorder != nil:
		historyRecorder(t, res, addr)
	case historyhook.Record != nil:
		shown, err := historyhook.Record(t.Context(), res.Outcome, addr)
		if err != nil {
			t.Errorf("perftest: history: %v", err)
			return
		}
		t.Logf("perftest: scenario %q recorded in the history %s", res.Scenario.Name, shown)
	default:
		t.Logf("perftest: %s is set, but this test binary records into no history: import _ \"github.com/perfgate/perfgate/perftest/perfhistory\" in one of its test files (perftest links no database driver by itself; see docs/history.md)", EnvHistory)
	}
}

// RunsOf wraps a series read elsewhere (a history's baseline: package perfhistory's
// Baseline) as [Runs], a [Baseline] for [AssertNoRegression]. A
// series whose workload is not described (gate.Series.Workload nil) is described from
// its scenario ([run.DescribeSeries]); one that cannot be is t.Fatalf.
func RunsOf(t testing.TB, s *gate.Series) *Runs {
	t.Helper()
	if s.Workload == nil {
		if err := run.DescribeSeries(s); err != nil {
			t.Fatalf("perftest: the series' scenario: %v", err)
			return nil
		}
	}
	return &Runs{Series: s, rerun: rerunHint(t, seriesSeed(s))}
}
