package perftest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/run"
)

// AddBaselineSession appends sessions to the baseline in dir, each a session of its own,
// as `perfgate baseline add DIR RUN_DIR…` does: each run's files (those [SaveBaseline]
// keeps) are copied into dir/run-NNN, numbered after the runs the baseline has, and
// dir/runs.json is rewritten with the runs' statistics and sessions. A session is the
// runs of one [RunRuns] call (made on another day or runner, so that it sees what a CI
// job sees); a [*Runs] read by [LoadBaseline] keeps the sessions it has. dir and its
// runs.json are created with the first session. With [gate.DefaultBaselineSessions]
// sessions (10) the gate measures how far sessions wander itself
// (docs/regression.md, "A baseline in sessions").
//
// It returns the baseline as [LoadBaseline] reads it back. Refused with t.Fatalf, before
// anything is written: a session of another workload than the baseline's (the message
// names the session and every setting that differs), a session with no runs, runs
// already in the baseline, and runs whose files are not on disk.
func AddBaselineSession(t testing.TB, dir string, sessions ...*Runs) *Runs {
	t.Helper()
	base, err := addSessions(dir, sessions)
	if err != nil {
		t.Fatalf("perftest: add baseline session: %v", err)
		return nil
	}
	n := base.Sessions()
	msg := fmt.Sprintf("%d runs in %d session", base.Len(), n)
	if n != 1 {
		msg += "s"
	}
	if n < check.MinSessions {
		msg += fmt.Sprintf(" (%d more and the gate measures how far sessions wander)", check.MinSessions-n)
	}
	t.Logf("perftest: baseline %s: %s", dir, msg)
	return LoadBaseline(t, dir)
}

// addSessions appends sessions to the baseline in dir (created when it has no runs.json)
// and writes it, checking every session before writing anything.
func addSessions(dir string, sessions []*Runs) (*gate.Series, error) {
	if len(sessions) == 0 {
		return nil, fmt.Errorf("%s: no session given", dir)
	}
	base, err := run.LoadSeries(dir)
	if err != nil {
		if _, serr := os.Stat(filepath.Join(dir, gate.RunsFile)); serr == nil {
			return nil, err // a baseline that cannot be read is not overwritten
		}
		base = &gate.Series{}
	}
	base.Dir = dir
	had := base.Len()
	var srcs []string // each new run's directory, in the order appended
	for k, r := range sessions {
		name := fmt.Sprintf("session %d of %d given", k+1, len(sessions))
		if r == nil || r.Series == nil || r.Len() == 0 {
			return nil, fmt.Errorf("%s: %s has no runs; a session is the runs of one RunRuns call, at least one", dir, name)
		}
		name += fmt.Sprintf(" (%d run", r.Len())
		if r.Len() != 1 {
			name += "s"
		}
		if r.Dir != "" {
			name += " in " + r.Dir
		}
		name += ")"
		for _, run := range r.Runs {
			if i := slices.IndexFunc(base.Runs, func(b gate.RunStats) bool { return b.Session == run.Session }); run.Session != "" && i >= 0 {
				return nil, fmt.Errorf("%s: %s is already in the baseline: its session %s is the baseline's run %d", dir, name, run.Session, i+1)
			}
		}
		from := base.Len() + 1
		if base.Len() > 0 {
			if ds := gate.WorkloadDiff(base, r.Series, nil); len(ds) > 0 {
				var fs []string
				for _, d := range ds {
					fs = append(fs, fmt.Sprintf("%s: baseline %s, this session %s", d.Field, orUnset(d.Baseline), orUnset(d.Current)))
				}
				return nil, fmt.Errorf("%s: %s, which would be runs %s, is another workload than the baseline's runs %s: %s",
					dir, name, runSpan(from, from+r.Len()-1), runSpan(1, base.Len()), strings.Join(fs, "; "))
			}
		}
		for j := range r.Runs {
			src, err := runSource(r, j)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", dir, name, err)
			}
			srcs = append(srcs, src)
		}
		if err := base.AppendSession(r.Series); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", dir, name, err)
		}
	}
	for k := range srcs {
		d := filepath.Join(dir, gate.RunDir(had+k))
		if _, err := os.Stat(d); err == nil {
			return nil, fmt.Errorf("%s: the new run %d's directory %s exists already, and runs.json does not name it as that run", dir, had+k+1, d)
		}
	}
	for k, src := range srcs {
		i := had + k
		if _, _, err := run.SaveBaseline(&run.Outcome{Dir: src}, filepath.Join(dir, gate.RunDir(i))); err != nil {
			return nil, err
		}
		base.Dirs[i] = gate.RunDir(i)
	}
	if err := base.SaveIndex(); err != nil {
		return nil, err
	}
	return base, nil
}

// runSource is the directory holding run j of r, which must hold its client recording.
func runSource(r *Runs, j int) (string, error) {
	d := "."
	if j < len(r.Dirs) {
		d = r.Dirs[j]
	}
	if !filepath.IsAbs(d) {
		if r.Dir == "" {
			return "", fmt.Errorf("run %d is not on disk (its runs have no directory)", j+1)
		}
		d = filepath.Join(r.Dir, d)
	}
	if _, err := os.Stat(filepath.Join(d, run.ClientFile)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("run %d: %s holds no %s", j+1, d, run.ClientFile)
		}
		return "", fmt.Errorf("run %d: %w", j+1, err)
	}
	return d, nil
}

// runSpan prints "6–10" (or "6" for one run).
func runSpan(from, to int) string {
	if from == to {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d–%d", from, to)
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}
