package run

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/reportgen/sweep"
)

// saturateScenario is an open loop at rate against the mock's continuous-batching
// engine of two sequences and 10 ms steps (each request four output tokens, so it
// completes about 40 a second), with the over-saturation detector tuned to a 0.6 s
// window from 0.3 s on: a test's fraction of a second, not guidellm's minutes.
func saturateScenario(rate float64, stop loadgen.Stop) scenario.Scenario {
	return scenario.Scenario{
		Name: "saturate",
		Config: loadgen.Config{
			Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:16"), OSL: distribution.MustSpec("fixed:4"), Seed: 1},
			Load:     loadgen.Load{Rate: rate},
			Stop:     stop,
		},
		Mock: mockserver.Config{Batch: mockserver.BatchConfig{Enabled: true, Step: 10 * time.Millisecond, MaxBatch: 2}},
		Abort: scenario.Abort{Rules: []string{scenario.OverSaturationRule}, OverSaturation: loadgen.OverSaturation{
			MinDuration: 300 * time.Millisecond, Window: 600 * time.Millisecond, MinTTFT: 50 * time.Millisecond}},
	}
}

// TestOverSaturationStopsRun: offered 160 requests a second, four times what the
// mock completes, the queue and the TTFT grow while the throughput stays flat, and
// the detector stops a run of two minutes soon after its 0.3 s of grace: the
// aborted verdict fails among the objectives (exit 99), not the validity checks, and
// the records, manifest and exports are kept and marked.
func TestOverSaturationStopsRun(t *testing.T) {
	dir := t.TempDir()
	out, err := Run(context.Background(), saturateScenario(160, loadgen.Stop{Duration: abortLongRun}), dir)
	if err != nil {
		t.Fatal(err)
	}
	if out.AbortedBy() != loadgen.AbortSaturation || !strings.HasPrefix(out.Aborted(), "over-saturated at ") {
		t.Fatalf("aborted by %q: %q", out.AbortedBy(), out.Aborted())
	}
	if out.Self.Elapsed >= 10*time.Second {
		t.Errorf("the run went on for %v", out.Self.Elapsed)
	}
	v := find(out.Check(), CheckAborted)
	if v == nil || v.Pass || v.Status != check.Decided || !strings.HasPrefix(v.Summary, "aborted: over-saturated at ") {
		t.Errorf("aborted verdict among the objectives: %v", v)
	}
	// Not an invalid measurement: no aborted verdict among the validity checks, and the
	// client-bound one does not count the stop as the client's (the client may still
	// be judged on its own send lag on a busy machine).
	if v := find(out.Validity(), CheckAborted); v != nil {
		t.Errorf("over-saturation judged an invalid measurement: %v", v)
	}
	if v := find(out.Validity(), validity.CheckClientBound); v != nil && strings.Contains(v.Summary, "stopped early") {
		t.Errorf("the client-bound verdict counts the stop: %v", v)
	}
	checkAbortedOnDisk(t, dir, out.Aborted(), 20)

	t.Logf("stopped after %v: %s", out.Self.Elapsed.Round(time.Millisecond), out.Aborted())
}

