package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// noisySeries is a series of n runs in session id whose primary statistics vary by cv
// (log-normal, seeded) around speed × nominal, with TTFT p99 at ten times TTFT p50
// scaled by p99 (a reported-only statistic).
func noisySeries(rng *rand.Rand, sc scenario.Scenario, id string, n int, cv, speed, p99 float64) *gate.Series {
	s := perfrun.NewSeries("", sc)
	for i := range n {
		x := speed * math.Exp(cv*rng.NormFloat64())
		s.Runs = append(s.Runs, gate.RunStats{Run: i + 1, Session: id, Stats: map[string]float64{
			"ttft_p50": 0.05 * x, "itl_p50": 0.01 * x, "latency_p50": 0.3 * x, "output_tps": 500 / x, "ttft_p99": 0.5 * x * p99}})
		s.Dirs = append(s.Dirs, gate.RunDir(i))
	}
	return s
}

// TestGatePrintout: the gate prints its headline first (the answer, the statistics, runs
// and sessions per side), then the gating statistics' verdicts, then the reported-only
// ones under their own heading, marked info, one line each, with no threshold. A gate
// that passed is compact (the headline, one line per gating statistic, one line saying
// what -v adds); -v prints it all.
func TestGatePrintout(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	base := noisySeries(rng, scenario.Scenario{}, "b", 5, 0.005, 1, 1)
	cur := noisySeries(rng, scenario.Scenario{}, "c", 5, 0.005, 1, 3) // TTFT p99 ×3: reported only
	res := gate.Compare(base, cur, gate.Gate{SessionCV: 0.002}, 0)
	var b strings.Builder
	printGate(&b, res, gateCommand{regress: true, baseline: "base"})
	compact := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	headline := "PASS regression gate: no regression on 4 gating statistics (baseline 5 runs in 1 session, current 5 runs in 1 session)"
	if len(compact) != 6 || compact[0] != headline || compact[5] != "    reported, not gating: 1 statistic; -v prints them, the HTML report has their runs" {
		t.Errorf("a passing gate without -v: want the headline, 4 lines and the reported line, got %d lines:\n%s", len(compact), b.String())
	}
	for _, l := range compact[1:min(5, len(compact))] {
		if !strings.HasPrefix(l, "PASS ") || !strings.Contains(l, "no regression") {
			t.Errorf("a passing gate without -v: line %q, want one PASS line per gating statistic", l)
		}
	}
	b.Reset()
	printGate(&b, res, gateCommand{regress: true, baseline: "base", verbose: true})
	out := b.String()
	lines := strings.Split(out, "\n")
	if lines[0] != headline || !strings.HasPrefix(lines[1], "    baseline: ") || !strings.Contains(out, "\n    ratio: ") {
		t.Errorf("-v: want the headline, where each side ran and the evidence:\n%s", out)
	}
	head := strings.Index(out, "Reported, not gating")
	last := strings.LastIndex(out, "PASS ")
	if head < 0 || last > head || !strings.Contains(out[head:], "\n  info TTFT p99 +") || !strings.Contains(out[head:], "% vs baseline (") {
		t.Errorf("the reported-only statistics are not under their own heading after the gating ones:\n%s", out)
	}
	if r := out[head:]; strings.Contains(r, "want") || strings.Contains(r, "PASS") || strings.Count(r, "\n") != 2 {
		t.Errorf("reported section %q: want one info line, no threshold, no PASS", r)
	}
	if strings.Contains(out, "to decide:") {
		t.Errorf("a decided gate gives advice:\n%s", out)
	}
	// A failing gate: the failing statistic with its evidence, the passing ones one line
	// each (with -v, with theirs).
	for i := range cur.Runs {
		cur.Runs[i].Stats["ttft_p50"] *= 1.3
	}
	res = gate.Compare(base, cur, gate.Gate{SessionCV: 0.002}, 0)
	for _, verbose := range []bool{false, true} {
		b.Reset()
		printGate(&b, res, gateCommand{regress: true, baseline: "base", verbose: verbose})
		out := b.String()
		fail := strings.Index(out, "\nFAIL TTFT p50 regressed")
		pass := strings.Index(out, "\nPASS ITL p50")
		if fail < 0 || pass < 0 || !strings.HasPrefix(out[fail+1:], "FAIL TTFT p50 regressed") || !strings.Contains(out[fail:pass], "\n    ratio: ") {
			t.Errorf("-v=%v: the failing statistic without its evidence:\n%s", verbose, out)
			continue
		}
		next := strings.SplitN(out[pass+1:], "\n", 3)[1]
		if evidence := strings.HasPrefix(next, "    "); evidence != verbose {
			t.Errorf("-v=%v: the line after a passing statistic is %q: evidence %v, want %v\n%s", verbose, next, evidence, verbose, out)
		}
		if !strings.Contains(out, "Reported, not gating") {
			t.Errorf("-v=%v: a failing gate leaves out its reported statistics:\n%s", verbose, out)
		}
	}
}

