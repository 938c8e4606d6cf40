package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/reportgen"
)

// series builds a series whose runs have the primary statistics at base×f[i] (f[i]
// for TTFT, ITL, latency; base/f[i] for throughput), and extra statistics as given.
func series(sc Scenario, f []float64, extra map[string][]float64) *Series {
	s := &Series{Scenario: sc}
	for i, x := range f {
		st := map[string]float64{"ttft_p50": 0.05 * x, "itl_p50": 0.01 * x, "latency_p50": 0.3 * x, "output_tps": 500 / x}
		for k, v := range extra {
			st[k] = v[i]
		}
		s.Runs = append(s.Runs, RunStats{Run: i + 1, Stats: st, Target: "http://127.0.0.1:18030"})
		s.Dirs = append(s.Dirs, RunDir(i))
	}
	return s
}

var noise5 = []float64{1.00, 1.01, 0.99, 1.005, 0.995}

func scale(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

func TestCompareVerdicts(t *testing.T) {
	sc := Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{"http://127.0.0.1:18030"}}}}
	other := sc
	other.URLs = []string{"http://127.0.0.1:18031"}
	base := series(sc, noise5, nil)
	for _, c := range []struct {
		name   string
		cur    []float64
		g      Gate
		change check.Change
		pass   bool
		head   string
	}{
		{"same", []float64{1.002, 0.998, 1.007, 0.993, 1.0}, Gate{}, check.ChangeNoRegression, true, "regression gate: no regression on 4 gating statistics (baseline 5 runs in 1 session, current 5 runs in 1 session)"},
		{"20% slower", scale(noise5, 1.2), Gate{}, check.ChangeRegressed, false, "regression gate: regressed: TTFT p50 +20.0%, ITL p50 +20.0%, request latency p50 +20.0%, output token throughput -16.7% (baseline 5 runs in 1 session, current 5 runs in 1 session)"},
		{"20% faster", scale(noise5, 0.8), Gate{}, check.ChangeImproved, true, "regression gate: improved, no regression:"},
		{"4% slower, 5% margin", []float64{1.04, 1.06, 1.02, 1.05, 1.03}, Gate{}, check.ChangeInconclusive, true, "regression gate: inconclusive:"},
		{"inconclusive fails", []float64{1.04, 1.06, 1.02, 1.05, 1.03}, Gate{FailInconclusive: true}, check.ChangeInconclusive, false, "regression gate: inconclusive: TTFT p50 +4.0%"},
	} {
		r := Compare(base, series(other, c.cur, nil), c.g, 0)
		if r.Change() != c.change || r.Pass() != c.pass || !strings.HasPrefix(r.Headline(), c.head) ||
			strings.HasSuffix(r.Headline(), "inconclusive fails this gate") != (c.change == check.ChangeInconclusive && !c.pass) {
			t.Errorf("%s: change %v, pass %v, %q; want %v, %v, %q", c.name, r.Change(), r.Pass(), r.Headline(), c.change, c.pass, c.head)
		}
		// Another port is the same workload; the target difference is shown.
		if len(r.Workload) != 0 || len(r.Target) != 1 || r.Target[0].Field != "urls" {
			t.Errorf("%s: workload %v, target %v; want the URLs as a target difference only", c.name, r.Workload, r.Target)
		}
	}
	// A reported-only statistic's regression passes, unless the gate names it.
	extra := func(f float64) map[string][]float64 { return map[string][]float64{"ttft_p99": scale(noise5, f)} }
	r := Compare(series(sc, noise5, extra(0.2)), series(sc, noise5, extra(0.3)), Gate{}, 0)
	if !r.Pass() || r.Change() != check.ChangeNoRegression {
		t.Errorf("ttft_p99 +50%%, reported only: pass %v, %v; want a pass", r.Pass(), r.Change())
	}
	vs := r.AllVerdicts()
	if last := vs[len(vs)-1]; !last.Pass || last.Status != check.Decided || !strings.HasPrefix(last.Summary, "TTFT p99 +") ||
		strings.Contains(last.String(), "want") || strings.Contains(last.String(), "regressed if") {
		t.Errorf("reported statistic's verdict = %v; want a passing 'TTFT p99 +…' with no threshold", last)
	}
	r = Compare(series(sc, noise5, extra(0.2)), series(sc, noise5, extra(0.3)), Gate{Fail: []string{"ttft_p99"}}, 0)
	if r.Pass() || r.Change() != check.ChangeRegressed {
		t.Errorf("ttft_p99 +50%%, named in Fail: pass %v, %v; want regressed", r.Pass(), r.Change())
	}
	// Another workload is refused, with the differences.
	slow := sc
	slow.ISL = distribution.MustSpec("fixed:512")
	r = Compare(base, series(slow, noise5, nil), Gate{}, 0)
	if r.Pass() || !r.Invalid() || !strings.Contains(r.Headline(), "another workload (isl differ)") || r.AllVerdicts()[0].Status != check.Invalid {
		t.Errorf("another ISL: %q pass %v", r.Headline(), r.Pass())
	}
	if r := Compare(base, series(slow, noise5, nil), Gate{IgnoreWorkload: []string{"isl"}}, 0); !r.Pass() {
		t.Errorf("ISL ignored: %q", r.Headline())
	}
	// One run per side: inconclusive, saying that between-run noise was not measured.
	r = Compare(series(sc, []float64{1}, nil), series(sc, []float64{1.3}, nil), Gate{}, 0)
	if r.Change() != check.ChangeInconclusive || !strings.Contains(r.AllVerdicts()[0].String(), "between-run noise") {
		t.Errorf("one run per side: %v\n%s", r.Change(), r.AllVerdicts()[0])
	}
	// One current run against a K-run baseline: the baseline's CV is the prior.
	r = Compare(base, series(sc, []float64{1.3}, nil), Gate{}, 0)
	if r.Change() != check.ChangeRegressed {
		t.Errorf("one current run 30%% slower than a 5-run baseline: %v, want regressed\n%s", r.Change(), r.AllVerdicts()[0])
	}
	if r := Compare(base, &Series{}, Gate{}, 0); r.Pass() || !r.Invalid() {
		t.Errorf("an empty current side passed")
	}
}

