package run

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/reportgen/sweep"
)

// A Runner runs one scenario into an artifact directory, as [Run] does. [Repeat],
// [Sweep] and [Search] call it once per run, so a caller can bind options (progress,
// a shared tokenizer) or map errors around Run. nil = Run without options.
type Runner func(ctx context.Context, sc scenario.Scenario, dir string) (*Outcome, error)

func (r Runner) orRun() Runner {
	if r != nil {
		return r
	}
	return func(ctx context.Context, sc scenario.Scenario, dir string) (*Outcome, error) {
		return Run(ctx, sc, dir)
	}
}

// Axis is the load a sweep or a search varies.
type Axis string

// Axes.
const (
	Concurrency Axis = "concurrency" // closed-loop workers (whole numbers)
	Rate        Axis = "rate"        // open-loop requests per second
)

// AtLoad returns s with its load on axis a set to x: Concurrency = int(x), or Rate = x.
func AtLoad(s scenario.Scenario, a Axis, x float64) scenario.Scenario {
	if a == Rate {
		s.Rate = x
	} else {
		s.Concurrency = int(x)
	}
	return s
}

// dir names the artifact directory of load x on a: "concurrency-8", "rate-2.5".
func (a Axis) dir(x float64) string {
	if a == Rate {
		return "rate-" + strconv.FormatFloat(x, 'g', 6, 64)
	}
	return fmt.Sprintf("concurrency-%d", int(x))
}

func (a Axis) check(levels ...float64) error {
	if a != Concurrency && a != Rate {
		return fmt.Errorf("%w: load axis %q: want concurrency or rate", scenario.ErrInvalidScenario, a)
	}
	for _, x := range levels {
		if !(x > 0) || a == Concurrency && x != float64(int(x)) {
			return fmt.Errorf("%w: %s %g: want a positive%s number", scenario.ErrInvalidScenario, a, x, map[bool]string{true: " whole"}[a == Concurrency])
		}
	}
	return nil
}

// Passed reports whether every verdict of [Outcome.Check] passed, and if not, the
// first failure's summary.
func (o *Outcome) Passed() (bool, string) {
	for _, v := range o.Verdicts() {
		if !v.Pass {
			return false, v.Summary
		}
	}
	return true, ""
}

// RepeatFile is the file [Repeat] writes its estimates into.
const RepeatFile = "repeat.json"

// Repeat runs sc n times, each the same seeded workload (sc.Seed every time), into
// dir/run-001, dir/run-002, …, and writes dir/runs.json (the series: each run's
// [scenario.RunStats]; the directory is a baseline [LoadSeries] reads) and dir/repeat.json:
// each metric's mean across the runs with a Student-t interval at confidence
// (sweep.Repeat), and the runs' sweep report (reportgen.SweepReportFile, with
// repeat.csv). A run's error stops it and is returned with the outcomes so far.
//
// The outcomes keep their metrics, statistics and verdicts, not their records: each
// run's records are let go once its verdicts are computed (they stay on disk in its
// directory; Load reads them back), so n runs hold one run's records at a time, not n.
// With dir "" the records are kept, having nowhere else to be, and nothing is written.
func Repeat(ctx context.Context, sc scenario.Scenario, n int, confidence float64, dir string, run Runner) ([]*Outcome, []sweep.Estimate, error) {
	if n < 1 || !(confidence > 0 && confidence < 1) {
		return nil, nil, fmt.Errorf("%w: repeat %d runs at confidence %g: want n >= 1 and a level in (0, 1)", scenario.ErrInvalidScenario, n, confidence)
	}
	_, outs, err := RunSeries(ctx, sc, n, dir, SeriesOptions{Run: run})
	if err != nil {
		return outs, nil, err
	}
	var ms []record.Metrics
	for _, o := range outs {
		ms = append(ms, o.Metrics)
	}
	est := sweep.Repeat(ms, confidence)
	if dir == "" {
		return outs, est, nil
	}
	if err := reportgen.WriteFileAtomic(filepath.Join(dir, RepeatFile), func(w io.Writer) error { return reportgen.WriteJSON(w, est) }); err != nil {
		return outs, est, fmt.Errorf("scenario %q: %w", sc.NameOrDefault(), err)
	}
	// The runs as one load level of a sweep: its report draws them as one point on
	// the latency–throughput charts with their run-to-run intervals.
	a, load := Concurrency, float64(sc.Concurrency)
	if sc.Rate > 0 {
		a, load = Rate, sc.Rate
	}
	pts := make([]sweep.Point, len(outs))
	for i, o := range outs {
		ok, note := o.Passed()
		pts[i] = sweep.Point{Load: load, Repeat: i, Metrics: o.Metrics, Pass: ok, Note: note, Dir: o.Dir}
	}
	if err := writeSweep(dir, "repeat", fmt.Sprintf("perfgate: %d runs of %s", n, sc.NameOrDefault()), a, pts); err != nil {
		return outs, est, err
	}
	return outs, est, nil
}