// TestGateAdviceText: an inconclusive gate says what would decide it in flags of the
// command that was run, with the numbers check.DecideGate computed, on constructed
// series (fixed seeds).
func TestGateAdviceText(t *testing.T) {
	sc := scenario.Scenario{}
	rng := rand.New(rand.NewPCG(4, 2))
	oneBase := noisySeries(rng, sc, "b", 5, 0.02, 1, 1)
	near := noisySeries(rng, sc, "c", 5, 0.02, 1, 1)
	// One session each, no session CV: sessions unmeasured.
	res := gate.Compare(oneBase, near, gate.Gate{}, 0)
	a := check.DecideGate(res.Comparisons, res.Gating)
	if res.Change() != check.ChangeInconclusive || !a.SessionNoiseAssumed || a.PlanErr != nil {
		t.Fatalf("one session each: %v, advice %+v; want inconclusive for unmeasured sessions", res.Change(), a)
	}
	for _, c := range []struct {
		how  gateCommand
		want []string
	}{
		{gateCommand{baseline: "base"}, []string{"more current runs would not: how far sessions wander is not measured (baseline 1 session, fewer than 10). Give --session-cv",
			fmt.Sprintf("a baseline of 10 sessions of %d runs would (it has 1): record each with perfgate profile … --num-profile-runs %d --artifact-dir RUN_DIR in its own job, then perfgate baseline add base RUN_DIR…", a.Plan.Runs, a.Plan.Runs),
			fmt.Sprintf("(perfgate baseline plan --cv %s --margin 5%%)", check.PctText(a.RunCV))}},
		{gateCommand{baseline: "history:nightly?last=3"}, []string{"a baseline of 10 results would (each a session; it has 1): --baseline history:nightly?last=10"}},
	} {
		got := strings.Join(gateAdvice(res, c.how), "\n")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: advice\n%s\nlacks %q", c.how, got, w)
			}
		}
	}

	// A session CV given and a large baseline: more current runs decide it; profile
	// names --num-profile-runs, regress the commands that record and re-gate them.
	g := gate.Gate{SessionCV: 0.002}
	big := noisySeries(rand.New(rand.NewPCG(7, 7)), sc, "b", 60, 0.04, 1, 1)
	few := noisySeries(rand.New(rand.NewPCG(7, 8)), sc, "c", 3, 0.04, 1, 1)
	res = gate.Compare(big, few, g, 0)
	a = check.DecideGate(res.Comparisons, res.Gating)
	if res.Change() != check.ChangeInconclusive || a.CurrentRuns <= 3 {
		t.Fatalf("60 baseline runs, 3 current: %v, advice %+v; want more current runs", res.Change(), a)
	}
	n := a.CurrentRuns
	for how, want := range map[gateCommand]string{
		{baseline: "base"}: fmt.Sprintf("about %d runs on the current side decide it (this gate ran 3): re-run with --num-profile-runs %d --max-runs %d", n, n, n),
		{regress: true, baseline: "base", current: "cur"}: fmt.Sprintf("about %d runs on the current side decide it (it has 3): record them with perfgate profile … --num-profile-runs %d --artifact-dir DIR, then perfgate regress base DIR", n, n),
	} {
		if got := strings.Join(gateAdvice(res, how), "\n"); got != want {
			t.Errorf("%+v: advice %q, want %q", how, got, want)
		}
	}
	// The failure path: with the runs it asks for, the gate decides and asks nothing.
	more := noisySeries(rand.New(rand.NewPCG(7, 9)), sc, "c", n+10, 0.04, 1, 1)
	if res := gate.Compare(big, more, g, 0); res.Change() == check.ChangeInconclusive || gateAdvice(res, gateCommand{}) != nil {
		t.Errorf("with %d current runs: %v, advice %q; want decided, none", n+10, res.Change(), gateAdvice(res, gateCommand{}))
	}

	// A one-session baseline of 3 noisy runs, 20 current runs, a session CV given: the
	// baseline's runs limit it.
	small := noisySeries(rand.New(rand.NewPCG(3, 5)), sc, "b", 3, 0, 1, 1)
	for i, x := range []float64{1.00, 0.94, 1.06} {
		for k := range small.Runs[i].Stats {
			small.Runs[i].Stats[k] *= x
		}
	}
	res = gate.Compare(small, noisySeries(rand.New(rand.NewPCG(3, 6)), sc, "c", 20, 0.05, 1, 1), g, 0)
	a = check.DecideGate(res.Comparisons, res.Gating)
	if res.Change() != check.ChangeInconclusive || a.BaselineRuns <= 3 {
		t.Fatalf("3 noisy baseline runs: %v, advice %+v; want more baseline runs", res.Change(), a)
	}
	want := fmt.Sprintf("more current runs would not; a baseline of about %d runs in its one session would (it has 3): re-record it with perfgate profile … --num-profile-runs %d --artifact-dir base", a.BaselineRuns, a.BaselineRuns)
	if got := strings.Join(gateAdvice(res, gateCommand{baseline: "base"}), "\n"); got != want {
		t.Errorf("advice %q, want %q", got, want)
	}
}

