package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// RunStatsFile is the file [Run] writes a run's statistics into, beside its records
// ([gate.RunStatsFile]).
const RunStatsFile = gate.RunStatsFile

// DescribeSeries fills s.Workload from s.Scenario, the scenario as JSON: its name, its
// workload's settings ([scenario.Scenario.Workload]) and its target ([scenario.Scenario.Target]), what
// the gate compares. It also writes s.Scenario again as this package writes a scenario
// (its API key cleared), so an index written after it is what perfgate always wrote.
// Every series this package builds or loads is described; a series built elsewhere
// (a history's baseline) must be, or the gate refuses it as an unknown workload.
func DescribeSeries(s *gate.Series) error {
	var sc scenario.Scenario
	if len(s.Scenario) > 0 {
		if err := json.Unmarshal(s.Scenario, &sc); err != nil {
			return err
		}
	}
	setScenario(s, sc)
	return nil
}

// SeriesScenario returns the scenario s ran (decoded from s.Scenario).
func SeriesScenario(s *gate.Series) (scenario.Scenario, error) {
	var sc scenario.Scenario
	if s == nil || len(s.Scenario) == 0 {
		return sc, nil
	}
	err := json.Unmarshal(s.Scenario, &sc)
	return sc, err
}

// setScenario makes sc the scenario of s: its JSON (API key cleared) and its workload.
func setScenario(s *gate.Series, sc scenario.Scenario) {
	sc.APIKey = ""
	if b, err := json.Marshal(sc); err == nil {
		s.Scenario = b
	}
	s.Workload = &gate.Workload{Name: sc.Name, Settings: sc.Workload(), Target: sc.Target()}
}

// NewSeries returns an empty series of sc's runs in dir ("" = kept nowhere), described
// ([DescribeSeries]): the form a series built by hand starts from.
func NewSeries(dir string, sc scenario.Scenario) *gate.Series {
	s := &gate.Series{Dir: dir}
	setScenario(s, sc)
	return s
}

// addRun appends a finished run to s (the first run's scenario is the series').
func addRun(s *gate.Series, o *Outcome, dir string) {
	if s.Len() == 0 {
		setScenario(s, o.Scenario)
	}
	s.Add(o.RunStats(), dir)
}

// saveIndex writes s's runs.json when s has a directory.
func saveIndex(s *gate.Series) error {
	if s.Dir == "" {
		return nil
	}
	return s.SaveIndex()
}

// SeriesOutcome loads run i (0-based) of s back from its directory ([Load]).
func SeriesOutcome(s *gate.Series, i int) (*Outcome, error) {
	if s.Dir == "" || i < 0 || i >= len(s.Dirs) {
		return nil, fmt.Errorf("scenario: series: run %d: not on disk", i+1)
	}
	return Load(filepath.Join(s.Dir, s.Dirs[i]))
}

// SeriesOptions configure [RunSeries] and [Extend].
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
func RunSeries(ctx context.Context, sc scenario.Scenario, k int, dir string, opt SeriesOptions) (*gate.Series, []*Outcome, error) {
	if k < 1 {
		return nil, nil, fmt.Errorf("%w: a series of %d runs: want at least 1", scenario.ErrInvalidScenario, k)
	}
	s := &gate.Series{Dir: dir}
	outs, err := Extend(ctx, s, sc, k, opt)
	return s, outs, err
}

// Extend runs sc n more times into s's directory, numbered after the runs it has
// (run-006, … after five), and rewrites its runs.json: a sequential gate's next look.
func Extend(ctx context.Context, s *gate.Series, sc scenario.Scenario, n int, opt SeriesOptions) ([]*Outcome, error) {
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
			d = filepath.Join(s.Dir, gate.RunDir(i))
		}
		out, err := run(ctx, r, d)
		if err != nil {
			return outs, err
		}
		if out.Interrupted {
			return append(outs, out), fmt.Errorf("scenario %q: run %d was interrupted: %w", sc.NameOrDefault(), i+1, context.Canceled)
		}
		out.dropRecords()
		addRun(s, out, gate.RunDir(i))
		outs = append(outs, out)
		if err := saveIndex(s); err != nil {
			return outs, err
		}
	}
	return outs, nil
}

