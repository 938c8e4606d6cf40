package distribution

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestWelchErrors(t *testing.T) {
	if _, err := Welch([]float64{1}, []float64{1, 2}, 0.99); err == nil || !strings.Contains(err.Error(), "distribution: Welch needs >= 2 values per sample, got 1 and 2") {
		t.Errorf("Welch of one value: err %v", err)
	}
	r, err := Welch([]float64{1, 1}, []float64{1, 1}, 0.99)
	if err != nil || r.PValue != 1 || r.Lo != 0 || r.Hi != 0 {
		t.Errorf("constant equal samples: %+v, %v; want p=1 and the point interval 0", r, err)
	}
	r, _ = Welch([]float64{1, 1}, []float64{2, 2}, 0.99)
	if r.PValue != 0 || r.Lo != 1 || r.Hi != 1 || !math.IsInf(r.T, 1) {
		t.Errorf("constant different samples: %+v; want p=0 and the point interval 1", r)
	}
	if s := r.String(); !strings.Contains(s, "Welch t") {
		t.Errorf("String %q", s)
	}
}

func TestHolmLevelsStop(t *testing.T) {
	// Sorted 0.001 < 0.01/4, 0.002 < 0.01/3, 0.004 < 0.01/2, 0.006 < 0.01/1: all rejected.
	p := []float64{0.006, 0.001, 0.004, 0.002}
	got := HolmLevels(p, 0.01)
	want := []float64{0.01 / 1, 0.01 / 4, 0.01 / 2, 0.01 / 3}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-18 {
			t.Errorf("HolmLevels(%v) = %v, want %v", p, got, want)
			break
		}
	}
	p = []float64{0.5, 0.001, 0.004, 0.3}
	got = HolmLevels(p, 0.01)
	// 0.001 < 0.0025 rejected; 0.004 >= 0.01/3 stops: it and the rest keep 0.01/3.
	want = []float64{0.01 / 3, 0.01 / 4, 0.01 / 3, 0.01 / 3}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-18 {
			t.Errorf("HolmLevels(%v) = %v, want %v", p, got, want)
			break
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "distribution: Holm p-value 1 is NaN") {
			t.Errorf("Holm of a NaN: panic %v", r)
		}
	}()
	Holm([]float64{0.1, math.NaN()})
}

func TestClopperPearsonPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "ClopperPearson(3, 2)") {
			t.Errorf("panic %v", r)
		}
	}()
	ClopperPearson(3, 2, 0.95)
}

func TestDetectableEffectEdges(t *testing.T) {
	if d := DetectableEffect(0, 8, 0.01, 0.8); d != 0 {
		t.Errorf("se 0: %v", d)
	}
	// Power at the MDE is the requested power (to the root finder's tolerance).
	d := DetectableEffect(0.02, 8, 0.01, 0.8)
	if p := TTestPower(d/0.02, 8, 0.01); math.Abs(p-0.8) > 1e-12 {
		t.Errorf("power at the MDE = %v, want 0.8", p)
	}
	// With df -> Inf it approaches the z formula (z_{.995}+z_{.8})·se.
	z := (TQuantile(0.995, math.Inf(1)) + TQuantile(0.8, math.Inf(1))) * 0.02
	if d2 := DetectableEffect(0.02, 1e6, 0.01, 0.8); math.Abs(d2-z) > 1e-4*z {
		t.Errorf("df 1e6: %v, want about %v", d2, z)
	}
	if d <= z {
		t.Errorf("df 8 MDE %v is not above the z answer %v", d, z)
	}
	if n := RunsForEffect(0, 0.05, 0.01, 0.8, 100); n != 2 {
		t.Errorf("sigma 0: %d runs", n)
	}
	if n := RunsForEffect(1, 0.0001, 0.01, 0.8, 100); n != 0 {
		t.Errorf("unreachable effect: %d runs, want 0", n)
	}
	if n := RunsForEffect(0.02, -1, 0.01, 0.8, 100); n != 0 {
		t.Errorf("negative effect: %d runs, want 0", n)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Errorf("power 1 did not panic")
		}
	}()
	DetectableEffect(0.01, 8, 0.01, 1)
}

// lognormalRuns returns k runs of n requests: each run's speed drawn with CV cv, each
// request lognormal with log-sd 0.3 around it.
func lognormalRuns(r *rand.Rand, k, n int, scale, cv float64) [][]float64 {
	runs := make([][]float64, k)
	for i := range runs {
		speed := scale * math.Exp(cv*r.NormFloat64())
		runs[i] = make([]float64, n)
		for j := range runs[i] {
			runs[i][j] = speed * math.Exp(0.3*r.NormFloat64())
		}
	}
	return runs
}

func TestHierarchicalBootstrapProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := lognormalRuns(r, 8, 60, 0.1, 0.03)
	cur := lognormalRuns(r, 8, 60, 0.11, 0.03)
	h := HierarchicalBootstrap{Resamples: 400, Confidence: 0.95, Src: rand.NewPCG(3, 4)}
	iv, err := HierarchicalBootstrapRatio(base, cur, h)
	if err != nil {
		t.Fatal(err)
	}
	if !(iv.Lo < iv.Estimate && iv.Estimate < iv.Hi) || !iv.Contains(1.1) {
		t.Errorf("10%% slower: %v; want an interval around the estimate containing 1.1", iv)
	}
	// Deterministic for a seed.
	h.Src = rand.NewPCG(3, 4)
	iv2, _ := HierarchicalBootstrapRatio(base, cur, h)
	if iv2 != iv {
		t.Errorf("same seed, different intervals: %v and %v", iv, iv2)
	}
	// The same runs on both sides: the estimate is exactly 1.
	h.Src = rand.NewPCG(5, 6)
	same, _ := HierarchicalBootstrapRatio(base, base, h)
	if same.Estimate != 1 || !same.Contains(1) {
		t.Errorf("identical sides: %v", same)
	}
	// Within-run noise only (one run per side, whole-run blocks give back the run: no
	// spread at all).
	h.Block = 60
	point, _ := HierarchicalBootstrapRatio(base[:1], cur[:1], h)
	if point.Lo != point.Hi || point.Lo != point.Estimate {
		t.Errorf("one run per side, block = run: %v; want the point estimate", point)
	}
	// More between-run noise widens the interval.
	h.Block = 0
	noisyB := lognormalRuns(r, 8, 60, 0.1, 0.15)
	noisyC := lognormalRuns(r, 8, 60, 0.1, 0.15)
	wide, _ := HierarchicalBootstrapRatio(noisyB, noisyC, h)
	if !(wide.Hi/wide.Lo > iv.Hi/iv.Lo) {
		t.Errorf("CV 15%% interval %v is not wider than CV 3%% interval %v", wide, iv)
	}
}

func TestHierarchicalBootstrapErrors(t *testing.T) {
	ok := [][]float64{{1, 2, 3}}
	for _, tc := range []struct {
		b, c [][]float64
		stat func([]float64) float64
		want string
	}{
		{nil, ok, nil, "the baseline has no runs"},
		{ok, [][]float64{{1}, {}}, nil, "current run 2 has no requests"},
		{ok, [][]float64{{0, 0, 0}}, nil, "run statistic 0, want a positive finite number"},
		{ok, ok, func([]float64) float64 { return math.Inf(1) }, "run statistic +Inf"},
	} {
		_, err := HierarchicalBootstrapRatio(tc.b, tc.c, HierarchicalBootstrap{Stat: tc.stat, Resamples: 10})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "distribution: hierarchical bootstrap: ") {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
}
