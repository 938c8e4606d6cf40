package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/reportgen"
)

// RunsFile indexes a series of runs (a K-run baseline): the scenario and each run's
// [RunStats] and directory, written by [Series.SaveIndex] (and so by package
// scenario's RunSeries, Repeat and SaveSeries).
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
	// Scenario is the scenario the runs ran (the first run's, as run, its API key
	// cleared), as JSON: the gate keeps it as data, written back as read.
	Scenario json.RawMessage `json:"scenario"`
	// Workload is what the gate compares of the scenario: its workload's identity and
	// where its requests went, flattened by the scenario side (package run fills
	// it when it builds or loads a series). nil = unknown: [Compare] then refuses to
	// compare, and says why. Not in runs.json (derived from Scenario).
	Workload *Workload `json:"-"`
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
	for _, st := range RunStatList() {
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

// RunDir names run i's (0-based) directory in a series: "run-001".
func RunDir(i int) string { return fmt.Sprintf("run-%03d", i+1) }

// Add appends a finished run's statistics to s, numbered after the runs s has
// (rs.Run is set) and labelled with the session of the runs this process adds to s
// (rs.Session is set; one session, made at the first), with its directory relative to
// s.Dir ("." for a directory that is one run).
func (s *Series) Add(rs RunStats, dir string) {
	rs.Run = len(s.Runs) + 1
	rs.Session = s.sessionID()
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

// write writes s's index, RunsFile, into s.Dir: indented, as every JSON artifact
// (the raw scenario re-indented with it, so a runs.json read and written again is the
// same bytes).
func (s *Series) write() error {
	if err := reportgen.WriteFileAtomic(filepath.Join(s.Dir, RunsFile), func(w io.Writer) error { return reportgen.WriteJSON(w, s) }); err != nil {
		return fmt.Errorf("scenario: series: %w", err)
	}
	return nil
}

// LoadSeries reads the series indexed by dir's runs.json ([RunsFile]). A directory
// without one gives an error wrapping fs.ErrNotExist (package run's LoadSeries
// then reads run-NNN directories, or dir as one run). A statistic read from the file
// must be a finite number from 0 to [MaxRunStat] ([CheckRunStat]); the error names the
// file and field ("runs.json: runs[1].stats.ttft_p50: -0.5: want a number >= 0"). The
// series' Workload is unknown (nil) until the scenario side describes it.
func LoadSeries(dir string) (*Series, error) {
	b, err := os.ReadFile(filepath.Join(dir, RunsFile))
	if err != nil {
		return nil, fmt.Errorf("scenario: load series: %w", err)
	}
	s, err := readIndex(filepath.Join(dir, RunsFile), b)
	if err != nil {
		return nil, err
	}
	s.Dir = dir
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
	if sc := bytes.TrimSpace(s.Scenario); len(sc) > 0 && sc[0] != '{' && string(sc) != "null" {
		return nil, fmt.Errorf("scenario: load series: %s: scenario: %.40s: want an object", name, sc)
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

// Workload is what a regression gate knows of a series' scenario, flattened into
// named settings by the scenario side (package scenario: Scenario.Workload and
// Scenario.Target), so the gate compares workloads without the load generator's types.
type Workload struct {
	// Name is the scenario's name.
	Name string
	// Settings decide what a run sent, named as in scenario files ({"isl",
	// "normal:128,20"}, {"concurrency", "10"}, …): the workload's identity. Two series
	// with the same Settings sent the same requests.
	Settings [][2]string
	// Target says where the requests went and what answered ({"urls", "mock"},
	// {"mock.ttft_ms", "fixed:20"}, …): shown beside a verdict, never part of the
	// identity.
	Target [][2]string
}