// TestRegressPrintsAdvice: `perfgate regress` of an inconclusive gate prints the advice
// under the headline, and still exits 0 (inconclusive passes) or 3 with
// --fail-inconclusive.
func TestRegressPrintsAdvice(t *testing.T) {
	dir := t.TempDir()
	base := savedSeries(t, filepath.Join(dir, "base"), "b", scenario.Scenario{}, 1.00, 1.03, 0.97, 1.01, 0.99)
	cur := savedSeries(t, filepath.Join(dir, "cur"), "c", scenario.Scenario{}, 1.004, 1.016, 0.982, 1.002, 0.996)
	for flag, code := range map[string]int{"": ExitOK, "--fail-inconclusive": ExitInconclusive} {
		args := []string{"regress", "--html", "-", base, cur}
		if flag != "" {
			args = append([]string{"regress", flag}, args[1:]...)
		}
		got, out, errOut := cli(t, args...)
		lines := strings.Split(out, "\n")
		if got != code || !strings.HasPrefix(lines[0], "INCONCLUSIVE regression gate: inconclusive: ") ||
			!strings.HasPrefix(lines[1], "    to decide: more current runs would not: how far sessions wander is not measured") ||
			!strings.Contains(lines[1], "perfgate baseline add "+base+" RUN_DIR…") {
			t.Errorf("regress %s: exit %d, want %d with the advice under the headline\n%s%s", flag, got, code, out, errOut)
		}
	}
}

// TestBaselineAddRefusals: a session of another workload is refused naming its
// directory, the runs it would have been and the setting; an empty session (a
// directory with no runs) is a clear error; neither changes the baseline.
func TestBaselineAddRefusals(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	day := savedSeries(t, filepath.Join(dir, "day0"), "", scenario.Scenario{}, 1, 1.01, 0.99)
	if code, out, errOut := cli(t, "baseline", "add", base, day); code != ExitOK {
		t.Fatalf("baseline add: exit %d\n%s%s", code, out, errOut)
	}
	other := scenario.Scenario{}
	other.Concurrency = 7
	odd := savedSeries(t, filepath.Join(dir, "odd"), "", other, 1, 1.01)
	code, _, errOut := cli(t, "baseline", "add", base, odd)
	if want := odd + " (the session that would be runs 4–5 of " + base + "): another workload: concurrency: baseline"; code != ExitInvalidConfig || !strings.Contains(errOut, want) ||
		!strings.Contains(errOut, "the baseline's runs 1–3 are the other workload") {
		t.Errorf("baseline add of another workload: exit %d, want 2 and %q\n%s", code, want, errOut)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "baseline", "add", base, empty)
	if code != ExitInvalidConfig || !strings.Contains(errOut, empty+" holds no runs") {
		t.Errorf("baseline add of an empty directory: exit %d, want 2 saying it holds no runs\n%s", code, errOut)
	}
	// Two sessions of different workloads added to a new baseline at once: nothing is
	// written.
	fresh := filepath.Join(dir, "fresh")
	if code, _, _ := cli(t, "baseline", "add", fresh, day, odd); code != ExitInvalidConfig {
		t.Errorf("baseline add of two workloads: exit %d, want 2", code)
	}
	if _, err := os.Stat(filepath.Join(fresh, gate.RunsFile)); err == nil {
		t.Errorf("a refused baseline add wrote %s", gate.RunsFile)
	}
	if s, err := perfrun.LoadSeries(base); err != nil || s.Len() != 3 {
		t.Errorf("the baseline after the refusals: %v, want its 3 runs", err)
	}
}

