package history

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/reportgen"
)

// BaselinePrefix starts a baseline taken from the history: "history:SCENARIO", with
// options after a "?": "history:nightly?last=5&branch=main", "history:nightly?since=change".
const BaselinePrefix = "history:"

// BaselineSpec selects the results a regression gate takes as its baseline.
type BaselineSpec struct {
	// Scenario names the series (its newest workload, when the name has several).
	Scenario string
	// Branch keeps the results of one branch of the server under test (default
	// "main"; "*" = every branch).
	Branch string
	// Last is how many results to take, newest first (default DefaultBaselineResults,
	// or as many as there are when fewer); a history with fewer than an explicit Last
	// is an error that says how many it has.
	Last int
	// SinceChange takes the results since the series' last change point (in any of the
	// regression gate's primary statistics) instead, at most Last when Last is set.
	SinceChange bool
}

// Defaults of [BaselineSpec].
const (
	DefaultBaselineBranch = "main"
	// DefaultBaselineResults is check.MinSessions: each result is a session, and with
	// that many the gate measures how far sessions wander instead of assuming it.
	DefaultBaselineResults = check.MinSessions
)

// IsBaselineSpec reports whether a --baseline value names the history.
func IsBaselineSpec(s string) bool { return strings.HasPrefix(s, BaselinePrefix) }

// ParseBaselineSpec reads "history:SCENARIO[?last=N&branch=B&since=change]".
func ParseBaselineSpec(s string) (BaselineSpec, error) {
	rest, ok := strings.CutPrefix(s, BaselinePrefix)
	if !ok {
		return BaselineSpec{}, fmt.Errorf("history: baseline %q: want %sSCENARIO", s, BaselinePrefix)
	}
	name, query, _ := strings.Cut(rest, "?")
	if name == "" {
		return BaselineSpec{}, fmt.Errorf("history: baseline %q: no scenario name after %q", s, BaselinePrefix)
	}
	spec := BaselineSpec{Scenario: name}
	q, err := url.ParseQuery(query)
	if err != nil {
		return spec, fmt.Errorf("history: baseline %q: %v", s, err)
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "last":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return spec, fmt.Errorf("history: baseline %q: last=%s: want a count of results ≥ 1", s, v)
			}
			spec.Last = n
		case "branch":
			spec.Branch = v
		case "since":
			if v != "change" {
				return spec, fmt.Errorf("history: baseline %q: since=%s: want since=change", s, v)
			}
			spec.SinceChange = true
		default:
			return spec, fmt.Errorf("history: baseline %q: unknown option %q (want last, branch, since)", s, k)
		}
	}
	return spec, nil
}

func (b BaselineSpec) String() string {
	s := BaselinePrefix + b.Scenario
	var opts []string
	if b.Last > 0 {
		opts = append(opts, "last="+strconv.Itoa(b.Last))
	}
	if b.Branch != "" {
		opts = append(opts, "branch="+b.Branch)
	}
	if b.SinceChange {
		opts = append(opts, "since=change")
	}
	if len(opts) > 0 {
		s += "?" + strings.Join(opts, "&")
	}
	return s
}

