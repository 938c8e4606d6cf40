// Package sweep plans and summarises multi-run studies: repeated runs, sweeps and the
// highest load that meets the objectives. Repeated runs are reported as a mean with a
// confidence interval, sweeps go over concurrency or request rate, and a bisection
// search finds the highest load that still meets them.
//
//	levels, _ := sweep.Levels("1,2,4,8")                  // or "1:64:x2", "10:100:+10"
//	res, err := sweep.Search(ctx, sweep.SearchOptions{Lo: 1, Hi: 64, Integer: true},
//		func(ctx context.Context, load float64) (sweep.Point, error) { … run one level … })
//	sweep.WriteRepeatTable(os.Stdout, sweep.Repeat(metricsPerRun, 0.95))
//
// sweep runs nothing itself: the caller's probe runs one load level (the CLI uses
// perftest/run) and says whether it passed. That keeps this package pure and
// testable with fake probes. It imports only distribution and record.
package sweep

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/record"
)

// Point is the result of one run at one load level.
type Point struct {
	// Load is the level: a concurrency or a request rate (req/s).
	Load float64 `json:"load"`
	// Repeat numbers the runs at the same level, from 0.
	Repeat int `json:"repeat"`
	// Metrics summarises the run.
	Metrics record.Metrics `json:"metrics"`
	// Pass reports whether the run met every objective.
	Pass bool `json:"pass"`
	// Note is a one-line reason, e.g. the first failed verdict.
	Note string `json:"note,omitempty"`
	// Dir is where the run's artifacts are, if written.
	Dir string `json:"dir,omitempty"`
	// Saturated reports that the run was stopped as over-saturated (the abort
	// watch's over-saturation detector, docs/abort.md): the server could not keep up
	// with this load, so a sweep runs no higher one.
	Saturated bool `json:"saturated,omitempty"`
	// Skipped says why the point was not run, e.g. a lower load of the sweep was
	// over-saturated; "" = it was run. A skipped point has no metrics and does not
	// pass; it is listed, not left out, so a sweep's table has every level asked for.
	Skipped string `json:"skipped,omitempty"`
}

// Levels parses a load-level list: "1,2,4,8" (explicit), "1:64:x2" (geometric: from
// 1 to at most 64, multiplying by 2) or "10:100:+10" (linear steps). Levels must be
// positive and the list non-empty and at most 1000 long.
func Levels(spec string) ([]float64, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, errors.New("sweep: empty level list")
	}
	var out []float64
	if parts := strings.Split(spec, ":"); len(parts) == 3 {
		lo, err1 := strconv.ParseFloat(parts[0], 64)
		hi, err2 := strconv.ParseFloat(parts[1], 64)
		step := parts[2]
		if err1 != nil || err2 != nil || len(step) < 2 || !(lo > 0) || hi < lo {
			return nil, fmt.Errorf("sweep: levels %q: want LO:HI:xFACTOR or LO:HI:+STEP with 0 < LO <= HI", spec)
		}
		by, err := strconv.ParseFloat(step[1:], 64)
		if err != nil {
			return nil, fmt.Errorf("sweep: levels %q: bad step %q", spec, step)
		}
		switch step[0] {
		case 'x', '*':
			if !(by > 1) {
				return nil, fmt.Errorf("sweep: levels %q: factor must be > 1", spec)
			}
			for v := lo; v <= hi*(1+1e-9); v *= by {
				out = append(out, v)
			}
		case '+':
			if !(by > 0) {
				return nil, fmt.Errorf("sweep: levels %q: step must be > 0", spec)
			}
			for i := 0; ; i++ {
				v := lo + float64(i)*by
				if v > hi*(1+1e-9) {
					break
				}
				out = append(out, v)
			}
		default:
			return nil, fmt.Errorf("sweep: levels %q: step %q must start with x or +", spec, step)
		}
	} else {
		for _, f := range strings.Split(spec, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("sweep: levels %q: %q is not a positive number", spec, f)
			}
			out = append(out, v)
		}
	}
	if len(out) == 0 || len(out) > 1000 {
		return nil, fmt.Errorf("sweep: levels %q: %d levels, want 1 to 1000", spec, len(out))
	}
	return out, nil
}

// SearchOptions bounds [Search].
type SearchOptions struct {
	// Lo and Hi bracket the load; Lo > 0 and Hi > Lo.
	Lo, Hi float64
	// Tolerance stops the bisection when (hi-lo)/hi <= Tolerance; 0 = 0.05.
	Tolerance float64
	// MaxProbes bounds the number of runs; 0 = 12.
	MaxProbes int
	// Integer rounds probed loads to integers (concurrency).
	Integer bool
}

