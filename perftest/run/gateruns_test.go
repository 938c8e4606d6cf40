package run

import (
	"context"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// GateRuns and Interleave run real mock runs: a mock 5× slower in TTFT fails the gate,
// and A/B alternates the sides. The runs share the machine with other tests, and 3
// runs a side have its noise (between-run CVs of 10–40% were seen under load, and a
// 5× slower mock was then inconclusive): the slow side is gated with FailInconclusive,
// so the verdict is never "no regression" and the gate fails however noisy the runs.
// The decision at small effects is tested on constructed series (TestGateLooks), and
// its error rates measured by bench/gate.
func TestGateRunsAndInterleave(t *testing.T) {
	sc := sweepScenario()
	sc.API, sc.Requests, sc.Concurrency = "", 20, 10
	sc.Mock = mockserver.Config{TTFT: distribution.MustSpec("fixed:40"), ITL: distribution.MustSpec("fixed:5")}
	g := gate.Gate{Runs: 3, MaxRuns: 3, FailInconclusive: true}
	base, _, err := RunSeries(context.Background(), sc, 3, t.TempDir(), SeriesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slow := sc
	slow.Mock.TTFT = distribution.MustSpec("fixed:200")
	r, err := GateRuns(context.Background(), slow, base, t.TempDir(), g, SeriesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Current.Len() != 3 || r.Pass() || r.Comparisons[0].Change == check.ChangeNoRegression || r.Comparisons[0].Ratio < 2 {
		t.Errorf("TTFT 40ms → 200ms: %s\n%v", r.Headline(), r.AllVerdicts()[0])
	}
	if len(r.Target) == 0 || r.Target[0].Field != "mock.ttft_ms" {
		t.Errorf("target differences %v; want the mock's TTFT shown", r.Target)
	}
	other := sc
	other.ISL = distribution.MustSpec("fixed:32")
	dir := t.TempDir()
	r, err = GateRuns(context.Background(), other, base, dir, g, SeriesOptions{})
	if err != nil || !r.Invalid() || r.Current.Len() != 0 {
		t.Errorf("another workload: %v, %d runs; want refused before any run", err, r.Current.Len())
	}
	var order []string
	run := func(ctx context.Context, s scenario.Scenario, d string) (*Outcome, error) {
		order = append(order, s.Mock.TTFT.String())
		return Run(ctx, s, d)
	}
	r, err = Interleave(context.Background(), sc, slow, t.TempDir(), gate.Gate{Runs: 2, MaxRuns: 2}, SeriesOptions{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, " ") != "fixed:40 fixed:200 fixed:40 fixed:200" || r.Baseline.Len() != 2 || r.Current.Len() != 2 {
		t.Errorf("A/B order %v, %d and %d runs; want A B A B", order, r.Baseline.Len(), r.Current.Len())
	}
	if r.Comparisons[0].Ratio < 2 {
		t.Errorf("A/B TTFT ratio %v, want about 4", r.Comparisons[0].Ratio)
	}
	// A and B ran in one session: its offset cancels, no between-session term. The
	// sequential gate's runs (GateRuns above) were one session of their own.
	if c := r.Comparisons[0]; c.SessionSource != "same session" || r.Baseline.Runs[0].Session == "" {
		t.Errorf("A/B: session source %q, session %q; want one shared session", c.SessionSource, r.Baseline.Runs[0].Session)
	}
	if base.Sessions() != 1 || base.Runs[0].Session == "" {
		t.Errorf("RunSeries: %d sessions (%q), want one labelled session", base.Sessions(), base.Runs[0].Session)
	}
}
