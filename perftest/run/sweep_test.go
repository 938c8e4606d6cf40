package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/reportgen/sweep"
)

func sweepScenario() scenario.Scenario {
	return scenario.Scenario{
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API: loadgen.EndpointCompletions,
			},
			Workload: loadgen.Workload{
				ISL:  fixed(16),
				OSL:  fixed(4),
				Seed: 5,
			},
			Stop: loadgen.Stop{
				Requests: 8,
			},
		},
	}
}

func TestRepeat(t *testing.T) {
	dir := t.TempDir()
	outs, est, err := Repeat(context.Background(), sweepScenario(), 2, 0.95, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[0].Scenario.Seed != 5 || outs[1].Scenario.Seed != 5 || len(est) == 0 {
		t.Fatalf("Repeat: %d outcomes, %d estimates; want 2 runs of seed 5", len(outs), len(est))
	}
	// Each run's records were let go (they are on disk); its verdicts were kept.
	for i, o := range outs {
		if o.Client != nil || o.Server != nil {
			t.Errorf("run %d kept %d client and %d server records in memory; want them on disk only", i+1, len(o.Client), len(o.Server))
		}
		back, err := Load(o.Dir)
		if err != nil || len(back.Requests()) != 8 {
			t.Fatalf("Load(run %d) = %v; want its 8 records back", i+1, err)
		}
		if got, want := len(o.Verdicts()), len(back.Verdicts()); got != want || got == 0 {
			t.Errorf("run %d: %d kept verdicts, %d from its recording; want the same, > 0", i+1, got, want)
		}
		if ok, _ := o.Passed(); !ok {
			t.Errorf("run %d: Passed() = false; want true", i+1)
		}
	}
	for _, f := range []string{RepeatFile, gate.RunsFile, filepath.Join("run-002", ClientFile), filepath.Join("run-002", RunStatsFile)} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("artifact: %v", err)
		}
	}
	if _, _, err := Repeat(context.Background(), sweepScenario(), 0, 0.95, dir, nil); !errors.Is(err, scenario.ErrInvalidScenario) {
		t.Errorf("Repeat(n=0) = %v, want ErrInvalidScenario", err)
	}
}

// TestSweepAndSearch: a sweep point fails when its run breaks an objective, and the
// search finds the highest load that meets them (here every load does: OSL p50 >= 4).
func TestSweepAndSearch(t *testing.T) {
	dir := t.TempDir()
	sc := sweepScenario()
	//lint:ignore SA1019 the deprecated structured objectives must still be checked, as the rules they mean
	sc.Objectives.Bounds = []check.Bound{{Metric: check.OSL, P: 0.5, Min: 4}}
	var seen []int
	run := func(ctx context.Context, s scenario.Scenario, d string) (*Outcome, error) {
		seen = append(seen, s.Concurrency)
		if s.Concurrency == 3 {
			//lint:ignore SA1019 the deprecated structured objectives must still be checked, as the rules they mean
			s.Objectives.Bounds = []check.Bound{{Metric: check.OSL, P: 0.5, Min: 5}} // this level fails
		}
		return Run(ctx, s, d)
	}
	pts, err := Sweep(context.Background(), sc, Concurrency, []float64{1, 3}, 1, dir, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || !pts[0].Pass || pts[1].Pass || pts[1].Note == "" || len(seen) != 2 || seen[1] != 3 {
		t.Errorf("Sweep points = %+v (levels run %v), want level 1 passing and level 3 failing with a note", pts, seen)
	}
	for _, f := range []string{"sweep.csv", reportgen.SweepReportFile, filepath.Join("concurrency-3", ClientFile)} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("sweep artifact: %v", err)
		}
	}
	if _, err := Sweep(context.Background(), sc, Concurrency, []float64{1.5}, 1, dir, nil); !errors.Is(err, scenario.ErrInvalidScenario) {
		t.Errorf("Sweep(concurrency 1.5) = %v, want ErrInvalidScenario", err)
	}
	res, err := Search(context.Background(), sc, Rate, sweep.SearchOptions{Lo: 50, Hi: 400}, filepath.Join(dir, "se"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.Best != 400 || len(res.Probes) != 1 {
		t.Errorf("Search = %+v, want the top of the range (400) on the first probe", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "se", "rate-400", ClientFile)); err != nil {
		t.Errorf("search artifact: %v", err)
	}
}
