package gate

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/check"
)

// sessionSeries is k sessions of the given speeds each, session j's speeds times
// offsets[j], labelled "s<j>".
func sessionSeries(sc Workload, speeds []float64, offsets []float64) *Series {
	s := &Series{Workload: &sc}
	for j, off := range offsets {
		one := series(sc, scale(speeds, off), nil)
		for _, r := range one.Runs {
			r.Run = len(s.Runs) + 1
			r.Session = "s" + string(rune('a'+j))
			s.Runs = append(s.Runs, r)
			s.Dirs = append(s.Dirs, RunDir(len(s.Dirs)))
		}
	}
	return s
}

// A baseline of ten sessions measures the between-session noise; sessions that wander
// widen the interval against one session of the same runs.
func TestCompareMeasuresSessions(t *testing.T) {
	sc := Workload{}
	offsets := []float64{1.00, 1.03, 0.97, 1.02, 0.98, 1.04, 0.96, 1.01, 0.99, 1.00}
	base := sessionSeries(sc, noise5, offsets)
	if n := base.Sessions(); n != 10 {
		t.Fatalf("Sessions() = %d, want 10", n)
	}
	cur := series(sc, noise5, nil)
	r := Compare(base, cur, Gate{}, 0)
	c := r.Comparisons[0]
	if c.SessionSource != "measured" || c.BaselineSessions != 10 || c.CurrentSessions != 1 {
		t.Fatalf("source %q, sessions %d+%d; want measured, 10+1\n%s", c.SessionSource, c.BaselineSessions, c.CurrentSessions, r.AllVerdicts()[0])
	}
	// The same runs as one session (labels cleared) and shared: narrower.
	flat := *base
	flat.Runs = append([]RunStats(nil), base.Runs...)
	for i := range flat.Runs {
		flat.Runs[i].Session = "x"
	}
	sharedCur := series(sc, noise5, nil)
	for i := range sharedCur.Runs {
		sharedCur.Runs[i].Session = "x"
	}
	one := Compare(&flat, sharedCur, Gate{}, 0).Comparisons[0]
	if one.SessionSource != "same session" || !(c.SE > 2*one.SE) {
		t.Errorf("ten wandering sessions: SE %v; one shared session: %s SE %v; want the sessions' far wider", c.SE, one.SessionSource, one.SE)
	}
	// SessionCVs gives what the gate measured, with the sessions' df.
	cvs, df := base.SessionCVs()
	if math.Abs(cvs["ttft_p50"]-c.SessionCV) > 1e-12 || df != 9 {
		t.Errorf("SessionCVs ttft_p50 = %v (df %v), the gate measured %v", cvs["ttft_p50"], df, c.SessionCV)
	}
}