// TestOverSaturationNotFired is TestOverSaturationStopsRun's failure path, under
// make test-long (it adds a run of a second): offered 10 requests a second, a quarter
// of what the mock completes, a run judged from 0.2 s to its end is not stopped.
func TestOverSaturationNotFired(t *testing.T) {
	testutil.Long(t)
	healthy := saturateScenario(10, loadgen.Stop{Requests: 10})
	healthy.Abort.OverSaturation.MinDuration = 200 * time.Millisecond
	ok, err := Run(context.Background(), healthy, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if ok.Aborted() != "" {
		t.Errorf("a run under capacity was stopped: %s", ok.Aborted())
	}
}

// TestSweepSkipsAboveSaturation: once a level is stopped as over-saturated, a sweep
// runs no higher level: each is listed as skipped, naming the level that saturated, in
// the points, sweep.csv and sweep.html. Lower levels (the levels need not be in order)
// and the saturated level's other repeats still run. A level that failed otherwise
// skips nothing.
func TestSweepSkipsAboveSaturation(t *testing.T) {
	for _, c := range []struct {
		levels  []float64
		satFrom float64 // the runner saturates at this level and above
		failAt  float64 // and fails, not saturated, at this one
		ran     []float64
		skipped []float64
	}{
		{levels: []float64{2, 4, 8, 16, 32}, satFrom: 8, ran: []float64{2, 2, 4, 4, 8, 8}, skipped: []float64{16, 16, 32, 32}},
		{levels: []float64{8, 2, 16, 4}, satFrom: 8, ran: []float64{8, 8, 2, 2, 4, 4}, skipped: []float64{16, 16}},
		{levels: []float64{2, 4, 8}, satFrom: 100, failAt: 4, ran: []float64{2, 2, 4, 4, 8, 8}},
	} {
		var ran []float64
		run := func(_ context.Context, sc scenario.Scenario, dir string) (*Outcome, error) {
			ran = append(ran, float64(sc.Concurrency))
			o := &Outcome{Scenario: sc, Dir: dir, Self: &loadgen.Self{}}
			switch l := float64(sc.Concurrency); {
			case l >= c.satFrom:
				o.Self.Aborted, o.Self.AbortedBy = "over-saturated at 31s: …", loadgen.AbortSaturation
			case l == c.failAt:
				o.Self.Aborted, o.Self.AbortedBy = "abort rule error_rate>0.2 held", loadgen.AbortObjective
			}
			return o, nil
		}
		dir := t.TempDir()
		pts, err := Sweep(context.Background(), scenario.Scenario{}, Concurrency, c.levels, 2, dir, run)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ran) != fmt.Sprint(c.ran) {
			t.Errorf("%v: ran %v, want %v", c.levels, ran, c.ran)
		}
		var skipped []float64
		for _, p := range pts {
			if p.Skipped == "" {
				if p.Saturated != (p.Load >= c.satFrom) || p.Pass && (p.Load >= c.satFrom || p.Load == c.failAt) {
					t.Errorf("%v: run point %+v", c.levels, p)
				}
				continue
			}
			skipped = append(skipped, p.Load)
			want := fmt.Sprintf("skipped: concurrency %g was over-saturated (%s)", c.satFrom, filepath.Join(dir, Concurrency.dir(c.satFrom), "run-001"))
			if p.Skipped != want || p.Pass || p.Dir != "" {
				t.Errorf("%v: skipped point %+v, want %q", c.levels, p, want)
			}
		}
		if fmt.Sprint(skipped) != fmt.Sprint(c.skipped) || len(pts) != 2*len(c.levels) {
			t.Errorf("%v: %d points, skipped %v, want %v", c.levels, len(pts), skipped, c.skipped)
		}
		csv, _ := os.ReadFile(filepath.Join(dir, "sweep.csv"))
		html, _ := os.ReadFile(filepath.Join(dir, reportgen.SweepReportFile))
		if n := strings.Count(string(csv), ",skipped: concurrency"); n != len(c.skipped) || !strings.Contains(string(csv), ",skipped\n") {
			t.Errorf("%v: sweep.csv lists %d skipped:\n%s", c.levels, n, csv)
		}
		if n := strings.Count(string(html), ">SKIPPED</span>"); n != len(c.skipped) {
			t.Errorf("%v: sweep.html lists %d skipped", c.levels, n)
		}
	}
}

// TestSearchNeverAboveSaturation: a search probes no load above one stopped as
// over-saturated after it, marks such probes Saturated, and finds the highest load
// below them (a fake runner saturating from 12 up, over 1 to 64).
func TestSearchNeverAboveSaturation(t *testing.T) {
	run := func(_ context.Context, sc scenario.Scenario, dir string) (*Outcome, error) {
		o := &Outcome{Scenario: sc, Dir: dir, Self: &loadgen.Self{}, Client: []record.Client{{RequestID: "r", Status: 200, Sent: 1, Done: 2}}}
		if sc.Concurrency >= 12 {
			o.Self.Aborted, o.Self.AbortedBy = "over-saturated at 31s: …", loadgen.AbortSaturation
		}
		return o, nil
	}
	res, err := Search(context.Background(), scenario.Scenario{}, Concurrency, sweep.SearchOptions{Lo: 1, Hi: 64, Tolerance: 0.01}, t.TempDir(), run)
	if err != nil {
		t.Fatal(err)
	}
	lowest := math.Inf(1) // the lowest saturated load probed so far
	for i, p := range res.Probes {
		if p.Load > lowest {
			t.Errorf("probe %d at %g, after %g was over-saturated", i, p.Load, lowest)
		}
		if p.Saturated != (p.Load >= 12) || p.Saturated && p.Pass {
			t.Errorf("probe %d: %+v", i, p)
		}
		if p.Saturated {
			lowest = min(lowest, p.Load)
		}
	}
	if !res.Found || res.Best != 11 || res.FailedAt != 12 {
		t.Errorf("search: best %g, failed at %g (found %v); want 11 and 12", res.Best, res.FailedAt, res.Found)
	}
}
