package perftest

import (
	"fmt"
	"strings"
	"testing"
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
	if historyRecorder != nil {
		t.Fatalf("perftest's own tests link a history recorder; they must not (they would link the database drivers)")
	}
	l := &logT{TB: t}
	recordHistory(l, &Result{}, "history.db")
	if len(l.logs) != 1 || !strings.Contains(l.logs[0], "PERFGATE_HISTORY is set") || !strings.Contains(l.logs[0], `import _ "github.com/perfgate/perfgate/perftest/perfhistory"`) || len(l.errors) != 0 {
		t.Errorf("no recorder linked: logs %q, errors %q", l.logs, l.errors)
	}
	var got string
	SetHistoryRecorder(func(_ testing.TB, _ *Result, addr string) { got = addr })
	t.Cleanup(func() { SetHistoryRecorder(nil) })
	recordHistory(l, &Result{}, "history.db")
	if got != "history.db" || len(l.logs) != 1 {
		t.Errorf("a recorder linked: called with %q, logs %q", got, l.logs)
	}
}