var t0History = time.Date(2026, 10, 1, 2, 0, 0, 0, time.UTC)

// seedMetrics adds n results to a history: every primary statistic and TTFT p99, at
// 2% noise (seeded); from result at the primary statistics are slower by step and
// TTFT p99 by p99Step.
func seedMetrics(t *testing.T, addr, sc string, n, at int, step, p99Step float64) {
	t.Helper()
	s, err := history.Open(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range n {
		x, y := 1.0, 1.0
		if i >= at {
			x, y = 1+step, 1+p99Step
		}
		r := &history.Result{Fingerprint: "synthetic-" + sc, Scenario: sc, Commit: fmt.Sprintf("%07x%033d", i+1, 0), Branch: "main", Created: t0History.AddDate(0, 0, i)}
		for k := range 3 {
			j := func() float64 { return 1 + 0.02*rng.NormFloat64() }
			r.Runs = append(r.Runs, history.Run{Run: k + 1, Stats: map[string]float64{"ttft_p50": 0.1 * x * j(), "itl_p50": 0.01 * x * j(),
				"latency_p50": 0.5 * x * j(), "output_tps": 900 / x * j(), "ttft_p99": 0.3 * y * j(), "itl_p99": 0.03 * y * j()}})
		}
		if _, err := s.Add(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHistoryCheckAndReportAgree: history check and history report count regressions by
// one definition (history.Check.JudgeAll over the primary statistics): on a history
// where two primary statistics and two reported-only ones regressed, both count the
// primary ones; the report draws the others as reported, not gating.
func TestHistoryCheckAndReportAgree(t *testing.T) {
	t.Setenv(history.EnvHistory, "")
	db := filepath.Join(t.TempDir(), "h.db")
	seedMetrics(t, db, "nightly", 30, 24, 0.15, 0.30)
	code, out, _ := cli(t, "history", "check", "--db", db)
	checked := strings.Count(out, "REGRESSION: ")
	if code != ExitAssertFailed || checked < 1 {
		t.Fatalf("history check: exit %d, %d regressions; want 99\n%s", code, checked, out)
	}
	html := filepath.Join(t.TempDir(), "h.html")
	if code, out, errOut := cli(t, "history", "report", "--db", db, "--out", html); code != ExitOK {
		t.Fatalf("history report: exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if want := fmt.Sprintf(`id="regressions">%d regression(s) in ttft_p50, itl_p50, latency_p50, output_tps`, checked); !strings.Contains(page, want) {
		t.Errorf("report and check disagree: check counts %d; the report lacks %q", checked, want)
	}
	if !strings.Contains(page, "(reported, not gating)") {
		t.Errorf("the report does not mark TTFT p99's regression as reported, not gating")
	}
}

// TestHistoryCheckNotEnoughData: history check never says "no regression" of a series it
// cannot judge: with fewer results than change-point detection needs it says so and how
// many it needs, and after a last result 10% slower it says there are too few results
// since that commit to tell. Exit 0 in both (nothing was found); the failure path, a
// settled step, is 99.
func TestHistoryCheckNotEnoughData(t *testing.T) {
	t.Setenv(history.EnvHistory, "")
	dir := t.TempDir()
	few := filepath.Join(dir, "few.db")
	seedMetrics(t, few, "nightly", 3, 99, 0, 0)
	code, out, _ := cli(t, "history", "check", "--db", few, "--metric", "ttft_p50")
	if code != ExitOK || strings.Contains(out, "no regression beyond") ||
		!strings.Contains(out, "NOT ENOUGH DATA: nightly ttft_p50: not enough data: 3 results; change-point detection needs at least 6 (3 on each side of a change, --min-segment)") {
		t.Errorf("history check of 3 results: exit %d\n%s", code, out)
	}
	step := filepath.Join(dir, "step.db")
	seedMetrics(t, step, "nightly", 11, 10, 0.10, 0)
	code, out, _ = cli(t, "history", "check", "--db", step, "--metric", "ttft_p50")
	if code != ExitOK || strings.Contains(out, "no regression beyond 5% near") ||
		!strings.Contains(out, "TOO FEW RESULTS: nightly ttft_p50: too few results since commit 000000b000 to tell: the newest 1 result (from result 11) is 1") {
		t.Errorf("history check after one 10%%-slower result: exit %d\n%s", code, out)
	}
	t.Logf("history check after one 10%%-slower result:\n%s", out)
	settled := filepath.Join(dir, "settled.db")
	seedMetrics(t, settled, "nightly", 14, 10, 0.10, 0)
	if code, out, _ := cli(t, "history", "check", "--db", settled, "--metric", "ttft_p50"); code != ExitAssertFailed || !strings.Contains(out, "REGRESSION: nightly ttft_p50 regressed") {
		t.Errorf("history check after four 10%%-slower results: exit %d, want 99\n%s", code, out)
	}
}

// TestBaselineHeadline: recording a baseline says what it is (runs, sessions, workload,
// directory), its primary statistics' between-run CV, and whether that is decisive at
// the default margin, as baseline plan computes it: yes for steady runs, not yet for
// noisy ones (naming the sessions a measured gate needs), and by the measured plan for
// a baseline of ten sessions.
func TestBaselineHeadline(t *testing.T) {
	sc := scenario.Scenario{Name: "nightly"}
	steady := noisySeries(rand.New(rand.NewPCG(2, 2)), sc, "s", 5, 0.002, 1, 1)
	steady.Dir = "base"
	got := strings.Join(baselineHeadline(steady), "\n")
	for _, want := range []string{`baseline recorded: 5 runs in 1 session of "nightly" (`, "between-run CV of the primary statistics: TTFT p50 ",
		"decisive at the default 5% margin (80% power; perfgate baseline plan --cv ", "): yes, if sessions wander no more than runs", "to measure how far sessions wander instead: 10 sessions of"} {
		if !strings.Contains(got, want) {
			t.Errorf("steady baseline headline lacks %q:\n%s", want, got)
		}
	}
	noisy := noisySeries(rand.New(rand.NewPCG(2, 3)), sc, "s", 5, 0.03, 1, 1)
	noisy.Dir = "base"
	if got := strings.Join(baselineHeadline(noisy), "\n"); !strings.Contains(got, "): not yet: ") || !strings.Contains(got, "perfgate baseline add ") {
		t.Errorf("noisy baseline headline:\n%s\nwant 'not yet' and how to add sessions", got)
	}
	ten := perfrun.NewSeries("base", sc)
	for k := range 10 {
		if err := ten.AppendSession(noisySeries(rand.New(rand.NewPCG(2, uint64(k))), sc, fmt.Sprint("s", k), 8, 0.002, 1, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(baselineHeadline(ten), "\n"); !strings.Contains(got, "80 runs in 10 sessions") || !strings.Contains(got, "): yes: the gate measures how far sessions wander") {
		t.Errorf("ten-session baseline headline:\n%s", got)
	}
	one := noisySeries(rand.New(rand.NewPCG(2, 4)), sc, "s", 1, 0.01, 1, 1)
	if got := strings.Join(baselineHeadline(one), "\n"); !strings.Contains(got, "not measured (one run)") {
		t.Errorf("one-run baseline headline:\n%s", got)
	}
	var b strings.Builder
	writeRunStatTable(&b, steady)
	if n := strings.Count(b.String(), "\n"); n != 6 || !strings.Contains(b.String(), "ttft_p99") || !strings.Contains(b.String(), "primary") {
		t.Errorf("run statistic table (%d lines):\n%s", n, b.String())
	}
}

// A statistic with a run at zero (a prefix-cache hit rate on a cold run) has no
// geometric mean: the baseline table says "-", not 9.43e-59% (a clamped log of zero).
func TestRunStatTableZeroRun(t *testing.T) {
	s := noisySeries(rand.New(rand.NewPCG(2, 5)), scenario.Scenario{Name: "nightly"}, "s", 3, 0.002, 1, 1)
	for i, v := range []float64{0, 0.9, 0.929} {
		s.Runs[i].Stats["prefix_cache_hit_rate"] = v
	}
	var b strings.Builder
	writeRunStatTable(&b, s)
	var row []string
	for line := range strings.Lines(b.String()) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "prefix_cache_hit_rate" {
			row = f
		}
	}
	if len(row) < 5 || row[1] != "-" || strings.Contains(b.String(), "e-") {
		t.Errorf("prefix_cache_hit_rate row %q in:\n%s\nwant geometric mean \"-\" and no tiny number", row, b.String())
	}
	if g := check.GeoMean([]float64{2, 8}); math.Abs(g-4) > 1e-12 {
		t.Errorf("GeoMean(2, 8) = %v, want 4", g)
	}
}
