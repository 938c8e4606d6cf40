package gate

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/perftest/check"
)

// newSessionID returns a fresh session identifier: "s-" and 12 random hex digits.
func newSessionID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

// sessionID is the session the runs this process adds to s belong to, made at the first.
func (s *Series) sessionID() string {
	if s.session == "" {
		s.session = newSessionID()
	}
	return s.session
}

// ShareSession makes the runs added to s from now on ([Series.Add]) belong to the
// session of o's: an interleaved A/B comparison's two sides, measured in one session,
// share its offset.
func (s *Series) ShareSession(o *Series) { s.session = o.sessionID() }

// Sessions counts the series' sessions ([RunStats.Session]; unlabelled runs count as one).
func (s *Series) Sessions() int {
	var seen []string
	for _, r := range s.Runs {
		if !slices.Contains(seen, r.Session) {
			seen = append(seen, r.Session)
		}
	}
	return len(seen)
}

// sessionLabels numbers the session of every run that has stat, in run order, as
// check.Side wants them: the same number for the same session.
func (s *Series) sessionLabels(stat string) []int {
	var ids []string
	var out []int
	for _, r := range s.Runs {
		if _, ok := r.Stats[stat]; !ok {
			continue
		}
		i := slices.Index(ids, r.Session)
		if i < 0 {
			i = len(ids)
			ids = append(ids, r.Session)
		}
		out = append(out, i)
	}
	return out
}

// sameSession reports whether every run of a and b was measured in one session, the same
// for both: an interleaved A/B comparison ([Series.ShareSession]), whose sides share
// the session's offset.
func sameSession(a, b *Series) bool {
	if a.Len() == 0 || b.Len() == 0 {
		return false
	}
	id := a.Runs[0].Session
	if id == "" {
		return false
	}
	for _, s := range []*Series{a, b} {
		for _, r := range s.Runs {
			if r.Session != id {
				return false
			}
		}
	}
	return true
}

// SessionCVs returns the between-session CV of every statistic the series' sessions
// measure (one-way random-effects ANOVA on the logs of the run statistics, as the
// regression gate does: check.BetweenSessionCV), and the degrees of freedom, the
// sessions less one: what a series of fewer sessions of the same workload can store as
// its SessionCV and SessionDF. It is empty with fewer than two sessions.
func (s *Series) SessionCVs() (map[string]float64, float64) {
	out := map[string]float64{}
	df := 0.0
	for _, st := range RunStatList() {
		xs, _ := s.Values(st.Name)
		cv, d := check.BetweenSessionCV(check.Side{Values: xs, Sessions: s.sessionLabels(st.Name)})
		if !math.IsNaN(cv) {
			out[st.Name] = cv
			df = math.Max(df, d)
		}
	}
	return out, df
}

// AppendSession adds o's runs to s as a session of their own (o's runs keep the
// sessions they have, so a series of several sessions adds several), with their
// directories made relative to s's; s then measures how far sessions wander. o must be
// the same workload ([Series.Workload] settings), else nothing is added and the error
// says what differs; a series whose workload is unknown is refused. Save the index with
// [Series.SaveIndex].
func (s *Series) AppendSession(o *Series) error {
	if s.Len() > 0 {
		ds := WorkloadDiff(s, o, nil)
		if len(ds) > 0 {
			var fs []string
			for _, d := range ds {
				fs = append(fs, d.String())
			}
			return fmt.Errorf("%w: append session: another workload: %s", ErrInvalid, strings.Join(fs, "; "))
		}
	} else {
		s.Scenario, s.Workload = o.Scenario, o.Workload
	}
	// Runs of o without a session of their own (recorded before sessions were kept) are
	// one session, distinct from any of s's.
	fresh := newSessionID()
	for i, r := range o.Runs {
		r.Run = len(s.Runs) + 1
		if r.Session == "" {
			r.Session = fresh
		}
		r.Stats = cloneStats(r.Stats)
		s.Runs = append(s.Runs, r)
		d := "."
		if i < len(o.Dirs) {
			d = o.Dirs[i]
		}
		if o.Dir != "" && !filepath.IsAbs(d) {
			d = filepath.Join(o.Dir, d)
		}
		if s.Dir != "" && !strings.Contains(d, "://") {
			if rel, err := filepath.Rel(absDir(s.Dir), absDir(d)); err == nil {
				d = rel
			}
		}
		s.Dirs = append(s.Dirs, d)
	}
	return nil
}

func absDir(d string) string {
	if a, err := filepath.Abs(d); err == nil {
		return a
	}
	return d
}

// checkSessionCV refuses a stored between-session CV that no gate can use.
func (s *Series) checkSessionCV() error {
	for _, k := range slices.Sorted(mapKeys(s.SessionCV)) {
		if v := s.SessionCV[k]; !(v >= 0 && v < 1) {
			return fmt.Errorf("session_cv.%s %v: want a fraction in [0, 1)", k, v)
		}
	}
	if !(s.SessionDF >= 0) || math.IsInf(s.SessionDF, 0) {
		return fmt.Errorf("session_df %v: want a finite number >= 0", s.SessionDF)
	}
	return nil
}

// The documented baseline (docs/regression.md): DefaultBaselineSessions sessions of
// DefaultBaselineRuns runs each, enough for the gate to measure how far sessions wander
// (check.MinSessions), which is what lets it prove "no regression" against a baseline
// recorded on other days or machines. bench/gate's families table measured the gate's
// error rates at this size.
const (
	DefaultBaselineSessions = check.MinSessions
	DefaultBaselineRuns     = 10
)
