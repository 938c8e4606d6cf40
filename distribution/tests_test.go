package distribution

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The limiting Anderson-Darling distribution against the classical upper percentage
// points for a fully specified distribution (Anderson & Darling 1954, as tabulated by
// Stephens 1974). Those points are rounded approximations themselves (the 2.5% and 1%
// points are off by ~2% in p), hence the 3% relative tolerance.
func TestAndersonDarlingCriticalValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ a2, p float64 }{{1.933, 0.10}, {2.492, 0.05}, {3.070, 0.025}, {3.857, 0.01}, {4.500, 0.005}} {
		if got := adSF(1<<30, c.a2); math.Abs(got-c.p) > 0.03*c.p {
			t.Errorf("P(A² >= %v) = %v, want %v", c.a2, got, c.p)
		}
	}
	// Monotone in the statistic, and 1 at 0.
	prev := 1.0
	for z := 0.0; z < 40; z += 0.05 {
		p := adSF(20, z)
		if p > prev+1e-12 || p < 0 || p > 1 {
			t.Fatalf("adSF(20, %v) = %v after %v: not a decreasing probability", z, p, prev)
		}
		prev = p
	}
}

func TestKSEdgeCases(t *testing.T) {
	t.Parallel()
	// n = 1: D = max(F(x), 1-F(x)); P(D >= d) = 2(1-d) for d >= 1/2.
	r := KS1([]float64{0.3}, Uniform{Min: 0, Max: 1})
	if r.Statistic != 0.7 || math.Abs(r.PValue-0.6) > 1e-15 {
		t.Errorf("KS1([0.3], U(0,1)) = D %v p %v, want 0.7, 0.6", r.Statistic, r.PValue)
	}
	// Identical samples: D = 0, p = 1.
	x := []float64{1, 2, 3, 4}
	if r := KS2(x, x); r.Statistic != 0 || r.PValue != 1 {
		t.Errorf("KS2(x, x) = %v, want D=0 p=1", r)
	}
	// Ties across samples are compared after all tied values.
	if r := KS2([]float64{1, 1, 2}, []float64{1, 2, 2}); math.Abs(r.Statistic-1.0/3) > 1e-15 || r.At != 1 {
		t.Errorf("KS2 with ties = D %v at %v, want 1/3 at 1", r.Statistic, r.At)
	}
	if !strings.Contains(r.String(), "KS D=0.7 p=0.6 (n=1, exact) vs uniform:0,1; largest gap at x=0.3") {
		t.Errorf("KS1 String = %q", r.String())
	}
}

func TestPercentileDefinition(t *testing.T) {
	t.Parallel()
	x := []float64{15, 20, 35, 40, 50}
	for _, c := range []struct{ p, want float64 }{{0, 15}, {0.25, 20}, {0.4, 29}, {0.5, 35}, {0.9, 46}, {1, 50}} {
		if got := Percentile(x, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", x, c.p, got, c.want)
		}
	}
	if got := Percentile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("Percentile(nil) = %v, want NaN", got)
	}
	if got := FormatP(0.999); got != "p99.9" {
		t.Errorf("FormatP(0.999) = %q", got)
	}
}

func TestBootstrapQuantileCI(t *testing.T) {
	t.Parallel()
	x := draws(LogNormalFromMeanStd(0.2, 0.1), newRand(3), 2000)
	iv, err := BootstrapQuantileCI(x, 0.99, 0.95, 500, testSrc())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := BootstrapQuantileCI(x, 0.99, 0.95, 500, testSrc())
	if iv != again {
		t.Errorf("same seed, different intervals: %v vs %v", iv, again)
	}
	true99 := LogNormalFromMeanStd(0.2, 0.1).Quantile(0.99)
	if !(iv.Lo < iv.Estimate && iv.Estimate < iv.Hi) || !iv.Contains(true99) {
		t.Errorf("BootstrapQuantileCI = %v, want it around the estimate and containing the true p99 %v", iv, true99)
	}
	if _, err := BootstrapQuantileCI(nil, 0.5, 0.95, 0, nil); err == nil {
		t.Error("BootstrapQuantileCI(nil) error = nil, want an error")
	}
	if _, err := StudentTCI([]float64{1}, 0.95); err == nil {
		t.Error("StudentTCI of one value error = nil, want an error")
	}
}

