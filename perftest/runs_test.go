package perftest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/reportgen"
)

// The gate tests run real runs on a machine that other tests load, so their noise is
// the machine's: runs taken one after another drift, and 3–5 runs a side prove nothing
// within a 5% margin (between-run CVs of 20–40% were seen under load, and with them a
// mock 5× slower was inconclusive at 3 runs a side). What they check is the plumbing,
// with verdicts no load can change:
//   - the slow mock is 5× slower in TTFT (40 → 200 ms), and is gated with
//     FailInconclusive (slowGate): the worse end of its interval can never fall within
//     the margin, so the gate fails, regressed or inconclusive, however noisy the runs;
//   - a mock compared with itself is held to a 25% margin (identicalGate).
//
// The gate's error rates at the default margin are bench/gate's to measure over
// thousands of pairs; the verdict texts are tested on constructed runs
// (TestAssertNoRegressionRuns...).
var (
	identicalGate = Gate{Margin: 0.25}
	slowGate      = Gate{FailInconclusive: true}
)

func gateScenario(ttft string) Scenario {
	return Scenario{
		Name: "gate",
		Mock: mockserver.Config{TTFT: distribution.MustSpec(ttft), ITL: distribution.MustSpec("fixed:5")},
		Config: loadgen.Config{
			Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:8"), OSL: distribution.MustSpec("fixed:4"), Seed: 4},
			Load:     loadgen.Load{Concurrency: 10},
			Stop:     loadgen.Stop{Requests: 20},
		},
	}
}

// A K-run baseline is saved, read back, and gates K current runs: the same mock
// passes, a mock 5× slower in TTFT fails with the verdict and where each side ran.
func TestRunsBaselineAndGate(t *testing.T) {
	testutil.Long(t) // 7–16 s: make test stays under 10 minutes on a fresh 2-core machine
	base := RunRuns(t, gateScenario("fixed:40"), 5)
	if base.Len() != 5 || len(base.Outcomes) != 5 {
		t.Fatalf("RunRuns: %d runs", base.Len())
	}
	dir := t.TempDir()
	SaveBaseline(t, base, dir)
	back := LoadBaseline(t, dir)
	if back.Len() != 5 || back.Runs[2].Stats["ttft_p50"] != base.Runs[2].Stats["ttft_p50"] {
		t.Fatalf("LoadBaseline: %d runs, %v", back.Len(), back.Runs)
	}
	if c := Capture(t, func(t testing.TB) { RunRuns(t, gateScenario("fixed:40"), 3).AssertNoRegression(t, back, identicalGate) }); c.Failed() {
		t.Errorf("the same mock failed the gate:\n%s", c.Text())
	}
	var ok bool
	c := Capture(t, func(t testing.TB) {
		ok = RunRuns(t, gateScenario("fixed:200"), 5).AssertNoRegression(t, back, slowGate)
	})
	if ok || !c.Failed() || !gateFailedOnTTFT(c.Text()) ||
		!strings.Contains(c.Text(), "target differs: mock.ttft_ms: baseline fixed:40, current fixed:200") ||
		!strings.Contains(c.Text(), "perftest: TTFT p50") {
		t.Errorf("TTFT 40ms → 200ms: ok=%v\n%s", ok, c.Text())
	}
	// The sequential form runs the current side itself; another workload is refused
	// before any run.
	var cur *Runs
	c = Capture(t, func(t testing.TB) {
		cur, ok = AssertNoRegression(t, gateScenario("fixed:200"), back, Gate{Runs: 4, MaxRuns: 4, FailInconclusive: true})
	})
	if ok || !c.Failed() || cur.Len() != 4 {
		t.Errorf("AssertNoRegression, 5× slower: ok=%v, %d runs\n%s", ok, cur.Len(), c.Text())
	}
	if _, err := os.Stat(filepath.Join(cur.Dir, reportgen.GateReportFile)); err != nil || !strings.Contains(c.Text(), "report: "+cur.Dir) {
		t.Errorf("the gate's HTML report: %v", err)
	}
	// Beside it, its markdown summary, headed by the gate's marked answer (a failing one:
	// regressed, or inconclusive at the cap under a loaded machine).
	if md, err := os.ReadFile(filepath.Join(cur.Dir, reportgen.SummaryFile)); err != nil || !strings.Contains(string(md), "** regression gate: ") || strings.Contains(string(md), "**PASS**") ||
		!strings.Contains(string(md), "[gate report]("+reportgen.GateReportFile+")") {
		t.Errorf("the gate's markdown summary: %v\n%s", err, md)
	}
	// A baseline measured against another server build: shown beside the verdict (a
	// failing one, which the capture keeps).
	mf := filepath.Join(dir, "run-001", reportgen.ManifestFile)
	mb, err := os.ReadFile(mf)
	if err != nil {
		t.Fatal(err)
	}
	var m reportgen.Manifest
	if err := json.Unmarshal(mb, &m); err != nil || len(m.Servers) == 0 || m.Servers[0].Header == "" {
		t.Fatalf("baseline manifest: %v: %s", err, mb)
	}
	m.Servers[0].Header = "old-server/0.1"
	if mb, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mf, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	c = Capture(t, func(t testing.TB) {
		AssertNoRegression(t, gateScenario("fixed:200"), back, Gate{Runs: 3, MaxRuns: 3, FailInconclusive: true})
	})
	if !c.Failed() || !strings.Contains(c.Text(), "measured with differs: server header: baseline old-server/0.1, current ") {
		t.Errorf("AssertNoRegression against a baseline of another server: the difference is not shown\n%s", c.Text())
	}
	other := gateScenario("fixed:40")
	other.ISL = distribution.MustSpec("fixed:16")
	c = Capture(t, func(t testing.TB) { cur, ok = AssertNoRegression(t, other, back, Gate{}) })
	if ok || cur.Len() != 0 || !strings.HasPrefix(c.Text(), "perftest: regression gate: the baseline is another workload (isl differ)") {
		t.Errorf("another workload: ok=%v, %d runs\n%s", ok, cur.Len(), c.Text())
	}
	// One run: SaveBaseline of a Result keeps the one-run layout.
	one := t.TempDir()
	SaveBaseline(t, Run(t, gateScenario("fixed:40")), one)
	if s := LoadBaseline(t, one); s.Len() != 1 || s.Dirs[0] != "." {
		t.Errorf("one-run baseline: %d runs %v", s.Len(), s.Dirs)
	}
	// Against it one run 5× slower in TTFT is inconclusive (between-run noise not
	// measured) until the baseline stores the CV the 5-run baseline measured.
	if c := Capture(t, func(t testing.TB) { Run(t, gateScenario("fixed:200")).AssertNoRegression(t, Load(t, one)) }); c.Failed() {
		t.Errorf("one run each, no CV: failed, want inconclusive (passing)\n%s", c.Text())
	}
	s := LoadBaseline(t, one)
	// A stored CV of 5% for every statistic (the ones the 5-run baseline measured), not
	// the CVs themselves: under load those reach 40%, and the one-run verdict would then
	// depend on the machine rather than on the stored CV being used.
	s.PriorCV = map[string]float64{}
	for name := range back.CVs() {
		s.PriorCV[name] = 0.05
	}
	if err := s.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	c = Capture(t, func(t testing.TB) { Run(t, gateScenario("fixed:200")).AssertNoRegression(t, Load(t, one)) })
	if !c.Failed() || !strings.Contains(c.Text(), "TTFT p50 regressed: +") || !strings.Contains(c.Text(), "assumed the stored between-run CV") {
		t.Errorf("one run each, the baseline storing a CV, 5× slower: want regressed\n%s", c.Text())
	}
	// The K-run gate takes the one-run baseline too (a Result is a Baseline): two runs
	// 5× slower fail it, and its workload is still compared.
	c = Capture(t, func(t testing.TB) {
		cur, ok = AssertNoRegression(t, gateScenario("fixed:200"), Load(t, one), Gate{Runs: 2, MaxRuns: 2, FailInconclusive: true})
	})
	if ok || !c.Failed() || cur.Len() != 2 || !gateFailedOnTTFT(c.Text()) {
		t.Errorf("AssertNoRegression against a one-run baseline, 5× slower: ok=%v, %d runs\n%s", ok, cur.Len(), c.Text())
	}
	c = Capture(t, func(t testing.TB) { cur, ok = AssertNoRegression(t, other, Load(t, one), Gate{}) })
	if ok || cur.Len() != 0 || !strings.HasPrefix(c.Text(), "perftest: regression gate: the baseline is another workload (isl differ)") {
		t.Errorf("a one-run baseline of another workload: ok=%v, %d runs\n%s", ok, cur.Len(), c.Text())
	}
	c = Capture(t, func(t testing.TB) { LoadBaseline(t, t.TempDir()) })
	if !c.Stopped() || !strings.Contains(c.Text(), "holds no runs") {
		t.Errorf("LoadBaseline(empty dir): %s", c.Text())
	}
	c = Capture(t, func(t testing.TB) { SaveBaseline(t, back, t.TempDir()) })
	if !c.Stopped() || !strings.Contains(c.Text(), "no runs") {
		t.Errorf("SaveBaseline of runs read from disk: %s", c.Text())
	}
}

