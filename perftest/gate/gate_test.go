package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/reportgen"
)

// series builds a series whose runs have the primary statistics at base×f[i] (f[i]
// for TTFT, ITL, latency; base/f[i] for throughput), and extra statistics as given.
func series(w Workload, f []float64, extra map[string][]float64) *Series {
	s := &Series{Workload: &w}
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
	sc := Workload{Settings: [][2]string{{"isl", "normal:128,20"}}, Target: [][2]string{{"urls", "http://127.0.0.1:18030"}}}
	other := sc
	other.Target = [][2]string{{"urls", "http://127.0.0.1:18031"}}
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
	slow.Settings = [][2]string{{"isl", "fixed:512"}}
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
	sc := Workload{}
	noisy := []float64{1.00, 1.08, 0.93, 1.05, 0.95, 1.02, 0.98, 1.06, 0.94, 1.01}
	base := series(sc, append(append([]float64{}, noisy...), noisy...), nil)
	var sizes []int
	// Same noise as the baseline, a 10% slowdown: at 5 runs the wide interval cannot tell,
	// later looks can. (A one-session baseline needs a between-session CV for more runs
	// to help; without one, see TestGateLooksSessionLimited.)
	sizes = nil
	r, err := Looks(Gate{SessionCV: 0.005}, base, func(look, k int, _ *Series) (*Series, error) {
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
	r, _ = Looks(Gate{}, base, func(look, k int, _ *Series) (*Series, error) {
		sizes = append(sizes, k)
		return series(sc, scale(append(append([]float64{}, noisy...), noisy...)[:k], 1.1), nil), nil
	}, nil)
	if len(sizes) != 1 || r.Change() != check.ChangeInconclusive || !strings.Contains(r.AllVerdicts()[0].Summary, "more runs would not: between-session noise is not measured") {
		t.Errorf("no session CV: looks %v, %v; want one look, inconclusive, naming sessions\n%s", sizes, r.Change(), r.AllVerdicts()[0])
	}
	// Settled at once: one look.
	sizes = nil
	r, _ = Looks(Gate{}, series(sc, noise5, nil), func(look, k int, _ *Series) (*Series, error) {
		sizes = append(sizes, k)
		return series(sc, scale(noise5, 1.5)[:min(k, 5)], nil), nil
	}, nil)
	if len(sizes) != 1 || r.Change() != check.ChangeRegressed {
		t.Errorf("50%% slower: looks %v, %v; want one look, regressed", sizes, r.Change())
	}
	// At the cap, inconclusive stays inconclusive: MaxRuns = Runs takes one look.
	sizes = nil
	r, _ = Looks(Gate{Runs: 3, MaxRuns: 3}, series(sc, noisy[:3], nil), func(look, k int, _ *Series) (*Series, error) {
		sizes = append(sizes, k)
		return series(sc, scale(noisy[:k], 1.04), nil), nil
	}, nil)
	if len(sizes) != 1 || sizes[0] != 3 || r.Change() != check.ChangeInconclusive {
		t.Errorf("capped at 3: looks %v, %v; want one look of 3, inconclusive", sizes, r.Change())
	}
	// A run's error stops the plan and is returned.
	boom := errors.New("boom")
	if _, err := Looks(Gate{}, base, func(int, int, *Series) (*Series, error) { return nil, boom }, nil); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

func TestGateValidate(t *testing.T) {
	err := Gate{Margin: 5, Margins: map[string]float64{"ttft_p95": 0.1}, Fail: []string{"ttft_p99"}}.Validate()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "margin 5: want a fraction in (0, 1)") ||
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
	sc := Workload{}
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
	sc := Workload{}
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
	back.Workload = base.Workload // what package run's LoadSeries describes
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

// A series whose workload is unknown (nil: built or read without the scenario side
// describing it) is never taken for the same workload: the gate refuses it, saying
// why, even when the settings that may differ are named; AppendSession refuses it too.
func TestCompareRefusesUnknownWorkload(t *testing.T) {
	base := series(Workload{}, noise5, nil)
	for _, c := range []struct {
		name      string
		base, cur *Series
		side      string
	}{
		{"unknown baseline", &Series{Runs: base.Runs, Dirs: base.Dirs}, series(Workload{}, noise5, nil), "baseline unknown"},
		{"unknown current", base, &Series{Runs: base.Runs, Dirs: base.Dirs}, "current unknown"},
	} {
		r := Compare(c.base, c.cur, Gate{IgnoreWorkload: []string{"workload", "isl"}}, 0)
		vs := r.AllVerdicts()
		if r.Pass() || !r.Invalid() || r.Change() != check.ChangeInconclusive || len(r.Comparisons) != 0 ||
			!strings.Contains(r.Headline(), "workload is unknown") || len(vs) != 1 || vs[0].Status != check.Invalid ||
			!strings.Contains(vs[0].String(), c.side) {
			t.Errorf("%s: pass %v, invalid %v, %d comparisons, %q\n%s", c.name, r.Pass(), r.Invalid(), len(r.Comparisons), r.Headline(), vs)
		}
	}
	// The same runs, both described: compared.
	if r := Compare(base, series(Workload{}, noise5, nil), Gate{}, 0); !r.Pass() || r.Invalid() {
		t.Errorf("both described: %q", r.Headline())
	}
	s := series(Workload{}, noise5, nil)
	if err := s.AppendSession(&Series{Runs: base.Runs, Dirs: base.Dirs}); err == nil || !strings.Contains(err.Error(), "unknown") || s.Len() != 5 {
		t.Errorf("AppendSession of an unknown workload: %v, %d runs", err, s.Len())
	}
}
