package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/reportgen"
)

// RunsFile indexes a series of runs (a K-run baseline): the scenario and each run's
// [RunStats] and directory, written by [RunSeries], [Repeat] and [SaveSeries].
const RunsFile = "runs.json"

// DefaultRuns is the number of runs a baseline, and each side of a regression gate,
// starts with.
const DefaultRuns = 5

// A Series is K runs of one seeded workload, the unit a regression gate compares: the
// scenario (its API key cleared) and each run's statistics and directory, in run order.
// It is what a baseline directory holds, and what [LoadSeries] reads back.
type Series struct {
	// Dir is the series' directory ("" for runs kept nowhere).
	Dir string `json:"-"`
	// Scenario is the scenario the runs ran (the first run's, as run).
	Scenario Scenario `json:"scenario"`
	// Runs are the runs' statistics, Runs[i].Run = i+1.
	Runs []RunStats `json:"runs"`
	// Dirs are the runs' directories relative to Dir ("run-001", …; "." for a
	// directory that is one run).
	Dirs []string `json:"dirs"`
	// PriorCV is a stored between-run CV per statistic ("ttft_p50": 0.03), for a
	// series of one run: what a gate assumes for its noise (measured, say, by an
	// earlier K-run series of the same workload: [Series.CVs]). A series of several
	// runs measures its own and ignores it. Kept in runs.json.
	PriorCV map[string]float64 `json:"prior_cv,omitempty"`
	// SessionCV is a stored between-session CV per statistic ("ttft_p50": 0.02), for a
	// series of fewer than check.MinSessions sessions, with SessionDF the degrees of
	// freedom it was measured with (0 = taken as known): what a gate assumes for how far
	// sessions wander ([Series.SessionCVs] of an earlier series of several sessions, or
	// of a history). A series of enough sessions measures its own. Kept in runs.json.
	SessionCV map[string]float64 `json:"session_cv,omitempty"`
	SessionDF float64            `json:"session_df,omitzero"`

	session string // the session this process's runs are added in ("" until the first)
}

// CVs returns the measured between-run CV of every statistic that has one ([Series.CV];
// none with fewer than two runs): what a one-run series of the same workload can store
// as its PriorCV.
func (s *Series) CVs() map[string]float64 {
	out := map[string]float64{}
	for _, st := range RunStatList {
		if cv := s.CV(st.Name); !math.IsNaN(cv) {
			out[st.Name] = cv
		}
	}
	return out
}

// Len is the number of runs.
func (s *Series) Len() int { return len(s.Runs) }

// Values returns the named statistic of every run that has it, in run order, and how
// many runs lack it.
func (s *Series) Values(stat string) (xs []float64, missing int) {
	for _, r := range s.Runs {
		if v, ok := r.Stats[stat]; ok {
			xs = append(xs, v)
		} else {
			missing++
		}
	}
	return xs, missing
}

// CV returns the between-run coefficient of variation of the named statistic (the
// sample standard deviation of its logs; NaN with fewer than two positive values):
// what a one-run comparison assumes for the baseline's noise.
func (s *Series) CV(stat string) float64 {
	xs, _ := s.Values(stat)
	var ls []float64
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			ls = append(ls, math.Log(x))
		}
	}
	if len(ls) < 2 {
		return math.NaN()
	}
	var m float64
	for _, l := range ls {
		m += l
	}
	m /= float64(len(ls))
	var v float64
	for _, l := range ls {
		v += (l - m) * (l - m)
	}
	v /= float64(len(ls) - 1)
	return math.Sqrt(math.Expm1(v))
}

// Outcome loads run i (0-based) back from its directory ([Load]).
func (s *Series) Outcome(i int) (*Outcome, error) {
	if s.Dir == "" || i < 0 || i >= len(s.Dirs) {
		return nil, fmt.Errorf("scenario: series: run %d: not on disk", i+1)
	}
	return Load(filepath.Join(s.Dir, s.Dirs[i]))
}

// RunDir names run i's (0-based) directory in a series: "run-001".
func RunDir(i int) string { return fmt.Sprintf("run-%03d", i+1) }

