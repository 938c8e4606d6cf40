package history

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
)

// Result is one gated result: K runs of one scenario against one build of the server,
// with what identifies them and what was decided.
type Result struct {
	// ID is the store's number for the result (0 before it is added).
	ID int64 `json:"id,omitempty"`
	// Key identifies the result's content ([Result.ComputeKey] when empty): adding the
	// same result twice (a retried CI step, `history add` of a directory already
	// recorded by `profile --history`) keeps one.
	Key string `json:"key"`
	// Fingerprint is the workload fingerprint ([Fingerprint]) and Scenario the scenario's
	// name; together they key the series the result belongs to.
	Fingerprint string `json:"fingerprint"`
	Scenario    string `json:"scenario"`
	// Commit, Branch and Build identify the server under test (flags, or the CI
	// system's variables: [FromEnv]).
	Commit string `json:"commit,omitempty"`
	Branch string `json:"branch,omitempty"`
	Build  string `json:"build,omitempty"`
	// Version is the perfgate version that measured it.
	Version string `json:"perfgate_version,omitempty"`
	// Host is the measuring machine ("hostname (N CPUs, model)") and Topology what was
	// measured ("mock", "1 url", "4 shards × 2 urls").
	Host     string `json:"host,omitempty"`
	Topology string `json:"topology,omitempty"`
	// Created is when the (first) run started; a series is ordered by it.
	Created time.Time `json:"created"`
	// Recorded is when the result was added to the store (set by the store).
	Recorded time.Time `json:"recorded,omitzero"`
	// Artifacts is the path or URL of the result's artifacts.
	Artifacts string `json:"artifacts,omitempty"`
	// Config is the scenario as run (JSON, API key cleared): what a regression gate
	// reads when it takes its baseline from the history ([LoadBaseline]).
	Config json.RawMessage `json:"scenario_config,omitempty"`
	// Runs are each run's run-level statistics, in run order.
	Runs []Run `json:"runs"`
	// Verdicts are the result's verdicts, in the order they were printed.
	Verdicts []Verdict `json:"verdicts,omitempty"`
}

// Run is one run's statistics over its measured window, keyed by the regression
// gate's names ("ttft_p50", "output_tps", …).
type Run struct {
	Run   int                `json:"run"`
	Stats map[string]float64 `json:"stats"`
}

// Verdict is one verdict of a result, as stored.
type Verdict struct {
	Check   string  `json:"check"`
	Pass    bool    `json:"pass"`
	Status  string  `json:"status,omitempty"` // "" (decided), "inconclusive", "invalid"
	Summary string  `json:"summary"`
	Value   float64 `json:"value,omitempty"`
	Unit    string  `json:"unit,omitempty"`
}

// SeriesKey names a series: one workload, one scenario.
type SeriesKey struct {
	Fingerprint string `json:"fingerprint"`
	Scenario    string `json:"scenario"`
}

func (k SeriesKey) String() string { return k.Scenario + " [" + short(k.Fingerprint, 12) + "]" }

// Series returns the key of the series r belongs to.
func (r *Result) Series() SeriesKey { return SeriesKey{r.Fingerprint, r.Scenario} }

// Metrics returns the names of the statistics of r's runs, sorted.
func (r *Result) Metrics() []string {
	var names []string
	for _, run := range r.Runs {
		for n := range run.Stats {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names
}

// Values returns metric's value in each run of r that has it, in run order.
func (r *Result) Values(metric string) []float64 {
	var v []float64
	for _, run := range r.Runs {
		if x, ok := run.Stats[metric]; ok && !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	return v
}

// Passed reports whether every verdict of r passed.
func (r *Result) Passed() bool {
	for _, v := range r.Verdicts {
		if !v.Pass {
			return false
		}
	}
	return true
}

// ComputeKey returns the content key of r: a digest of what was measured (series,
// start time, host, statistics), not of how it is labelled (commit, branch, build,
// where its artifacts are) nor of when it was added: the same run recorded twice,
// once by profile --history and once by history add, is one result.
func (r *Result) ComputeKey() string {
	type keyed struct {
		F, S, H string
		T       int64
		R       []Run
	}
	b, _ := json.Marshal(keyed{r.Fingerprint, r.Scenario, r.Host, r.Created.UnixNano(), r.Runs})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// errNoStats says why a run without statistics is refused.
const errNoStats = "no statistics (no request of the run succeeded?): the history keeps a run by its statistics, so it cannot keep this one"

// Validate reports what is missing from r for it to be stored, or wrong: a run without
// statistics, a statistic that is not a finite number from 0 to
// [gate.MaxRunStat] ([gate.CheckRunStat]).
func (r *Result) Validate() error {
	switch {
	case r.Fingerprint == "":
		return fmt.Errorf("history: result has no workload fingerprint")
	case r.Scenario == "":
		return fmt.Errorf("history: result has no scenario name")
	case len(r.Runs) == 0:
		return fmt.Errorf("history: result %q has no runs", r.Scenario)
	case r.Created.IsZero():
		return fmt.Errorf("history: result %q has no start time", r.Scenario)
	}
	for _, run := range r.Runs {
		if len(run.Stats) == 0 {
			return fmt.Errorf("history: result %q run %d: %s", r.Scenario, run.Run, errNoStats)
		}
		for _, n := range slices.Sorted(maps.Keys(run.Stats)) {
			if err := gate.CheckRunStat(n, run.Stats[n]); err != nil {
				return fmt.Errorf("history: result %q run %d: %s: %w", r.Scenario, run.Run, n, err)
			}
		}
	}
	return nil
}

// Center is the one value a result contributes to a series for a metric: the
// geometric mean of its runs (the regression gate compares ratios on a log scale), or
// the arithmetic mean when a run's value is not positive. NaN when there is no run.
func Center(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	logs, pos := 0.0, true
	sum := 0.0
	for _, v := range values {
		sum += v
		if v <= 0 {
			pos = false
		} else {
			logs += math.Log(v)
		}
	}
	if pos {
		return math.Exp(logs / float64(len(values)))
	}
	return sum / float64(len(values))
}

// HigherIsBetter reports whether a larger value of the named run statistic is better
// (throughputs, the goodput fraction), as the regression gate defines it
// ([gate.RunStatList]); unknown names are taken as latencies (lower is better).
func HigherIsBetter(metric string) bool {
	s, _ := gate.LookupRunStat(metric)
	return s.HigherIsBetter
}

// Format prints a value of the named run statistic in its unit ("97.5ms", "812
// tok/s"); a statistic perfgate does not define prints as a plain number.
func Format(metric string, v float64) string {
	s, ok := gate.LookupRunStat(metric)
	if !ok {
		return check.None.Format(v)
	}
	return s.Unit.Format(v)
}

// short returns s cut to n characters.
func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// shortCommit is a commit as people read it: its first 10 characters, or "(no commit)".
func shortCommit(c string) string { return cmp.Or(short(c, 10), "(no commit)") }
