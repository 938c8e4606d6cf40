package perftest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/run"
)

// sessionScenario is a fast mock workload (no latencies slept): a session of a few runs
// takes milliseconds.
func sessionScenario(conc int) Scenario {
	return Scenario{
		Name: "sessions",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:8"), OSL: distribution.MustSpec("fixed:2"), Seed: 4},
			Load:     loadgen.Load{Concurrency: conc},
			Stop:     loadgen.Stop{Requests: 10},
		},
	}
}

// Sessions from several RunRuns calls collect into one baseline: each is a session of its
// own, its runs' files copied beside runs.json (so the baseline outlives the test's
// artifacts), read back by LoadBaseline with their sessions, and the gate sees them as
// sessions.
func TestAddBaselineSession(t *testing.T) {
	sc := sessionScenario(2)
	dir := filepath.Join(t.TempDir(), "baseline")
	s1, s2 := RunRuns(t, sc, 2), RunRuns(t, sc, 3)
	if got := AddBaselineSession(t, dir, s1); got.Len() != 2 || got.Sessions() != 1 {
		t.Fatalf("after the first session: %d runs in %d sessions", got.Len(), got.Sessions())
	}
	l := &logTB{TB: t}
	back := AddBaselineSession(l, dir, s2)
	if back.Len() != 5 || back.Sessions() != 2 {
		t.Fatalf("after the second session: %d runs in %d sessions", back.Len(), back.Sessions())
	}
	if !strings.Contains(strings.Join(l.logs, "\n"), "5 runs in 2 sessions (8 more and the gate measures how far sessions wander)") {
		t.Errorf("log %q: want the runs, sessions and how many more sessions", l.logs)
	}
	read := LoadBaseline(t, dir)
	for i, want := range []string{"run-001", "run-002", "run-003", "run-004", "run-005"} {
		if read.Dirs[i] != want {
			t.Errorf("run %d's directory %q, want %q", i+1, read.Dirs[i], want)
		}
		if _, err := os.Stat(filepath.Join(dir, want, run.ClientFile)); err != nil {
			t.Errorf("run %d's recording was not copied: %v", i+1, err)
		}
	}
	if read.Runs[0].Session != s1.Runs[0].Session || read.Runs[2].Session != s2.Runs[0].Session || read.Runs[0].Session == read.Runs[2].Session {
		t.Errorf("sessions %q %q %q; want the first session's, then the second's", read.Runs[0].Session, read.Runs[1].Session, read.Runs[2].Session)
	}
	if read.Runs[3].Stats["ttft_p50"] != s2.Runs[1].Stats["ttft_p50"] {
		t.Errorf("run 4's statistics %v, want the second session's second run's %v", read.Runs[3].Stats, s2.Runs[1].Stats)
	}
	// The gate counts the baseline's sessions.
	l = &logTB{TB: t}
	c := Capture(t, func(t testing.TB) {
		l.TB = t
		AssertNoRegression(l, sc, read, Gate{Runs: 2, MaxRuns: 2, Margin: 0.5})
	})
	if !strings.Contains(strings.Join(l.logs, "\n")+c.Text(), "baseline 5 runs in 2 sessions") {
		t.Errorf("the gate's headline does not count two baseline sessions:\n%s\n%s", strings.Join(l.logs, "\n"), c.Text())
	}
}

// Bad sessions are refused before anything is written: another workload (named: the
// session given, the runs it would have been, the setting), no runs, runs already in the
// baseline, and runs not on disk.
func TestAddBaselineSessionRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "baseline")
	first := RunRuns(t, sessionScenario(2), 2)
	AddBaselineSession(t, dir, first)
	other := RunRuns(t, sessionScenario(3), 1)
	for _, c := range []struct {
		name     string
		sessions []*Runs
		want     string
	}{
		{"another workload", []*Runs{other},
			"session 1 of 1 given (1 run in " + other.Dir + "), which would be runs 3, is another workload than the baseline's runs 1–2: concurrency: baseline 2, this session 3"},
		{"an empty session", []*Runs{{Series: &gate.Series{}}}, "session 1 of 1 given has no runs"},
		{"a nil session", []*Runs{nil}, "session 1 of 1 given has no runs"},
		{"no session", nil, "no session given"},
		{"a session twice", []*Runs{first}, "is already in the baseline: its session " + first.Runs[0].Session + " is the baseline's run 1"},
	} {
		got := Capture(t, func(t testing.TB) { AddBaselineSession(t, dir, c.sessions...) })
		if !got.Stopped() || !strings.Contains(got.Text(), c.want) {
			t.Errorf("%s: stopped=%v, message:\n%s\nwant it to contain %q", c.name, got.Stopped(), got.Text(), c.want)
		}
	}
	// A session whose runs are not on disk.
	kept := &Runs{Series: run.NewSeries("", sessionScenario(2))}
	kept.Add(gate.RunStats{Stats: map[string]float64{"ttft_p50": 0.1}}, ".")
	if got := Capture(t, func(t testing.TB) { AddBaselineSession(t, dir, kept) }); !got.Stopped() || !strings.Contains(got.Text(), "run 1 is not on disk") {
		t.Errorf("runs not on disk: %s", got.Text())
	}
	// A good session and a bad one in one call: nothing is added.
	if got := Capture(t, func(t testing.TB) { AddBaselineSession(t, dir, RunRuns(t, sessionScenario(2), 1), other) }); !got.Stopped() || !strings.Contains(got.Text(), "session 2 of 2 given") {
		t.Errorf("a good session then another workload: %s", got.Text())
	}
	if b := LoadBaseline(t, dir); b.Len() != 2 {
		t.Errorf("refused sessions changed the baseline: %d runs, want 2", b.Len())
	}
	if _, err := os.Stat(filepath.Join(dir, "run-003")); err == nil {
		t.Errorf("a refused session left run-003 behind")
	}
}