// SeriesOf makes a series of finished runs (their directories, if any, are kept as
// they are, under their own parent): the form [SaveSeries] and a gate take.
func SeriesOf(outs ...*Outcome) *gate.Series {
	s := &gate.Series{}
	for _, o := range outs {
		d := "."
		if o.Dir != "" {
			d = o.Dir
		}
		addRun(s, o, d)
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
	s := &gate.Series{Dir: dir}
	for i, o := range outs {
		fs, n, err := SaveBaseline(o, filepath.Join(dir, gate.RunDir(i)))
		for _, f := range fs {
			files = append(files, filepath.Join(gate.RunDir(i), f))
		}
		size += n
		if err != nil {
			return files, size, err
		}
		addRun(s, o, gate.RunDir(i))
	}
	if err := saveIndex(s); err != nil {
		return files, size, err
	}
	files = append(files, gate.RunsFile)
	if st, err := os.Stat(filepath.Join(dir, gate.RunsFile)); err == nil {
		size += st.Size()
	}
	return files, size, nil
}

// LoadSeries reads a series of runs back from dir, its workload described
// ([DescribeSeries]): its runs.json when it has one ([gate.LoadSeries]); else its
// run-NNN subdirectories (as `perfgate profile --num-runs` wrote them before runs.json
// existed), each run's statistics read from its runstats.json or computed from its
// records; else dir as one run (a one-run baseline, as [SaveBaseline] wrote it). The
// scenario is the first run's. A statistic read from a file must be a finite number
// from 0 to gate.MaxRunStat (gate.CheckRunStat); the error names the file and field
// ("runs.json: runs[1].stats.ttft_p50: -0.5: want a number >= 0").
func LoadSeries(dir string) (*gate.Series, error) {
	s, err := gate.LoadSeries(dir)
	if err == nil {
		if err := DescribeSeries(s); err != nil {
			return nil, fmt.Errorf("scenario: load series: %s: %w", filepath.Join(dir, gate.RunsFile), err)
		}
		return s, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	s = &gate.Series{Dir: dir}
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
			return nil, fmt.Errorf("scenario: load series: %s holds no runs (no %s, no run-NNN/%s, no %s)", dir, gate.RunsFile, ClientFile, ClientFile)
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
	setScenario(s, o.Scenario)
	return s, nil
}

// runStatsOf returns the run statistics of the run in dir: its [RunStatsFile], else
// computed from its records ([Load]).
func runStatsOf(dir string) (gate.RunStats, error) {
	rs, err := gate.ReadRunStats(dir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return rs, err
	}
	o, err := Load(dir)
	if err != nil {
		return gate.RunStats{}, err
	}
	return o.RunStats(), nil
}

// RunStats computes the run's statistics (gate.RunStatList) from its metrics, whose
// quantiles are metric.Quantile's over the measured requests, and, for the goodput
// fraction, from its requests against the scenario's goodput SLO (Objectives.SLO, else
// the load generator's SLO), as [check.Goodput] counts it.
func (o *Outcome) RunStats() gate.RunStats {
	if o.kept != nil && o.kept.stats != nil {
		rs := *o.kept.stats
		rs.Stats = maps.Clone(rs.Stats)
		return rs
	}
	sc := o.Scenario
	m := o.Metrics
	if m.Scalars == nil { // an Outcome built by hand: its records, summarised now
		m = o.summary().metrics
	}
	rs := gate.RunStats{Seed: sc.Seed, CacheBust: sc.Validity.CacheBust, Stats: map[string]float64{}, Target: sc.TargetName(), Model: sc.Model,
		Requests: int(m.Value(record.MetricRequestCount)), Errors: int(m.Value(record.MetricErrorCount))}
	scopes := []check.Scope{{}}
	for _, c := range slices.Sorted(maps.Keys(m.Classes)) {
		scopes = append(scopes, check.Scope{Key: check.ScopeClass, Name: c}) // a run of classes: each class's statistics too
	}
	for _, sp := range scopes {
		sm := sp.Metrics(m)
		n := int(sm.Value(record.MetricRequestCount))
		for _, s := range gate.RunStatList() {
			switch {
			case s.Metric == "":
			case s.Quantile > 0:
				st, ok := sm.Stat(s.Metric)
				if !ok || st.Count == 0 {
					continue
				}
				v, _ := st.Quantile(s.Quantile)
				if st.Unit == "ms" {
					v /= 1000
				}
				rs.Stats[sp.Named(s.Name)] = v
			default:
				if v, ok := sm.Scalars[s.Metric]; ok && n > 0 {
					if v.Unit == metric.UnitMS {
						v.Value /= 1000 // a latency (job_latency_p50): in seconds, as the statistic's unit
					}
					rs.Stats[sp.Named(s.Name)] = v.Value
				}
			}
		}
	}
	slo := o.Scenario.Objectives.SLO
	if slo.IsZero() {
		slo = o.Scenario.SLO
	}
	if !slo.IsZero() {
		reqs := o.Requests()
		if slo.ITLPercentile > 0 {
			if rg, err := o.RequestsWithGaps(); err == nil {
				reqs = rg
			}
		}
		for _, sp := range scopes {
			mine := sp.Filter(reqs)
			if v := check.Goodput(mine, slo, 0, 0); len(mine) > 0 && v.Status == check.Decided {
				rs.Stats[sp.Named("goodput_fraction")] = v.Value
			}
		}
	}
	return rs
}