func TestChiSquareFitPassesOwnSample(t *testing.T) {
	t.Parallel()
	l := Length{Dist: MustParse("mix:0.7*normal:128,10+0.3*normal:1024,50"), Max: 4096}
	r := FitLengthChiSquare(lengths(l, newRand(9), 3000), l)
	if r.Reject(0.001) || r.Bins < 10 {
		t.Errorf("FitLengthChiSquare of its own sample = %v, want a pass with many bins", r)
	}
	if r := FitLength(lengths(l, newRand(10), 3000), l); r.Reject(0.001) || r.Bins != 0 {
		t.Errorf("FitLength of its own sample = %v, want a pass", r)
	}
	// A degenerate target: one bin, nothing to test.
	if r := FitLength([]int{128, 128}, Length{Dist: Fixed{Value: 128}}); r.PValue != 1 || r.Statistic != 0 {
		t.Errorf("FitLength vs fixed:128 = %v, want D=0 p=1", r)
	}
	r = FitLengthChiSquare([]int{128, 128}, Length{Dist: Fixed{Value: 128}})
	if r.PValue != 1 || r.Bins != 1 {
		t.Errorf("FitLength vs fixed:128 = %v, want p=1 with 1 bin", r)
	}
}

func TestProgrammerErrorsPanic(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(){
		"KS1 empty":          func() { KS1(nil, Normal{Sigma: 1}) },
		"KS2 empty":          func() { KS2([]float64{1}, nil) },
		"MannWhitney empty":  func() { MannWhitney(nil, []float64{1}) },
		"AD empty":           func() { AndersonDarling(nil, Normal{Sigma: 1}) },
		"ADK one sample":     func() { AndersonDarlingKSamp([]float64{1, 2}) },
		"Quantile p>1":       func() { Normal{Sigma: 1}.Quantile(1.5) },
		"Normal sigma<0":     func() { Normal{Sigma: -1}.Rand() },
		"Mixture mismatched": func() { Mixture{Weights: []float64{1}}.Rand() },
		"Empirical zero":     func() { Empirical{}.Rand() },
		"Wilson k>n":         func() { Wilson(5, 4, 0.95) },
		"ChiSquare zero exp": func() { ChiSquare([]float64{1, 2}, []float64{0, 3}, 0) },
		"LogNormal mean<=0":  func() { LogNormalFromMeanStd(0, 1) },
		"Percentile p<0":     func() { Percentile([]float64{1}, -0.1) },
	} {
		func() {
			defer func() {
				r := recover()
				s, _ := r.(string)
				if !strings.HasPrefix(s, "distribution: ") {
					t.Errorf("%s: panic = %v, want a \"distribution: \" message", name, r)
				}
			}()
			f()
		}()
	}
}

func TestLoadEmpirical(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/run.jsonl"
	data := `{"isl": 100, "osl": 20}
{"isl": 200, "osl": null}

{"isl": 200, "error": "timeout"}
{"osl": 7}
`
	if err := writeFile(path, data); err != nil {
		t.Fatal(err)
	}
	d, err := Parse("empirical:" + path + "#isl")
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != "empirical:"+path+"#isl" || d.Mean() != 500.0/3 {
		t.Errorf("Parse(empirical:…#isl) = %v with mean %v, want mean 166.67", d, d.Mean())
	}
	if got := d.CDF(150); math.Abs(got-1.0/3) > 1e-15 {
		t.Errorf("CDF(150) = %v, want 1/3", got)
	}
	for field, want := range map[string]string{"error": `field "error" is "timeout", want a number`, "nope": `no values of field "nope"`} {
		if _, err := LoadEmpirical(path, field); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadEmpirical(%q) error = %v, want %q", field, err, want)
		}
	}
	h, err := NewEmpiricalHistogram([]float64{3, 1, 3}, []float64{1, 2, 1})
	if err != nil || h.String() != "empirical:1*2,3*2" || h.Prob(3) != 0.5 {
		t.Errorf("NewEmpiricalHistogram = %v, %v", h, err)
	}
	if _, err := NewEmpirical(nil); err == nil {
		t.Error("NewEmpirical(nil) error = nil")
	}
}

