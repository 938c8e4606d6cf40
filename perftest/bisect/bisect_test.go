package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/perftest/gate"
)

// newRepo makes a throwaway repository in a temporary directory with one commit per
// latency, each writing it into the file "latency" (ms), on branch main, checked out,
// and returns its directory and the commits' hashes, oldest first. The commits are
// written by one git fast-import.
func newRepo(t testing.TB, latencies ...float64) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	testutil.Git(t, dir, "init", "-q", "-b", "main")
	var in strings.Builder
	for i, l := range latencies {
		data := strconv.FormatFloat(l, 'f', -1, 64) + "\n"
		msg := fmt.Sprintf("c%d: latency %g ms\n", i, l)
		fmt.Fprintf(&in, "commit refs/heads/main\nmark :%d\ncommitter t <t@example.com> %d +0000\ndata %d\n%s", i+1, 1700000000+i, len(msg), msg)
		fmt.Fprintf(&in, "M 100644 inline latency\ndata %d\n%s\n", len(data), data)
	}
	for i := range latencies {
		fmt.Fprintf(&in, "get-mark :%d\n", i+1)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git fast-import: %v", err)
	}
	shas := strings.Fields(string(out))
	testutil.Git(t, dir, "checkout", "-q", "-f", "main")
	return dir, shas
}

// fakeServer measures a commit as a server whose latency is the work tree's "latency"
// file times a per-run factor drawn log-normal with mean 1 and coefficient of
// variation cv (cvAt overrides it per latency), from a seeded source: the run-to-run
// noise of a real server, the same for every statistic of a run.
type fakeServer struct {
	dir   string
	rng   *rand.Rand
	cv    float64
	cvAt  map[float64]float64
	fail  map[float64]error // the error measuring this latency returns
	calls int
	seen  map[string]float64 // commit → the latency its work tree held
}

func newFakeServer(dir string, seed uint64, cv float64) *fakeServer {
	return &fakeServer{dir: dir, rng: rand.New(rand.NewPCG(seed, 40)), cv: cv, seen: map[string]float64{}}
}

func (f *fakeServer) measure(ctx context.Context, commit string, s *gate.Series, n int) error {
	f.calls++
	b, err := os.ReadFile(filepath.Join(f.dir, "latency"))
	if err != nil {
		return err
	}
	lat, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return err
	}
	f.seen[commit] = lat
	if err := f.fail[lat]; err != nil {
		return err
	}
	if s.Workload == nil {
		s.Workload = &gate.Workload{Name: "fake", Settings: [][2]string{{"isl", "128"}, {"concurrency", "8"}}}
	}
	cv := f.cv
	if c, ok := f.cvAt[lat]; ok {
		cv = c
	}
	for range n {
		s2 := math.Log1p(cv * cv)
		x := lat / 1000 * math.Exp(f.rng.NormFloat64()*math.Sqrt(s2)-s2/2)
		s.Add(gate.RunStats{Requests: 100, Stats: map[string]float64{
			"ttft_p50": x, "itl_p50": x / 4, "latency_p50": 3 * x, "output_tps": 1 / x,
		}}, gate.RunDir(s.Len()))
	}
	return nil
}

// clean fails t unless dir's repository is back on main with no bisection under way
// and no change to its files.
func clean(t *testing.T, dir string) {
	t.Helper()
	if b := testutil.Git(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); b != "main" {
		t.Errorf("after Run the work tree is at %q, want back on main", b)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "BISECT_START")); err == nil {
		t.Errorf("after Run a git bisect is still under way (.git/BISECT_START): want git bisect reset")
	}
	if st := testutil.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("after Run the work tree has changes:\n%s", st)
	}
}