// Sweep runs sc at each load level on axis a, repeats times each (seeds sc.Seed,
// sc.Seed+1, …), into dir/concurrency-4 (dir/concurrency-4/run-001, … when repeats >
// 1), and writes dir/sweep.csv and the sweep HTML report (reportgen.SweepReportFile).
// Each point passes when its run met every objective. A run's error stops the sweep
// and is returned with the points so far.
//
// Once a run is stopped as over-saturated (Abort's "over_saturation" rule,
// loadgen.AbortSaturation), no higher level is run: each is a point with Skipped
// saying which level saturated, so the sweep still lists every level asked for.
// Lower levels, and the saturated level's other repeats, still run.
func Sweep(ctx context.Context, sc scenario.Scenario, a Axis, levels []float64, repeats int, dir string, run Runner) ([]sweep.Point, error) {
	if err := a.check(levels...); err != nil {
		return nil, err
	}
	run = run.orRun()
	repeats = max(repeats, 1)
	var pts []sweep.Point
	saturated, satDir := 0.0, "" // the lowest level stopped as over-saturated (0 = none)
	for _, l := range levels {
		for rep := range repeats {
			if saturated > 0 && l > saturated {
				pts = append(pts, sweep.Point{Load: l, Repeat: rep, Skipped: fmt.Sprintf("skipped: %s %g was over-saturated (%s)", a, saturated, satDir)})
				continue
			}
			s := AtLoad(sc, a, l)
			s.Seed = sc.Seed + uint64(rep)
			d := filepath.Join(dir, a.dir(l))
			if repeats > 1 {
				d = filepath.Join(d, fmt.Sprintf("run-%03d", rep+1))
			}
			out, err := run(ctx, s, d)
			if err != nil {
				return pts, err
			}
			ok, note := out.Passed()
			sat := out.AbortedBy() == loadgen.AbortSaturation
			pts = append(pts, sweep.Point{Load: l, Repeat: rep, Metrics: out.Metrics, Pass: ok, Note: note, Dir: d, Saturated: sat})
			if sat && (saturated == 0 || l < saturated) {
				saturated, satDir = l, d
			}
		}
	}
	return pts, writeSweep(dir, "sweep", fmt.Sprintf("perfgate: %s sweep of %s", a, sc.NameOrDefault()), a, pts)
}

// Search bisects (sweep.Search) for the highest load on axis a in [so.Lo, so.Hi] at
// which a run of sc meets every objective, one run per probe into dir/concurrency-N,
// and writes dir/search.csv and the sweep HTML report of the probes. Concurrency
// probes are whole numbers. A run's error stops the search and is returned with the
// probes so far.
func Search(ctx context.Context, sc scenario.Scenario, a Axis, so sweep.SearchOptions, dir string, run Runner) (sweep.SearchResult, error) {
	if err := a.check(); err != nil {
		return sweep.SearchResult{}, err
	}
	run = run.orRun()
	so.Integer = a == Concurrency
	res, err := sweep.Search(ctx, so, func(ctx context.Context, load float64) (sweep.Point, error) {
		d := filepath.Join(dir, a.dir(load))
		out, err := run(ctx, AtLoad(sc, a, load), d)
		if err != nil {
			return sweep.Point{}, err
		}
		ok, note := out.Passed()
		return sweep.Point{Metrics: out.Metrics, Pass: ok, Note: note, Dir: d, Saturated: out.AbortedBy() == loadgen.AbortSaturation}, nil
	})
	if err != nil {
		return res, err
	}
	return res, writeSweep(dir, "search", fmt.Sprintf("perfgate: %s search for %s", a, sc.NameOrDefault()), a, res.Probes)
}

// writeSweep writes NAME.csv and the sweep HTML report of pts into dir.
func writeSweep(dir, name, title string, a Axis, pts []sweep.Point) error {
	if err := reportgen.WriteFileAtomic(filepath.Join(dir, name+".csv"), func(w io.Writer) error { return sweep.WriteSweepCSV(w, string(a), pts) }); err != nil {
		return fmt.Errorf("scenario: %s: %w", name, err)
	}
	if len(pts) == 0 {
		return nil
	}
	err := reportgen.WriteFileAtomic(filepath.Join(dir, reportgen.SweepReportFile), func(w io.Writer) error {
		return reportgen.WriteSweepReport(w, dir, title, string(a), pts)
	})
	if err != nil {
		return fmt.Errorf("scenario: %s: %w", name, err)
	}
	return nil
}