// LoadBaseline returns the regression gate's baseline from the history: every run of the
// results spec selects, as a series of runs ([gate.Series]: the newest result's
// scenario as stored, one RunStats per stored run, each result a session of its own),
// and the results it came from. Its Workload is not described (the history stores the
// scenario as JSON and does not read it): the caller describes it (package run's
// DescribeSeries), else a gate refuses it as an unknown workload. Taking several nights' runs puts the night-to-night noise into
// the baseline, which a baseline of one session's runs does not see, and lets the gate
// measure it (from check.MinSessions results on).
func LoadBaseline(ctx context.Context, s Store, spec BaselineSpec) (*gate.Series, []Result, error) {
	branch := cmp.Or(spec.Branch, DefaultBaselineBranch)
	if branch == "*" {
		branch = ""
	}
	q := Query{Scenario: spec.Scenario, Branch: branch}
	rs, err := s.Results(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	if len(rs) == 0 {
		return nil, nil, fmt.Errorf("history: baseline %s: no results of scenario %q on branch %q (perfgate history list shows the series)", spec, spec.Scenario, cmp.Or(branch, "*"))
	}
	// The newest workload of that name: an older workload is another series.
	key := rs[len(rs)-1].Series()
	var series []Result
	for _, r := range rs {
		if r.Series() == key {
			series = append(series, r)
		}
	}
	from := 0
	if spec.SinceChange {
		for _, m := range PrimaryStats() {
			tr := NewTrend(series, m)
			if len(tr.Values) == 0 {
				continue
			}
			tr.Detect(Detection{}, State{})
			if n := len(tr.ChangePoints); n > 0 {
				// Index into tr.Results; map back to series by ID.
				id := tr.Results[tr.ChangePoints[n-1].Index].ID
				for i := range series {
					if series[i].ID == id {
						from = max(from, i)
					}
				}
			}
		}
		if spec.Last > 0 {
			from = max(from, len(series)-spec.Last)
		}
	} else {
		if spec.Last > len(series) {
			return nil, nil, fmt.Errorf("history: baseline %s: scenario %q has %d %s on branch %q; last=%d needs %d (record more, or ask for last=%d)",
				spec, spec.Scenario, len(series), pluralResults(len(series)), cmp.Or(branch, "*"), spec.Last, spec.Last, len(series))
		}
		from = max(0, len(series)-cmp.Or(spec.Last, DefaultBaselineResults))
	}
	picked := series[from:]
	newest := picked[len(picked)-1]
	if len(newest.Config) == 0 {
		return nil, nil, fmt.Errorf("history: baseline %s: result %d has no scenario (recorded by an older perfgate); record the series again", spec, newest.ID)
	}
	var sc struct {
		Seed uint64 `json:"seed"`
	}
	if err := json.Unmarshal(newest.Config, &sc); err != nil {
		return nil, nil, fmt.Errorf("history: baseline %s: result %d's scenario: %w", spec, newest.ID, err)
	}
	out := &gate.Series{Scenario: newest.Config}
	for _, r := range picked {
		for _, run := range r.Runs {
			// Each result is a session of its own: the gate measures how far they wander.
			out.Runs = append(out.Runs, gate.RunStats{Run: len(out.Runs) + 1, Stats: run.Stats, Seed: sc.Seed, Session: fmt.Sprintf("history-%d", r.ID)})
			out.Dirs = append(out.Dirs, runDir(r, run, len(r.Runs)))
		}
	}
	return out, picked, nil
}

// runDir names where a stored run's artifacts were: the result's directory, or its
// run-NNN subdirectory when it had several runs.
func runDir(r Result, run Run, runs int) string {
	if runs > 1 && !strings.Contains(r.Artifacts, "://") {
		return filepath.Join(r.Artifacts, gate.RunDir(run.Run-1))
	}
	return r.Artifacts
}

// PrimaryStats are the regression gate's primary statistics ([gate.RunStatList]):
// what `history check` watches and a since-change baseline looks at by default.
func PrimaryStats() []string {
	var out []string
	for _, s := range gate.RunStatList() {
		if s.Primary {
			out = append(out, s.Name)
		}
	}
	return out
}

// WriteBaseline writes series (from [LoadBaseline]) into dir as a baseline directory
// (runs.json) that package run's LoadSeries, and so `perfgate profile --baseline DIR` and
// perftest.LoadBaseline, read. Run directories are given relative to dir when they
// are local paths.
func WriteBaseline(dir string, series *gate.Series) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	idx := *series
	idx.Dirs = make([]string, len(series.Dirs))
	for i, d := range series.Dirs {
		idx.Dirs[i] = d
		if d != "" && !strings.Contains(d, "://") {
			if rel, err := filepath.Rel(absPath(dir), d); err == nil {
				idx.Dirs[i] = rel
			}
		}
	}
	err := reportgen.WriteFileAtomic(filepath.Join(dir, gate.RunsFile), func(w io.Writer) error { return reportgen.WriteJSON(w, idx) })
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}