func TestSortFloats(t *testing.T) {
	t.Parallel()
	r := newRand(5)
	for _, n := range []int{0, 1, 10, 5000, 70000} {
		x := make([]float64, n)
		for i := range x {
			switch i % 5 {
			case 0:
				x[i] = r.NormFloat64() * 1e300
			case 1:
				x[i] = float64(r.IntN(7)) // ties
			case 2:
				x[i] = -r.ExpFloat64()
			case 3:
				x[i] = math.Inf(1 - 2*(i%2))
			default:
				x[i] = r.Float64() * 1e-310 // subnormals
			}
		}
		want := slices.Clone(x)
		slices.Sort(want)
		sortFloats(x)
		for i := range x {
			if x[i] != want[i] {
				t.Fatalf("n=%d: sortFloats[%d] = %v, want %v", n, i, x[i], want[i])
			}
		}
	}
}

// The simulated null of the exact path and a brute-force D over every atom agree.
func TestDiscreteKSStatistic(t *testing.T) {
	t.Parallel()
	l := Length{Dist: Normal{Mu: 6, Sigma: 3}, Min: 2, Max: 12}
	x := lengths(l, newRand(4), 200)
	r := DiscreteKS(x, l, 199)
	want := 0.0
	for k := 0; k <= 13; k++ {
		c := 0
		for _, v := range x {
			if v <= k {
				c++
			}
		}
		want = math.Max(want, math.Abs(float64(c)/200-l.CDF(k)))
	}
	if math.Abs(r.Statistic-want) > 1e-15 {
		t.Errorf("DiscreteKS D = %v, want %v", r.Statistic, want)
	}
	if r.PValue < 0.005 || r.PValue > 1 || !strings.Contains(r.Method, "199 resamples") {
		t.Errorf("DiscreteKS of its own sample = %v", r)
	}
	// Large n takes the Brownian-bridge path; the same target's null is reused for any n.
	big := lengths(l, newRand(5), 5000)
	if r := DiscreteKS(big, l, 0); r.Reject(0.01) || !strings.Contains(r.Method, "Brownian-bridge") {
		t.Errorf("DiscreteKS large n = %v", r)
	}
	// A support too wide to tabulate uses the continuous limit without allocating it.
	heavy := Length{Dist: LogNormal{Mu: 10, Sigma: 4}}
	if r := DiscreteKS(lengths(heavy, newRand(7), 500), heavy, 0); r.Reject(0.01) || !strings.Contains(r.Method, "too wide") {
		t.Errorf("DiscreteKS heavy-tailed target = %v", r)
	}
	// A near-continuous target with many atoms uses the continuous limit.
	wide := Length{Dist: Normal{Mu: 1e6, Sigma: 1e5}}
	if r := DiscreteKS(lengths(wide, newRand(6), 3000), wide, 0); r.Reject(0.01) || !strings.Contains(r.Method, "asymptotic") {
		t.Errorf("DiscreteKS wide target = %v", r)
	}
}

func TestLengthMomentsWideSupport(t *testing.T) {
	t.Parallel()
	d := LogNormal{Mu: 10, Sigma: 2}
	l := Length{Dist: d}
	if got, want := l.Mean(), d.Mean(); math.Abs(got-want)/want > 0.05 {
		t.Errorf("Length{%v}.Mean() = %v, want about %v", d, got, want)
	}
	small := Length{Dist: Normal{Mu: 100, Sigma: 10}}
	if got := small.Mean(); math.Abs(got-100) > 1e-6 {
		t.Errorf("Length{normal:100,10}.Mean() = %v, want 100", got)
	}
	if got := small.StdDev(); math.Abs(got-math.Sqrt(100+1.0/12)) > 1e-3 {
		t.Errorf("Length{normal:100,10}.StdDev() = %v, want ~%v (rounding adds 1/12)", got, math.Sqrt(100+1.0/12))
	}
}