// The culprit, 10% slower under noise at CV 3%, is the first bad commit git names; the
// bad commit is gated first; every commit was measured with its own tree checked out;
// the good side's runs are reused (measured once and grown, never remeasured); the
// repository ends back on main.
func TestRunFindsTheCulprit(t *testing.T) {
	dir, shas := newRepo(t, 100, 100, 110) // three commits keep it quick: each git bisect command is a shell script (git 2.39); TestFindsTheCulpritUnderNoise bisects eight
	f := newFakeServer(dir, 1, 0.03)
	res, err := Run(t.Context(), Config{Dir: dir, Good: "HEAD~2", Bad: "main", Measure: f.measure})
	if err != nil {
		t.Fatal(err)
	}
	clean(t, dir)
	if !res.Found() || res.FirstBad != shas[2] {
		t.Fatalf("first bad commit %s, want c2 %s\n%s", Short(res.FirstBad), Short(shas[2]), res.Headline())
	}
	if len(res.Steps) != 2 || res.Steps[0].Commit != shas[2] || res.Steps[0].Verdict != Bad || res.Steps[1].Commit != shas[1] {
		t.Errorf("%d steps, the first %s %s; want the bad commit c2 gated first, bad, then c1 (git's choice)", len(res.Steps), Short(res.Steps[0].Commit), res.Steps[0].Verdict)
	}
	for _, st := range res.Steps {
		i := indexOf(shas, st.Commit)
		want := map[bool]Verdict{true: Bad, false: Good}[i >= 2]
		if st.Verdict != want {
			t.Errorf("%s (c%d) gated %s, want %s: %s", Short(st.Commit), i, st.Verdict, want, st.Line())
		}
		if lat, wantLat := f.seen[st.Commit], map[bool]float64{true: 110, false: 100}[i >= 2]; lat != wantLat {
			t.Errorf("%s (c%d) was measured with a work tree holding latency %g, want its own %g", Short(st.Commit), i, lat, wantLat)
		}
	}
	if f.seen[shas[0]] != 100 {
		t.Errorf("the good commit was measured with latency %g, want its own 100", f.seen[shas[0]])
	}
	if n := res.GoodRuns.Len(); n < 5 || n > 20 {
		t.Errorf("the good side has %d runs, want 5 to 20 (the gate's plan)", n)
	}
	for _, st := range res.Steps {
		b := st.Result.Baseline
		if b == nil || b.Len() > res.GoodRuns.Len() || b.Len() == 0 || b.Runs[0].Stats["ttft_p50"] != res.GoodRuns.Runs[0].Stats["ttft_p50"] {
			t.Errorf("%s was gated against another baseline than the good side's runs so far", Short(st.Commit))
			continue
		}
		if n := st.Result.Comparisons[0].Baseline; len(n) != b.Len() {
			t.Errorf("%s: its gate compared %d good runs, but its result says %d: the good side's later runs leaked into it", Short(st.Commit), len(n), b.Len())
		}
	}
	h := res.Headline()
	for _, want := range []string{"first bad commit " + Short(shas[2]), "c2: latency 110 ms", "TTFT p50 +", "[+", "against good " + Short(shas[0])} {
		if !strings.Contains(h, want) {
			t.Errorf("headline lacks %q:\n%s", want, h)
		}
	}
	t.Logf("%s\ngood runs: %d, measure calls: %d", h, res.GoodRuns.Len(), f.calls)
	s := res.Summary()
	if s.Mark != "FOUND" || len(s.Stats) == 0 || len(s.Lines) != 1+len(res.Steps) {
		t.Errorf("summary: mark %q, %d statistics, %d lines; want FOUND, the culprit's statistics, good/bad and one line per step", s.Mark, len(s.Stats), len(s.Lines))
	}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// A culprit the gate cannot tell at its cap of runs (c1: 5% slower, at CV 30%) is skipped,
// as `git bisect run` skips on exit 125, and git is left with two commits that could be
// the first bad one: no commit is named.
func TestInconclusiveIsSkipped(t *testing.T) {
	dir, shas := newRepo(t, 100, 105, 110)
	f := newFakeServer(dir, 2, 0.01)
	f.cvAt = map[float64]float64{105: 0.3}
	res, err := Run(t.Context(), Config{Dir: dir, Good: shas[0], Bad: shas[2], Measure: f.measure})
	if err != nil {
		t.Fatal(err)
	}
	clean(t, dir)
	if res.Found() {
		t.Fatalf("named %s the first bad commit; want none (c1 inconclusive)\n%s", Short(res.FirstBad), res.Headline())
	}
	var skipped *Step
	for i, st := range res.Steps {
		if st.Commit == shas[1] {
			skipped = &res.Steps[i]
		}
	}
	if skipped == nil || skipped.Verdict != Skip || !skipped.Result.Inconclusive() || skipped.Result.Current.Len() != 20 {
		t.Fatalf("c1 was not gated inconclusive at 20 runs and skipped: %+v", skipped)
	}
	if got := strings.Join(res.Candidates, " "); !strings.Contains(got, shas[1]) || !strings.Contains(got, shas[2]) || len(res.Candidates) != 2 {
		t.Errorf("candidates %v, want c1 and c2", res.Candidates)
	}
	if h := res.Headline(); !strings.Contains(h, "no single first bad commit") || !strings.Contains(h, Short(shas[1])) {
		t.Errorf("headline: %s", h)
	}
	if s := res.Summary(); s.Mark != "INCONCLUSIVE" {
		t.Errorf("summary mark %q, want INCONCLUSIVE", s.Mark)
	}
}

// A commit whose server cannot be measured (ErrUntestable) is skipped; any other error
// stops the bisection, and a cancelled context too; either way the repository's
// bisection is reset.
func TestErrorsResetTheBisection(t *testing.T) {
	testutil.Long(t) // three bisections: git bisect is a shell script in git 2.39, ~0.1 s of CPU a command
	dir, shas := newRepo(t, 100, 100, 110, 110)
	f := newFakeServer(dir, 3, 0.03)
	f.fail = map[float64]error{}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	broken := errors.New("disk full")
	measure := func(ctx context.Context, commit string, s *gate.Series, n int) error {
		calls++
		if calls == 3 {
			return broken
		}
		return f.measure(ctx, commit, s, n)
	}
	if _, err := Run(ctx, Config{Dir: dir, Good: shas[0], Bad: shas[3], Measure: measure}); !errors.Is(err, broken) {
		t.Errorf("Run with a failing measure: %v, want its error", err)
	}
	clean(t, dir)

	calls = 0
	measure = func(ctx context.Context, commit string, s *gate.Series, n int) error {
		if calls++; calls == 3 {
			cancel() // Ctrl-C while a commit is measured
			return ctx.Err()
		}
		return f.measure(ctx, commit, s, n)
	}
	if _, err := Run(ctx, Config{Dir: dir, Good: shas[0], Bad: shas[3], Measure: measure}); !errors.Is(err, context.Canceled) {
		t.Errorf("Run cancelled: %v, want context.Canceled", err)
	}
	clean(t, dir)

	f.fail[105] = fmt.Errorf("server exited before it was ready: %w", ErrUntestable)
	dir, shas = newRepo(t, 100, 105, 110, 110)
	f.dir = dir
	res, err := Run(t.Context(), Config{Dir: dir, Good: shas[0], Bad: shas[3], Measure: f.measure})
	if err != nil {
		t.Fatal(err)
	}
	clean(t, dir)
	if res.Found() || len(res.Candidates) != 2 || res.Candidates[0] != shas[1] && res.Candidates[1] != shas[1] {
		t.Errorf("an untestable c1 before a bad c2: found %q, candidates %v; want c1 and c2 left", Short(res.FirstBad), res.Candidates)
		for _, st := range res.Steps {
			t.Logf("c%d %s", indexOf(shas, st.Commit), st.Line())
		}
	}
	for _, st := range res.Steps {
		if st.Commit == shas[1] && (st.Verdict != Skip || !strings.Contains(st.Untestable, "exited before it was ready")) {
			t.Errorf("c1: %s, want skipped, saying why", st.Line())
		}
	}
}

// A bad commit no slower than the good one is gated first and found not to regress:
// nothing is bisected and nothing is named.
func TestNoRegressionNothingToBisect(t *testing.T) {
	testutil.Long(t)
	dir, shas := newRepo(t, 100, 100, 100, 100)
	f := newFakeServer(dir, 4, 0.01)
	res, err := Run(t.Context(), Config{Dir: dir, Good: shas[0], Bad: "main", Measure: f.measure})
	if err != nil {
		t.Fatal(err)
	}
	clean(t, dir)
	if res.Found() || len(res.Steps) != 1 || res.Steps[0].Verdict != Good {
		t.Fatalf("found %q after %d steps, want the bad commit gated good and nothing bisected", Short(res.FirstBad), len(res.Steps))
	}
	if h := res.Headline(); !strings.Contains(h, "does not regress") || !strings.Contains(h, "nothing to bisect") {
		t.Errorf("headline: %s", h)
	}
}

// Bad input is an error wrapping ErrInvalid, naming what is wrong, before anything is
// measured, and leaves no bisection behind.
func TestBadInput(t *testing.T) {
	dir, shas := newRepo(t, 100, 100, 110)
	for _, tc := range []struct {
		name        string
		good, bad   string
		prepare     func(dir string) func()
		want        string
		dirOverride string
	}{
		{name: "unknown good", good: "v9.9", bad: "main", want: `good "v9.9": not a commit`},
		{name: "unknown bad", good: shas[0], bad: "nosuchbranch", want: `bad "nosuchbranch": not a commit`},
		{name: "swapped", good: shas[2], bad: shas[0], want: "is not an ancestor of bad"},
		{name: "same", good: "main", bad: shas[2], want: "are the same commit"},
		{name: "dirty", good: shas[0], bad: "main", prepare: func(dir string) func() {
			_ = os.WriteFile(filepath.Join(dir, "latency"), []byte("1\n"), 0o644)
			return func() { testutil.Git(t, dir, "checkout", "-q", "--", ".") }
		}, want: "uncommitted changes (latency)"},
		{name: "under way", good: shas[0], bad: "main", prepare: func(dir string) func() {
			start := filepath.Join(dir, ".git", "BISECT_START") // what git bisect start writes first
			_ = os.WriteFile(start, []byte("main\n"), 0o644)
			return func() { os.Remove(start) }
		}, want: "a git bisect is already under way"},
		{name: "not a repository", good: shas[0], bad: "main", dirOverride: t.TempDir(), want: "is not in a git work tree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := dir
			if tc.dirOverride != "" {
				d = tc.dirOverride
			}
			if tc.prepare != nil {
				defer tc.prepare(d)()
			}
			f := newFakeServer(d, 5, 0.03)
			_, err := Run(t.Context(), Config{Dir: d, Good: tc.good, Bad: tc.bad, Measure: f.measure})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run: %v, want ErrInvalid saying %q", err, tc.want)
			}
			if f.calls != 0 {
				t.Errorf("measured %d times, want none before the input is checked", f.calls)
			}
			if _, err := os.Stat(filepath.Join(d, ".git", "BISECT_START")); err == nil && tc.name != "under way" {
				t.Errorf("Run left a git bisect under way")
			}
		})
	}
}