// The sequential plan adds runs while a primary statistic is inconclusive, each look at
// its share of the family alpha, and stops at the first settled look or at the cap.
func TestGateLooks(t *testing.T) {
	sc := Scenario{}
	noisy := []float64{1.00, 1.08, 0.93, 1.05, 0.95, 1.02, 0.98, 1.06, 0.94, 1.01}
	base := series(sc, append(append([]float64{}, noisy...), noisy...), nil)
	var sizes []int
	// Same noise as the baseline, a 10% slowdown: at 5 runs the wide interval cannot tell,
	// later looks can. (A one-session baseline needs a between-session CV for more runs
	// to help; without one, see TestGateLooksSessionLimited.)
	sizes = nil
	r, err := gateLooks(Gate{SessionCV: 0.005}, base, func(look, k int, _ *Series) (*Series, error) {
		sizes = append(sizes, k)
		return series(sc, scale(append(append([]float64{}, noisy...), noisy...)[:k], 1.1), nil), nil
	}, nil)
	if err != nil || r.Change() != check.ChangeRegressed || r.Looks < 2 || sizes[0] != 5 || sizes[1] != 10 {
		t.Errorf("10%% slower, noisy: %v after looks %v (%d); want regressed after more than one look", r.Change(), sizes, r.Looks)
	}
	if want := (check.Schedule{Start: 5, Cap: 20}).Alpha(0.01, r.Looks-1); r.Alpha != want {
		t.Errorf("look %d's family alpha = %v, want %v", r.Looks, r.Alpha, want)
	}
	// Without a between-session CV more current runs cannot tell a change from session
	// noise: the plan stops at the first look, and the verdict says what would decide it.
	sizes = nil
	r, _ = gateLooks(Gate{}, base, func(look, k int, _ *Series) (*Series, error) {
		sizes = append(sizes, k)
		return series(sc, scale(append(append([]float64{}, noisy...), noisy...)[:k], 1.1), nil), nil
	}, nil)
	if len(sizes) != 1 || r.Change() != check.ChangeInconclusive || !strings.Contains(r.AllVerdicts()[0].Summary, "more runs would not: between-session noise is not measured") {
		t.Errorf("no session CV: looks %v, %v; want one look, inconclusive, naming sessions\n%s", sizes, r.Change(), r.AllVerdicts()[0])
	}
	// Settled at once: one look.
	sizes = nil
	r, _ = gateLooks(Gate{}, series(sc, noise5, nil), func(look, k int, _ *Series) (*Series, error) {
		sizes = append(sizes, k)
		return series(sc, scale(noise5, 1.5)[:min(k, 5)], nil), nil
	}, nil)
	if len(sizes) != 1 || r.Change() != check.ChangeRegressed {
		t.Errorf("50%% slower: looks %v, %v; want one look, regressed", sizes, r.Change())
	}
	// At the cap, inconclusive stays inconclusive: MaxRuns = Runs takes one look.
	sizes = nil
	r, _ = gateLooks(Gate{Runs: 3, MaxRuns: 3}, series(sc, noisy[:3], nil), func(look, k int, _ *Series) (*Series, error) {
		sizes = append(sizes, k)
		return series(sc, scale(noisy[:k], 1.04), nil), nil
	}, nil)
	if len(sizes) != 1 || sizes[0] != 3 || r.Change() != check.ChangeInconclusive {
		t.Errorf("capped at 3: looks %v, %v; want one look of 3, inconclusive", sizes, r.Change())
	}
	// A run's error stops the plan and is returned.
	boom := errors.New("boom")
	if _, err := gateLooks(Gate{}, base, func(int, int, *Series) (*Series, error) { return nil, boom }, nil); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

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
	g := Gate{Runs: 3, MaxRuns: 3, FailInconclusive: true}
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
	run := func(ctx context.Context, s Scenario, d string) (*Outcome, error) {
		order = append(order, s.Mock.TTFT.String())
		return Run(ctx, s, d)
	}
	r, err = Interleave(context.Background(), sc, slow, t.TempDir(), Gate{Runs: 2, MaxRuns: 2}, SeriesOptions{Run: run})
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

func TestGateValidate(t *testing.T) {
	err := Gate{Margin: 5, Margins: map[string]float64{"ttft_p95": 0.1}, Fail: []string{"ttft_p99"}}.Validate()
	if !errors.Is(err, ErrInvalidScenario) || !strings.Contains(err.Error(), "margin 5: want a fraction in (0, 1)") ||
		!strings.Contains(err.Error(), `margins: no run statistic "ttft_p95"`) || !strings.Contains(err.Error(), `did you mean "ttft_p90"?`) {
		t.Errorf("Validate = %v", err)
	}
	if err := (Gate{Margin: 0.02, Fail: []string{"ttft_p99"}}).Validate(); err != nil {
		t.Errorf("a good gate: %v", err)
	}
}

// What each side measured with is compared when both manifests are on disk, and the
// differences are shown beside the verdict (Where), never refusing the comparison.
func TestCompareShowsIdentity(t *testing.T) {
	sc := Scenario{}
	dir := t.TempDir()
	side := func(name, version, fingerprint string) *Series {
		s := series(sc, noise5, nil)
		s.Dir = filepath.Join(dir, name)
		for _, d := range s.Dirs {
			m := reportgen.Manifest{Dataset: &reportgen.Dataset{Fingerprint: fingerprint},
				Servers: []reportgen.Server{{URL: "http://127.0.0.1:18030", Version: version}}}
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(s.Dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.Dir, d, reportgen.ManifestFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	base := side("base", "0.8.1", "aaaa")
	r := Compare(base, side("same", "0.8.1", "aaaa"), Gate{}, 0)
	if len(r.Identity) != 0 {
		t.Errorf("same server and dataset: identity differences %v", r.Identity)
	}
	r = Compare(base, side("new", "0.9.0", "bbbb"), Gate{}, 0)
	where := fmt.Sprint(r.Where())
	if !r.Pass() || len(r.Identity) != 2 || !strings.Contains(where, "measured with differs") ||
		!strings.Contains(where, "server version: baseline 0.8.1, current 0.9.0") || !strings.Contains(where, "dataset fingerprint: baseline aaaa, current bbbb") {
		t.Errorf("a new server version and dataset: pass %v, identity %v, where %s", r.Pass(), r.Identity, where)
	}
	// In memory (no manifests on disk): nothing to compare, nothing shown.
	if r := Compare(series(sc, noise5, nil), series(sc, noise5, nil), Gate{}, 0); len(r.Identity) != 0 {
		t.Errorf("in memory: identity %v", r.Identity)
	}
}

// A one-run side uses the baseline's measured CV, else the CV a one-run baseline
// stores (runs.json prior_cv, kept through SaveIndex and LoadSeries), else the gate's
// configured PriorCV; with none, one run per side is inconclusive.
func TestComparePriorCV(t *testing.T) {
	sc := Scenario{}
	one := func() *Series { return series(sc, []float64{1}, nil) }
	slower := series(sc, []float64{1.3}, nil)
	if r := Compare(one(), slower, Gate{}, 0); r.Change() != check.ChangeInconclusive {
		t.Fatalf("one run per side, no CV: %v, want inconclusive", r.Change())
	}
	base := one()
	base.Dir = t.TempDir()
	base.PriorCV = series(sc, noise5, nil).CVs()
	if len(base.PriorCV) != 4 || math.Abs(base.PriorCV["ttft_p50"]-0.0079) > 0.0005 {
		t.Fatalf("CVs of a 5-run series = %v", base.PriorCV)
	}
	if err := base.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSeries(base.Dir)
	if err != nil || back.PriorCV["ttft_p50"] != base.PriorCV["ttft_p50"] {
		t.Fatalf("LoadSeries: %v, prior %v", err, back.PriorCV)
	}
	r := Compare(back, slower, Gate{}, 0)
	v := r.AllVerdicts()[0].String()
	if r.Change() != check.ChangeRegressed || !strings.Contains(v, "assumed the stored between-run CV 0.791%") {
		t.Errorf("one run per side, a stored CV, 30%% slower: %v, want regressed\n%s", r.Change(), v)
	}
	// The same comparison 0.5% slower with that CV: no regression.
	if r := Compare(back, series(sc, []float64{1.005}, nil), Gate{}, 0); r.Change() != check.ChangeNoRegression {
		t.Errorf("one run per side, a stored CV, 0.5%% slower: %v, want no regression\n%s", r.Change(), r.AllVerdicts()[0])
	}
	// A one-run baseline against several current runs uses the stored CV for its side.
	r = Compare(back, series(sc, scale(noise5, 1.3), nil), Gate{}, 0)
	if v := r.AllVerdicts()[0].String(); r.Change() != check.ChangeRegressed || !strings.Contains(v, "between-run noise of the baseline not measured (one run); assumed the stored between-run CV") {
		t.Errorf("one baseline run with a stored CV, 5 current runs 30%% slower: %v\n%s", r.Change(), v)
	}
	// The gate's configured prior, when the baseline stores none.
	r = Compare(one(), slower, Gate{PriorCV: 0.02}, 0)
	if v := r.AllVerdicts()[0].String(); r.Change() != check.ChangeRegressed || !strings.Contains(v, "assumed the stored between-run CV 2") {
		t.Errorf("one run per side, prior_cv 2%%, 30%% slower: %v\n%s", r.Change(), v)
	}
	if err := (Gate{PriorCV: 1.5}).Validate(); err == nil || !strings.Contains(err.Error(), "prior_cv 1.5") {
		t.Errorf("prior_cv 1.5 accepted: %v", err)
	}
	if err := (&Series{}).SaveIndex(); err == nil {
		t.Errorf("SaveIndex without a directory succeeded")
	}
}