// SearchResult is the outcome of [Search].
type SearchResult struct {
	// Best is the highest load that passed (0 if none did); Found reports whether one did.
	Best  float64
	Found bool
	// FailedAt is the lowest load seen failing above Best (0 if none).
	FailedAt float64
	// Probes are every run in order.
	Probes []Point
}

// Search finds the highest load in [Lo, Hi] at which probe passes, assuming passing is
// monotone (true below some load, false above). It probes Hi first (the answer if it
// passes), then Lo (no answer if it fails), then bisects until the bracket is within
// Tolerance or MaxProbes runs were made. No load above one that failed is probed after
// it, so a probe stopped as over-saturated (Point.Saturated) is the last above its
// load. A probe error stops the search and is returned
// with the probes so far.
func Search(ctx context.Context, o SearchOptions, probe func(ctx context.Context, load float64) (Point, error)) (SearchResult, error) {
	if !(o.Lo > 0) || !(o.Hi > o.Lo) {
		return SearchResult{}, fmt.Errorf("sweep: search range [%g, %g]: want 0 < lo < hi", o.Lo, o.Hi)
	}
	tol := cmp.Or(o.Tolerance, 0.05)
	maxProbes := cmp.Or(o.MaxProbes, 12)
	var res SearchResult
	try := func(load float64) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		p, err := probe(ctx, load)
		p.Load = load
		res.Probes = append(res.Probes, p)
		if err != nil {
			return false, err
		}
		return p.Pass, nil
	}
	round := func(v float64) float64 {
		if o.Integer {
			return math.Round(v)
		}
		return v
	}
	lo, hi := round(o.Lo), round(o.Hi)
	ok, err := try(hi)
	if err != nil || ok {
		res.Best, res.Found = hi, ok && err == nil
		return res, err
	}
	res.FailedAt = hi
	ok, err = try(lo)
	if err != nil || !ok {
		if err == nil {
			res.FailedAt = lo
		}
		return res, err
	}
	res.Best, res.Found = lo, true
	for len(res.Probes) < maxProbes && (hi-lo)/hi > tol {
		mid := round((lo + hi) / 2)
		if mid <= lo || mid >= hi {
			break // integer bracket closed
		}
		ok, err := try(mid)
		if err != nil {
			return res, err
		}
		if ok {
			lo, res.Best = mid, mid
		} else {
			hi, res.FailedAt = mid, mid
		}
	}
	return res, nil
}

// Estimate is one metric statistic across repeated runs: the mean of the per-run values
// with a Student-t confidence interval (NaN bounds with fewer than two runs).
type Estimate struct {
	Metric     string  // metric name (record.Metric…)
	Stat       string  // "avg", "p50", "p99" or "value" (scalars)
	Unit       string  //
	Mean       float64 // mean over runs
	Lo, Hi     float64 // confidence interval of the mean
	Std        float64 // sample standard deviation over runs
	N          int     // runs
	Confidence float64
}

// repeatStats lists the statistics reported for distribution metrics across runs.
var repeatStats = []string{"avg", "p50", "p90", "p99"}

// Repeat summarises repeated runs of one configuration: for each distribution metric
// its avg, p50, p90 and p99, and for each scalar its value, as a mean over the runs
// with a confidence interval (confidence 0 = 0.95). Metrics missing from some runs use
// the runs that have them.
func Repeat(runs []record.Metrics, confidence float64) []Estimate {
	confidence = cmp.Or(confidence, 0.95)
	stats := map[string]bool{}
	scalars := map[string]bool{}
	for _, m := range runs {
		for n := range m.Stats {
			stats[n] = true
		}
		for n := range m.Scalars {
			scalars[n] = true
		}
	}
	var out []Estimate
	for _, n := range sortedKeys(stats) {
		for _, st := range repeatStats {
			var xs []float64
			unit := ""
			for _, m := range runs {
				s, ok := m.Stats[n]
				if !ok || s.Count == 0 {
					continue
				}
				unit = s.Unit
				xs = append(xs, pick(s, st))
			}
			if len(xs) > 0 {
				out = append(out, estimate(n, st, unit, xs, confidence))
			}
		}
	}
	for _, n := range sortedKeys(scalars) {
		var xs []float64
		unit := ""
		for _, m := range runs {
			if s, ok := m.Scalars[n]; ok && !math.IsNaN(s.Value) {
				xs = append(xs, s.Value)
				unit = s.Unit
			}
		}
		if len(xs) > 0 {
			out = append(out, estimate(n, "value", unit, xs, confidence))
		}
	}
	return out
}

func pick(s record.Stat, st string) float64 {
	switch st {
	case "p50":
		return s.P50
	case "p90":
		return s.P90
	case "p99":
		return s.P99
	}
	return s.Avg
}