// Under noise at CV 3%, a culprit 10% slower is found in at least 19 of 20 seeded
// bisections (of a repository of 8 commits, the culprit anywhere after the first).
func TestFindsTheCulpritUnderNoise(t *testing.T) {
	testutil.Long(t)
	found := 0
	var goodRuns, gated []int
	for seed := range uint64(20) {
		culprit := 1 + int(seed%7)
		lat := make([]float64, 8)
		for i := range lat {
			lat[i] = map[bool]float64{true: 110, false: 100}[i >= culprit]
		}
		dir, shas := newRepo(t, lat...)
		f := newFakeServer(dir, 100+seed, 0.03)
		res, err := Run(t.Context(), Config{Dir: dir, Good: shas[0], Bad: "main", Measure: f.measure})
		if err != nil {
			t.Fatal(err)
		}
		goodRuns = append(goodRuns, res.GoodRuns.Len())
		gated = append(gated, len(res.Steps))
		if res.FirstBad == shas[culprit] {
			found++
		} else {
			t.Logf("seed %d: culprit c%d, %s", seed, culprit, res.Headline())
		}
	}
	t.Logf("found in %d of 20; commits gated %v; good runs %v", found, gated, goodRuns)
	if found < 19 {
		t.Errorf("the culprit was found in %d of 20 seeded bisections, want at least 19", found)
	}
}
