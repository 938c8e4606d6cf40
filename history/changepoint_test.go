package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// noisy returns n points of level·(1 + cv·N(0,1)), seeded.
func noisy(rng *rand.Rand, n int, level, cv float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = level * (1 + cv*rng.NormFloat64())
	}
	return x
}

func indices(cps []ChangePoint) []int {
	var out []int
	for _, c := range cps {
		out = append(out, c.Index)
	}
	return out
}

// near reports whether got has one index within tol of each of want, and no other.
func near(got, want []int, tol int) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] < want[i]-tol || got[i] > want[i]+tol {
			return false
		}
	}
	return true
}

// The synthetic series: fixed seeds, noise CV 2% (a real server's run-to-run noise is
// 1-3%), default detection (window 30, p < 0.001, segments of 3 or more). Each known
// step must be found within one result; any other change point must be smaller than
// the check's 5% margin (the default p < 0.001 still finds small spurious changes in
// long flat stretches: BenchmarkCheck measures how often, and how often a check fails
// on them), and none may sit on an outlier.
func TestDetectKnownSteps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		build   func(rng *rand.Rand) []float64
		want    []int
		outlier int
	}{
		{"flat", func(rng *rand.Rand) []float64 { return noisy(rng, 120, 100, 0.02) }, nil, -1},
		{"single 10% step", func(rng *rand.Rand) []float64 {
			return append(noisy(rng, 50, 100, 0.02), noisy(rng, 40, 110, 0.02)...)
		}, []int{50}, -1},
		{"single 5% step", func(rng *rand.Rand) []float64 {
			return append(noisy(rng, 50, 100, 0.02), noisy(rng, 40, 105, 0.02)...)
		}, []int{50}, -1},
		{"three steps", func(rng *rand.Rand) []float64 {
			x := noisy(rng, 40, 100, 0.02)
			x = append(x, noisy(rng, 35, 112, 0.02)...)
			x = append(x, noisy(rng, 35, 95, 0.02)...)
			return append(x, noisy(rng, 35, 104, 0.02)...)
		}, []int{40, 75, 110}, -1},
		{"one outlier", func(rng *rand.Rand) []float64 {
			x := noisy(rng, 100, 100, 0.02)
			x[60] = 160
			return x
		}, nil, 60},
		{"outlier as the newest point", func(rng *rand.Rand) []float64 {
			x := noisy(rng, 60, 100, 0.02)
			x[59] = 160
			return x
		}, nil, 59},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(10) {
				x := tc.build(rand.New(rand.NewPCG(seed, 7)))
				cps := Detect(x, Detection{})
				found := 0
				for _, c := range cps {
					known := slices.ContainsFunc(tc.want, func(w int) bool { return c.Index >= w-1 && c.Index <= w+1 })
					if known {
						found++
					} else if c.Magnitude() >= 0.05 {
						t.Errorf("seed %d: change point at %d (%.1f%%) where there is none", seed, c.Index, 100*c.Change())
					}
					if tc.outlier >= 0 && c.Index >= tc.outlier-2 && c.Index <= tc.outlier+3 {
						t.Errorf("seed %d: change point at %d, on the outlier at %d", seed, c.Index, tc.outlier)
					}
				}
				if found != len(tc.want) {
					t.Errorf("seed %d: change points at %v, want %v (±1) among them", seed, indices(cps), tc.want)
				}
			}
		})
	}
}

// A slow ramp (+0.25% a result for 60 results, 15% in all) has no single step; the
// detector must still mark the drift, as changes that add up to most of it.
func TestDetectSlowRamp(t *testing.T) {
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 9))
		x := noisy(rng, 40, 100, 0.02)
		for i := range 60 {
			x = append(x, 100*(1+0.0025*float64(i+1))*(1+0.02*rng.NormFloat64()))
		}
		x = append(x, noisy(rng, 20, 115, 0.02)...)
		cps := Detect(x, Detection{})
		if len(cps) == 0 {
			t.Fatalf("seed %d: no change point in a 15%% ramp", seed)
		}
		total := 1.0
		for _, c := range cps {
			if c.Index < 35 || c.Index > 105 {
				t.Errorf("seed %d: change point at %d, outside the ramp (40-100)", seed, c.Index)
			}
			total *= 1 + c.Change()
		}
		if total-1 < 0.08 {
			t.Errorf("seed %d: change points %v add up to %.1f%%, want most of the 15%% ramp", seed, indices(cps), 100*(total-1))
		}
	}
}

