package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/reportgen"
)

// The history reads no scenario itself (package history imports the gate, not the
// runner): what it needs of one, the CLI reads here and passes in as data.

// historyResult builds the history result of the finished runs outs (K runs of one
// scenario, in order): history.FromSeries of perfrun.RecordingOf.
func historyResult(outs []*perfrun.Outcome, id history.Identity) (*history.Result, error) {
	rec := perfrun.RecordingOf(outs...)
	id.Topology = cmp.Or(id.Topology, rec.Topology)
	return history.FromSeries(rec.Series, rec.Verdicts, id)
}

// historyFromDir reads the result saved in an artifact directory: K runs (a runs.json
// index, or run-NNN subdirectories) or one run, as perfrun.LoadSeries reads a
// baseline. The index is checked before any run is read (history.CheckSeries); each
// run's verdicts are re-derived from its records under the scenario's objectives; an
// interrupted run (no manifest) is refused. Each run's statistics are the series', as
// the gate compared them.
func historyFromDir(dir string, id history.Identity) (*history.Result, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("history: %s is not a directory of artifacts", dir)
	}
	series, err := perfrun.LoadSeries(dir)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := history.CheckSeries(dir, series); err != nil {
		return nil, err
	}
	var outs []*perfrun.Outcome
	for i := range series.Dirs {
		o, err := perfrun.SeriesOutcome(series, i)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		if o.Interrupted {
			return nil, fmt.Errorf("history: %s did not finish (no %s): an interrupted run is not a result", o.Dir, reportgen.ManifestFile)
		}
		outs = append(outs, o)
	}
	id.Artifacts = cmp.Or(id.Artifacts, absPath(dir))
	r, err := historyResult(outs, id)
	if err != nil {
		return nil, err
	}
	for i := range r.Runs {
		r.Runs[i].Stats = series.Runs[i].Stats // as the gate compared them
	}
	return r, nil
}

// loadHistoryBaseline is history.LoadBaseline with the baseline's workload described
// from the scenario the newest result stored, so the gate can tell it is the same
// workload.
func loadHistoryBaseline(ctx context.Context, s history.Store, spec history.BaselineSpec) (*gate.Series, []history.Result, error) {
	series, results, err := history.LoadBaseline(ctx, s, spec)
	if err != nil {
		return nil, nil, err
	}
	if err := perfrun.DescribeSeries(series); err != nil {
		return nil, nil, fmt.Errorf("history: baseline %s: result %d's scenario: %w", spec, results[len(results)-1].ID, err)
	}
	return series, results, nil
}

// absPath is p made absolute, or p when it cannot be.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