// A one-session baseline with no session CV is inconclusive about a small change and
// says why; its stored session CV, or the gate's, decides it.
func TestCompareSessionCVSources(t *testing.T) {
	sc := Workload{}
	wide := []float64{1.00, 1.03, 0.97, 1.015, 0.985}
	base, cur := series(sc, wide, nil), series(sc, scale(wide, 1.005), nil)
	r := Compare(base, cur, Gate{}, 0)
	if r.Change() != check.ChangeInconclusive || !strings.Contains(r.AllVerdicts()[0].String(), "between-session noise not measured") {
		t.Errorf("no session CV: %v\n%s", r.Change(), r.AllVerdicts()[0])
	}
	r = Compare(base, cur, Gate{SessionCV: 0.002}, 0)
	if r.Change() != check.ChangeNoRegression || !strings.Contains(r.AllVerdicts()[0].String(), "assumed the configured between-session CV 0.2%") {
		t.Errorf("Gate.SessionCV 0.2%%: %v\n%s", r.Change(), r.AllVerdicts()[0])
	}
	stored := *base
	stored.SessionCV, stored.SessionDF = map[string]float64{"ttft_p50": 0.002, "itl_p50": 0.002, "latency_p50": 0.002, "output_tps": 0.002}, 30
	r = Compare(&stored, cur, Gate{SessionCV: 0.5}, 0)
	if !strings.Contains(r.AllVerdicts()[0].String(), "assumed the baseline's stored between-session CV 0.2%") {
		t.Errorf("stored session CV beats the configured one:\n%s", r.AllVerdicts()[0])
	}
	if err := (Gate{SessionCV: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "session_cv 1: want a fraction in (0, 1)") || !errors.Is(err, ErrInvalid) {
		t.Errorf("Gate{SessionCV: 1}.Validate() = %v", err)
	}
	if (Gate{SessionCV: 0.01}).IsZero() {
		t.Errorf("a gate with a session CV is zero")
	}
}

// runs.json keeps each run's session and the stored session CV, and refuses a session CV
// no gate can use, naming the field.
func TestSeriesSessionsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := sessionSeries(Workload{}, noise5, []float64{1, 1.01})
	s.Dir = dir
	s.SessionCV, s.SessionDF = map[string]float64{"ttft_p50": 0.02}, 9
	if err := s.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSeries(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Sessions() != 2 || back.Runs[5].Session != "sb" || back.SessionCV["ttft_p50"] != 0.02 || back.SessionDF != 9 {
		t.Errorf("read back: %d sessions, run 6 in %q, session CV %v df %v", back.Sessions(), back.Runs[5].Session, back.SessionCV, back.SessionDF)
	}
	b, _ := os.ReadFile(filepath.Join(dir, RunsFile))
	for _, bad := range []struct{ from, to, want string }{
		{`"ttft_p50": 0.02`, `"ttft_p50": 1.5`, "session_cv.ttft_p50 1.5: want a fraction in [0, 1)"},
		{`"session_df": 9`, `"session_df": -1`, "session_df -1: want a finite number >= 0"},
	} {
		if !strings.Contains(string(b), bad.from) {
			t.Fatalf("runs.json lacks %s:\n%s", bad.from, b)
		}
		if err := os.WriteFile(filepath.Join(dir, RunsFile), []byte(strings.Replace(string(b), bad.from, bad.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSeries(dir); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), RunsFile) {
			t.Errorf("%s: LoadSeries err = %v, want %q naming %s", bad.to, err, bad.want, RunsFile)
		}
	}
}

// AppendSession adds another session of the same workload, with its run directories
// relative to the baseline's, and refuses another workload.
func TestAppendSession(t *testing.T) {
	root := t.TempDir()
	base := series(Workload{}, noise5, nil)
	base.Dir = filepath.Join(root, "base")
	for i := range base.Runs {
		base.Runs[i].Session = "first"
	}
	more := series(Workload{}, noise5[:3], nil) // recorded before sessions were kept: no labels
	more.Dir = filepath.Join(root, "day2")
	if err := base.AppendSession(more); err != nil {
		t.Fatal(err)
	}
	if base.Len() != 8 || base.Sessions() != 2 || base.Runs[7].Run != 8 || base.Dirs[5] != filepath.Join("..", "day2", "run-001") {
		t.Errorf("after AppendSession: %d runs, %d sessions, run %d, dir %q", base.Len(), base.Sessions(), base.Runs[7].Run, base.Dirs[5])
	}
	other := series(Workload{Settings: [][2]string{{"concurrency", "9"}}}, noise5, nil)
	if err := base.AppendSession(other); err == nil || !strings.Contains(err.Error(), "another workload") || base.Len() != 8 {
		t.Errorf("another workload: err %v, %d runs", err, base.Len())
	}
}

// Runs added by one process share a session; sameSession tells an interleaved A/B pair.
func TestSameSession(t *testing.T) {
	a, b := &Series{}, &Series{}
	b.ShareSession(a)
	for _, s := range []*Series{a, b} {
		s.Runs = append(s.Runs, RunStats{Session: s.sessionID()}, RunStats{Session: s.sessionID()})
	}
	if !sameSession(a, b) {
		t.Errorf("A and B with one session id: not the same session")
	}
	c := &Series{Runs: []RunStats{{Session: newSessionID()}}}
	if sameSession(a, c) || sameSession(&Series{Runs: []RunStats{{}}}, &Series{Runs: []RunStats{{}}}) {
		t.Errorf("different or unlabelled sessions counted as one")
	}
	if id := newSessionID(); !strings.HasPrefix(id, "s-") || len(id) != 14 || id == newSessionID() {
		t.Errorf("newSessionID() = %q", id)
	}
}