// The failure path of the significance test: a step that exists but is within the
// noise of a short series is not reported, and raising MaxP finds it.
func TestDetectSignificance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	x := append(noisy(rng, 6, 100, 0.03), noisy(rng, 6, 103, 0.03)...)
	if cps := Detect(x, Detection{}); len(cps) != 0 {
		t.Errorf("a 3%% step in 12 points at 3%% noise: %v, want none at p < 0.001", indices(cps))
	}
	y := append(noisy(rng, 6, 100, 0.01), noisy(rng, 6, 110, 0.01)...)
	if cps := Detect(y, Detection{MaxP: 0.01}); !near(indices(cps), []int{6}, 0) {
		t.Errorf("a 10%% step at 1%% noise: %v, want [6]", indices(cps))
	}
	// MinMagnitude drops significant but small changes.
	z := append(noisy(rng, 40, 100, 0.002), noisy(rng, 40, 101, 0.002)...)
	if cps := Detect(z, Detection{}); !near(indices(cps), []int{40}, 1) {
		t.Fatalf("a 1%% step at 0.2%% noise: %v, want [40]", indices(cps))
	}
	if cps := Detect(z, Detection{MinMagnitude: 0.02}); len(cps) != 0 {
		t.Errorf("MinMagnitude 2%% keeps a 1%% change: %v", indices(cps))
	}
}

// Adding results one at a time with the saved state finds what a full computation
// finds.
func TestDetectIncrementalMatchesFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	x := noisy(rng, 45, 100, 0.02)
	x = append(x, noisy(rng, 50, 108, 0.02)...)
	x = append(x, noisy(rng, 60, 97, 0.02)...)
	var st State
	for n := 1; n <= len(x); n++ {
		var inc []ChangePoint
		inc, st = DetectIncremental(x[:n], Detection{}, st)
		full := Detect(x[:n], Detection{})
		if !slices.Equal(indices(inc), indices(full)) {
			t.Fatalf("after %d points: incremental %v, full %v", n, indices(inc), indices(full))
		}
	}
	if got := indices(Detect(x, Detection{})); !near(got, []int{45, 95}, 1) {
		t.Errorf("change points %v, want [45 95]", got)
	}
	// Other settings do not reuse the state.
	if _, st2 := DetectIncremental(x, Detection{Window: 40}, st); st2.Config == st.Config {
		t.Error("state kept across detection settings")
	}
}

func TestWelchAgainstScipy(t *testing.T) {
	// scipy.stats.ttest_ind(a, b, equal_var=False).pvalue
	a := []float64{100.1, 99.5, 101.2, 100.7, 99.9}
	b := []float64{102.3, 103.1, 101.9, 102.8}
	if p, want := welch(a, b), 0.0008217365; math.Abs(p-want) > 1e-6 {
		t.Errorf("welch = %.10f, want %.10f", p, want)
	}
	if p := welch([]float64{1, 1}, []float64{1, 1}); p != 1 {
		t.Errorf("constant equal samples: p = %g", p)
	}
	if p := welch([]float64{1, 1}, []float64{2, 2}); p != 0 {
		t.Errorf("constant different samples: p = %g", p)
	}
}

func TestCheckFindings(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	mk := func(metric string, x []float64) *Trend {
		var rs []Result
		for i, v := range x {
			rs = append(rs, Result{ID: int64(i + 1), Fingerprint: "f", Scenario: "s", Commit: fmt.Sprintf("c%03d", i), Runs: []Run{{Stats: map[string]float64{metric: v}}}})
		}
		tr := NewTrend(rs, metric)
		tr.Detect(Detection{}, State{})
		return tr
	}
	step := append(noisy(rng, 40, 100, 0.02), noisy(rng, 6, 112, 0.02)...)
	f := Check{}.Findings(mk("ttft_p50", step))
	if len(f) != 1 || !f[0].Regression || f[0].First.Commit != "c040" || f[0].LastBefore.Commit != "c039" || math.Abs(f[0].Worse-0.12) > 0.03 {
		t.Fatalf("a 12%% slower ttft at the newest results: %+v", f)
	}
	// The same step in a throughput is an improvement.
	if f := (Check{}).Findings(mk("output_tps", step)); len(f) != 1 || f[0].Regression || f[0].Worse > 0 {
		t.Errorf("a 12%% higher throughput: %+v", f)
	}
	// Below the margin: reported, not a regression.
	if f := (Check{Margin: 0.2}).Findings(mk("ttft_p50", step)); len(f) != 1 || f[0].Regression {
		t.Errorf("margin 20%%: %+v", f)
	}
	// Long ago: not a regression tonight.
	old := append(slices.Clone(step), noisy(rng, 30, 112, 0.02)...)
	if f := (Check{}).Findings(mk("ttft_p50", old)); len(f) != 1 || f[0].Regression {
		t.Errorf("a step 36 results ago: %+v", f)
	}
	// Five 2% steps, none past the margin alone, fail together as a drift.
	var drift []float64
	for i := range 5 {
		drift = append(drift, noisy(rng, 12-6*(i/4), 100*(1+0.02*float64(i)), 0.003)...)
	}
	var reg []Finding
	for _, f := range (Check{}).Findings(mk("ttft_p50", drift)) {
		if f.Regression {
			reg = append(reg, f)
		}
	}
	if len(reg) != 1 || reg[0].Steps < 2 || reg[0].Worse < 0.05 || !strings.Contains(reg[0].String(), "regressed in") {
		t.Errorf("a drift of 4 × 2%%: %+v", reg)
	}
	// The same drift with a 10% margin: no regression.
	for _, f := range (Check{Margin: 0.1}).Findings(mk("ttft_p50", drift)) {
		if f.Regression {
			t.Errorf("margin 10%%, drift 8%%: %s", f)
		}
	}
}