func estimate(metric, stat, unit string, xs []float64, c float64) Estimate {
	e := Estimate{Metric: metric, Stat: stat, Unit: unit, N: len(xs), Confidence: c, Lo: math.NaN(), Hi: math.NaN()}
	for _, x := range xs {
		e.Mean += x
	}
	e.Mean /= float64(len(xs))
	if len(xs) >= 2 {
		var ss float64
		for _, x := range xs {
			ss += (x - e.Mean) * (x - e.Mean)
		}
		e.Std = math.Sqrt(ss / float64(len(xs)-1))
		if iv, err := distribution.StudentTCI(xs, c); err == nil {
			e.Lo, e.Hi = iv.Lo, iv.Hi
		}
	}
	return e
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// WriteRepeatTable writes the estimates as an aligned table:
// metric, stat, mean ± half-width, [lo, hi], unit.
func WriteRepeatTable(w io.Writer, es []Estimate) error {
	var b strings.Builder
	if len(es) > 0 {
		fmt.Fprintf(&b, "Across %d runs (mean ± %.0f%% confidence half-width, Student t):\n", es[0].N, es[0].Confidence*100)
	}
	mw := 6
	for _, e := range es {
		mw = max(mw, len(e.Metric))
	}
	for _, e := range es {
		half := "n/a"
		if !math.IsNaN(e.Hi) {
			half = fmt.Sprintf("%.4g", (e.Hi-e.Lo)/2)
		}
		fmt.Fprintf(&b, "  %-*s %-5s %12.4g ± %-10s %s (n=%d)\n", mw, e.Metric, e.Stat, e.Mean, half, e.Unit, e.N)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sweepCols are the metrics a sweep table shows per level.
var sweepCols = []struct{ name, stat, head string }{
	{record.MetricRequestThroughput, "value", "req/s"},
	{record.MetricOutputTokenThroughput, "value", "tok/s"},
	{record.MetricGoodput, "value", "goodput req/s"},
	{record.MetricTTFT, "p50", "TTFT p50 ms"},
	{record.MetricTTFT, "p99", "TTFT p99 ms"},
	{record.MetricITL, "p50", "ITL p50 ms"},
	{record.MetricITL, "p99", "ITL p99 ms"},
	{record.MetricErrorCount, "value", "errors"},
}

func cell(m record.Metrics, name, stat string) float64 {
	if stat == "value" {
		if s, ok := m.Scalars[name]; ok {
			return s.Value
		}
		return math.NaN()
	}
	s, ok := m.Stats[name]
	if !ok || s.Count == 0 {
		return math.NaN()
	}
	return pick(s, stat)
}

// WriteSweepTable writes one line per point: the load, the headline metrics and the
// verdict. loadName names the load column ("concurrency" or "rate").
func WriteSweepTable(w io.Writer, loadName string, points []Point) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%12s", loadName)
	for _, c := range sweepCols {
		fmt.Fprintf(&b, " %14s", c.head)
	}
	b.WriteString("  verdict\n")
	for _, p := range points {
		fmt.Fprintf(&b, "%12.4g", p.Load)
		for _, c := range sweepCols {
			v := cell(p.Metrics, c.name, c.stat)
			if math.IsNaN(v) {
				fmt.Fprintf(&b, " %14s", "-")
			} else {
				fmt.Fprintf(&b, " %14.2f", v)
			}
		}
		verdict := "PASS"
		if !p.Pass {
			verdict = "FAIL"
		}
		if p.Note != "" {
			verdict += "  " + p.Note
		}
		if p.Skipped != "" {
			verdict = "SKIP  " + p.Skipped
		}
		b.WriteString("  " + verdict + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSweepCSV writes the points as CSV: load, repeat, pass, the headline metrics,
// then skipped (why the point was not run; empty when it was).
func WriteSweepCSV(w io.Writer, loadName string, points []Point) error {
	cw := csv.NewWriter(w)
	head := []string{loadName, "repeat", "pass"}
	for _, c := range sweepCols {
		head = append(head, c.name+"_"+c.stat)
	}
	head = append(head, "skipped")
	_ = cw.Write(head)
	for _, p := range points {
		row := []string{strconv.FormatFloat(p.Load, 'g', -1, 64), strconv.Itoa(p.Repeat), strconv.FormatBool(p.Pass)}
		for _, c := range sweepCols {
			v := cell(p.Metrics, c.name, c.stat)
			if math.IsNaN(v) {
				row = append(row, "")
			} else {
				row = append(row, strconv.FormatFloat(v, 'f', 4, 64))
			}
		}
		row = append(row, p.Skipped)
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