// add appends a finished run to s.
func (s *Series) add(o *Outcome, dir string) {
	rs := o.RunStats()
	rs.Run = len(s.Runs) + 1
	rs.Session = s.sessionID()
	if len(s.Runs) == 0 {
		s.Scenario = o.Scenario
	}
	s.Runs = append(s.Runs, rs)
	s.Dirs = append(s.Dirs, dir)
}

// SaveIndex writes s's index, runs.json, into s.Dir (an error when s has no Dir): how a
// series read back by [LoadSeries] keeps a change to it, e.g. a PriorCV stored in a
// one-run baseline.
func (s *Series) SaveIndex() error {
	if s.Dir == "" {
		return errors.New("scenario: series: save index: the series has no directory")
	}
	return s.write()
}

// write writes s's index, RunsFile, into s.Dir.
func (s *Series) write() error {
	if s.Dir == "" {
		return nil
	}
	sc := s.Scenario
	sc.APIKey = ""
	idx := *s
	idx.Scenario = sc
	if err := reportgen.WriteFileAtomic(filepath.Join(s.Dir, RunsFile), func(w io.Writer) error { return writeJSON(w, idx) }); err != nil {
		return fmt.Errorf("scenario: series: %w", err)
	}
	return nil
}

// SeriesOptions configure [RunSeries] and [Series.Extend].
type SeriesOptions struct {
	// Run runs each run (nil = [Run] without options).
	Run Runner
	// CacheBust sets each run's Validity.CacheBust: a per-run random salt starts every
	// prompt, so a server's prefix cache cannot serve a run from an earlier run of the
	// same seeded workload.
	CacheBust bool
}

// RunSeries runs sc k times into dir/run-001, dir/run-002, … (each the same seeded
// workload: sc.Seed every time), and writes dir/runs.json: a directory [LoadSeries]
// reads back as a baseline. Each run's records are let go once its statistics and
// verdicts are computed (they stay on disk), so k runs hold one run's records at a
// time. A run's error stops the series and is returned with the runs so far.
func RunSeries(ctx context.Context, sc Scenario, k int, dir string, opt SeriesOptions) (*Series, []*Outcome, error) {
	if k < 1 {
		return nil, nil, fmt.Errorf("%w: a series of %d runs: want at least 1", ErrInvalidScenario, k)
	}
	s := &Series{Dir: dir}
	outs, err := s.Extend(ctx, sc, k, opt)
	return s, outs, err
}

// Extend runs sc n more times into the series' directory, numbered after the runs it
// has (run-006, … after five), and rewrites its runs.json: a sequential gate's next
// look.
func (s *Series) Extend(ctx context.Context, sc Scenario, n int, opt SeriesOptions) ([]*Outcome, error) {
	run := opt.Run.orRun()
	var outs []*Outcome
	for range n {
		i := len(s.Runs)
		r := sc
		if opt.CacheBust {
			r.Validity.CacheBust = true
		}
		d := ""
		if s.Dir != "" {
			d = filepath.Join(s.Dir, RunDir(i))
		}
		out, err := run(ctx, r, d)
		if err != nil {
			return outs, err
		}
		if out.Interrupted {
			return append(outs, out), fmt.Errorf("scenario %q: run %d was interrupted: %w", sc.WithDefaults().Name, i+1, context.Canceled)
		}
		out.dropRecords()
		s.add(out, RunDir(i))
		outs = append(outs, out)
		if err := s.write(); err != nil {
			return outs, err
		}
	}
	return outs, nil
}

// SeriesOf makes a series of finished runs (their directories, if any, are kept as
// they are, under their own parent): the form [SaveSeries] and a gate take.
func SeriesOf(outs ...*Outcome) *Series {
	s := &Series{}
	for _, o := range outs {
		d := "."
		if o.Dir != "" {
			d = o.Dir
		}
		s.add(o, d)
	}
	return s
}