// A/B alternates the two mocks; B 5× slower fails, B as fast passes.
func TestABGate(t *testing.T) {
	a := gateScenario("fixed:40")
	c := Capture(t, func(t testing.TB) {
		AssertABNoRegression(t, a, gateScenario("fixed:200"), Gate{Runs: 4, MaxRuns: 4, FailInconclusive: true})
	})
	if !c.Failed() || !gateFailedOnTTFT(c.Text()) {
		t.Errorf("A/B, B 5× slower:\n%s", c.Text())
	}
	if c := Capture(t, func(t testing.TB) {
		AssertABNoRegression(t, a, a, Gate{Runs: 3, MaxRuns: 3, Margin: identicalGate.Margin})
	}); c.Failed() {
		t.Errorf("A/B, A against itself:\n%s", c.Text())
	}
	if c := Capture(t, func(t testing.TB) {
		RunRuns(t, Scenario{Config: loadgen.Config{Load: loadgen.Load{Concurrency: -1}}}, 2)
	}); !c.Stopped() {
		t.Errorf("RunRuns of an invalid scenario did not stop the test: %s", c.Text())
	}
}

// gateFailedOnTTFT reports whether a failing gate's text names TTFT p50's rise first:
// "regressed: TTFT p50 +…" or, when the runs were too noisy to decide, "inconclusive:
// TTFT p50 +…" (slowGate fails both).
func gateFailedOnTTFT(text string) bool {
	for _, v := range []string{"regressed", "inconclusive"} {
		if strings.HasPrefix(text, "perftest: regression gate: "+v+": TTFT p50 +") {
			return true
		}
	}
	return false
}
