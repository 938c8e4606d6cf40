package perftest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/internal/historyhook"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// logT keeps what is logged and reported.
type logT struct {
	testing.TB
	logs, errors []string
}

func (l *logT) Helper()                      {}
func (l *logT) Logf(format string, a ...any) { l.logs = append(l.logs, fmt.Sprintf(format, a...)) }
func (l *logT) Errorf(format string, a ...any) {
	l.errors = append(l.errors, fmt.Sprintf(format, a...))
}
func (l *logT) Fatalf(format string, a ...any) {
	l.errors = append(l.errors, fmt.Sprintf(format, a...))
}

// With PERFGATE_HISTORY set and no recorder linked (perftest/perfhistory not imported:
// this test binary links no database driver), Run says what to import instead of
// recording silently nothing; with a recorder, the recorder is called.
func TestRecordHistoryUnlinked(t *testing.T) {
	if historyRecorder != nil || historyhook.Record != nil {
		t.Fatalf("perftest's own tests link a history recorder; they must not (they would link the database drivers)")
	}
	l := &logT{TB: t}
	recordHistory(l, &Result{}, "history.db")
	if len(l.logs) != 1 || !strings.Contains(l.logs[0], "PERFGATE_HISTORY is set") || !strings.Contains(l.logs[0], `import _ "github.com/perfgate/perfgate/perftest/perfhistory"`) || len(l.errors) != 0 {
		t.Errorf("no recorder linked: logs %q, errors %q", l.logs, l.errors)
	}
	// perfhistory linked: its hook records, and Run says where, or why it could not.
	var got string
	historyhook.Record = func(_ context.Context, _ *run.Outcome, addr string) (string, error) {
		got = addr
		if addr == "bad.db" {
			return addr, errors.New("cannot open bad.db")
		}
		return "shown:" + addr, nil
	}
	t.Cleanup(func() { historyhook.Record = nil })
	res := &Result{Outcome: &run.Outcome{Scenario: scenario.Scenario{Name: "chat"}}}
	l = &logT{TB: t}
	recordHistory(l, res, "history.db")
	if got != "history.db" || len(l.logs) != 1 || l.logs[0] != `perftest: scenario "chat" recorded in the history shown:history.db` || len(l.errors) != 0 {
		t.Errorf("perfhistory linked: called with %q, logs %q, errors %q", got, l.logs, l.errors)
	}
	l = &logT{TB: t}
	recordHistory(l, res, "bad.db")
	if len(l.errors) != 1 || l.errors[0] != "perftest: history: cannot open bad.db" {
		t.Errorf("a history that cannot be written: logs %q, errors %q; want t.Errorf", l.logs, l.errors)
	}
	// The deprecated SetHistoryRecorder still takes precedence.
	got = ""
	SetHistoryRecorder(func(_ testing.TB, _ *Result, addr string) { got = "set:" + addr })
	t.Cleanup(func() { SetHistoryRecorder(nil) })
	recordHistory(l, res, "history.db")
	if got != "set:history.db" {
		t.Errorf("SetHistoryRecorder's recorder not called: %q", got)
	}
}