// SaveSeries writes into dir a baseline of the finished runs outs: each run's
// [BaselineFiles] into dir/run-001, … (a single run is still saved as run-001), and
// dir/runs.json. It returns the files written (relative to dir) and their size.
func SaveSeries(dir string, outs ...*Outcome) (files []string, size int64, err error) {
	if len(outs) == 0 {
		return nil, 0, errors.New("scenario: save baseline: no runs")
	}
	s := &Series{Dir: dir}
	for i, o := range outs {
		fs, n, err := SaveBaseline(o, filepath.Join(dir, RunDir(i)))
		for _, f := range fs {
			files = append(files, filepath.Join(RunDir(i), f))
		}
		size += n
		if err != nil {
			return files, size, err
		}
		s.add(o, RunDir(i))
	}
	if err := s.write(); err != nil {
		return files, size, err
	}
	files = append(files, RunsFile)
	if st, err := os.Stat(filepath.Join(dir, RunsFile)); err == nil {
		size += st.Size()
	}
	return files, size, nil
}

// LoadSeries reads a series of runs back from dir: its runs.json when it has one; else
// its run-NNN subdirectories (as `perfgate profile --num-runs` wrote them before
// runs.json existed), each run's statistics read from its runstats.json or computed
// from its records; else dir as one run (a one-run baseline, as [SaveBaseline] wrote
// it). The scenario is the first run's. A statistic read from a file must be a finite
// number from 0 to [MaxRunStat] ([CheckRunStat]); the error names the file and field
// ("runs.json: runs[1].stats.ttft_p50: -0.5: want a number >= 0").
func LoadSeries(dir string) (*Series, error) {
	b, err := os.ReadFile(filepath.Join(dir, RunsFile))
	if err == nil {
		s, err := readIndex(filepath.Join(dir, RunsFile), b)
		if err != nil {
			return nil, err
		}
		s.Dir = dir
		return s, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("scenario: load series: %w", err)
	}
	s := &Series{Dir: dir}
	matches, _ := filepath.Glob(filepath.Join(dir, "run-[0-9][0-9][0-9]"))
	slices.Sort(matches)
	dirs := []string{}
	for _, m := range matches {
		if st, err := os.Stat(filepath.Join(m, ClientFile)); err == nil && !st.IsDir() {
			dirs = append(dirs, filepath.Base(m))
		}
	}
	if len(dirs) == 0 {
		if _, err := os.Stat(filepath.Join(dir, ClientFile)); err != nil {
			return nil, fmt.Errorf("scenario: load series: %s holds no runs (no %s, no run-NNN/%s, no %s)", dir, RunsFile, ClientFile, ClientFile)
		}
		dirs = []string{"."}
	}
	for i, d := range dirs {
		rs, err := runStatsOf(filepath.Join(dir, d))
		if err != nil {
			return nil, fmt.Errorf("scenario: load series: %w", err)
		}
		rs.Run = i + 1
		s.Runs, s.Dirs = append(s.Runs, rs), append(s.Dirs, d)
	}
	o, err := Load(filepath.Join(dir, dirs[0]))
	if err != nil {
		return nil, fmt.Errorf("scenario: load series: %w", err)
	}
	s.Scenario = o.Scenario
	return s, nil
}

// readIndex reads a series' index, runs.json, from b (read from the file name): as many
// runs as directories, at least one, and every statistic a finite number from 0 to
// [MaxRunStat] ([CheckRunStat]). The directories are not checked: a baseline written
// from a history points at run directories outside its own.
func readIndex(name string, b []byte) (*Series, error) {
	s := &Series{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("scenario: load series: %s: %w", name, err)
	}
	if len(s.Runs) == 0 || len(s.Runs) != len(s.Dirs) {
		return nil, fmt.Errorf("scenario: load series: %s: %d runs and %d directories; want as many, at least one", name, len(s.Runs), len(s.Dirs))
	}
	for i, r := range s.Runs {
		if err := checkStats(r.Stats, fmt.Sprintf("runs[%d].stats", i)); err != nil {
			return nil, fmt.Errorf("scenario: load series: %s: %w", name, err)
		}
	}
	if err := s.checkSessionCV(); err != nil {
		return nil, fmt.Errorf("scenario: load series: %s: %w", name, err)
	}
	return s, nil
}

// Targets describes where each run's requests went, de-duplicated: shown beside a
// verdict, never part of the workload's identity.
func (s *Series) Targets() string {
	var ts []string
	for _, r := range s.Runs {
		t := r.Target
		if r.Model != "" {
			t += " (model " + r.Model + ")"
		}
		if t != "" && !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	return strings.Join(ts, "; ")
}
