package distribution

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/perfgate/perfgate/distribution/nprand"
)

// Reference values from testdata/gen_validity.py (SciPy 1.10 / numpy 1.24, Debian).
type validityRef struct {
	Binom []struct {
		N       int
		P, Conf float64
		Lo, Hi  int
	}
	MinSamples []struct {
		P, Conf float64
		Upper   bool
		N       int
	}
	MK []struct {
		Series struct {
			Seed         uint64
			N            int
			T            string
			A, B, C, Phi float64
		}
		S, Var0, Factor, Z, P, Slope float64
	}
}

func loadValidityRef(t *testing.T) validityRef {
	t.Helper()
	b, err := os.ReadFile("testdata/validity_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref validityRef
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

func TestQuantileRanksMatchScipyBinom(t *testing.T) {
	ref := loadValidityRef(t)
	if len(ref.Binom) < 50 {
		t.Fatalf("reference has %d binom cases", len(ref.Binom))
	}
	for _, c := range ref.Binom {
		b := QuantileRanks(c.N, c.P, c.Conf)
		if b.Lo != c.Lo || b.Hi != c.Hi {
			t.Errorf("QuantileRanks(n=%d, p=%v, %v) = [%d, %d], scipy binom.ppf gives [%d, %d]", c.N, c.P, c.Conf, b.Lo, b.Hi, c.Lo, c.Hi)
		}
		if b.Lo > 0 && b.Hi > 0 && b.Coverage < c.Conf-1e-12 {
			t.Errorf("n=%d p=%v: coverage %v < %v", c.N, c.P, b.Coverage, c.Conf)
		}
	}
}

func TestQuantileMinSamples(t *testing.T) {
	if n := QuantileMinSamples(0.99, 0.95, true); n != 299 {
		t.Errorf("p99 at 95%% needs %d values, want 299 (1-0.99^n >= 0.95)", n)
	}
	for _, c := range loadValidityRef(t).MinSamples {
		if n := QuantileMinSamples(c.P, c.Conf, c.Upper); n != c.N {
			t.Errorf("QuantileMinSamples(%v, %v, upper=%v) = %d, want %d", c.P, c.Conf, c.Upper, n, c.N)
		}
	}
	// One fewer than needed gives no one-sided upper bound, exactly the count gives one.
	// One-sided at c is the two-sided interval at 2c-1.
	if b := QuantileRanks(298, 0.99, 0.90); b.Hi != 0 {
		t.Errorf("298 values bound p99 at 95%% one-sided: Hi = %d", b.Hi)
	}
	if b := QuantileRanks(299, 0.99, 0.90); b.Hi != 299 {
		t.Errorf("299 values: p99's one-sided 95%% upper bound is rank %d, want 299 (the max)", b.Hi)
	}
}

func TestQuantileCI(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	iv := QuantileCI(xs, 0.5, 0.95)
	b := QuantileRanks(1000, 0.5, 0.95)
	if iv.Lo != float64(b.Lo) || iv.Hi != float64(b.Hi) || !iv.Contains(500) {
		t.Errorf("QuantileCI = %v, ranks %+v", iv, b)
	}
	if iv := QuantileCI(xs[:100], 0.99, 0.95); !math.IsInf(iv.Hi, 1) || math.IsInf(iv.Lo, -1) {
		t.Errorf("p99 of 100 values: %v, want a finite lower and no upper bound", iv)
	}
	// Coverage: over many samples of a known distribution, the interval holds the true
	// quantile at least as often as promised (seeded).
	g := nprand.NewGenerator(11)
	hits, trials := 0, 2000
	for range trials {
		s := make([]float64, 200)
		for i := range s {
			s[i] = g.Random()
		}
		sortFloat(s)
		if QuantileCI(s, 0.9, 0.9).Contains(0.9) {
			hits++
		}
	}
	if f := float64(hits) / float64(trials); f < 0.88 {
		t.Errorf("coverage %.3f of a 90%% interval", f)
	}
}

func sortFloat(s []float64) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// buildSeries rebuilds gen_validity.py's series bit for bit.
func buildSeries(seed uint64, n int, kind string, a, b, c, phi float64) []float64 {
	g := nprand.NewGenerator(seed)
	x := make([]float64, n)
	prev := 0.0
	for i := range x {
		u := g.Random()
		switch kind {
		case "trend":
			x[i] = float64(a+float64(b*u)) + float64(c*float64(i))
		case "round":
			x[i] = math.Floor(float64(a+float64(b*u)) + float64(c*float64(i)))
		case "ar1":
			prev = float64(phi*prev) + (u - 0.5)
			x[i] = prev
		}
	}
	if kind == "ar1" {
		for i := range x {
			x[i] += float64(c * float64(i))
		}
	}
	return x
}

func TestMannKendallMatchesReference(t *testing.T) {
	ref := loadValidityRef(t)
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, c := range ref.MK {
		s := c.Series
		x := buildSeries(s.Seed, s.N, s.T, s.A, s.B, s.C, s.Phi)
		tr := MannKendall(x, TrendOptions{})
		if tr.S != c.S || !close(tr.VarS0, c.Var0) || !close(tr.Factor, c.Factor) || !close(tr.Z, c.Z) ||
			math.Abs(tr.P-c.P) > 1e-9 || !close(tr.Slope, c.Slope) {
			t.Errorf("series %s seed %d: got S=%v var0=%v factor=%v z=%v p=%v slope=%v\nwant S=%v var0=%v factor=%v z=%v p=%v slope=%v",
				s.T, s.Seed, tr.S, tr.VarS0, tr.Factor, tr.Z, tr.P, tr.Slope, c.S, c.Var0, c.Factor, c.Z, c.P, c.Slope)
		}
	}
}

func TestMannKendallDetects(t *testing.T) {
	up := buildSeries(2, 20, "trend", 100, 10, 1, 0)
	if tr := MannKendall(up, TrendOptions{MaxLag: 5, Conservative: true}); tr.P >= 0.05 || tr.Slope <= 0 {
		t.Errorf("a rising series: %+v", tr)
	}
	flat := make([]float64, 20)
	for i := range flat {
		flat[i] = 7
	}
	if tr := MannKendall(flat, TrendOptions{}); tr.P != 1 || tr.S != 0 {
		t.Errorf("a constant series: %+v", tr)
	}
	// Conservative never lowers the variance below the uncorrected one.
	x := buildSeries(1, 20, "trend", 100, 10, 0, 0)
	if a, b := MannKendall(x, TrendOptions{}), MannKendall(x, TrendOptions{Conservative: true}); a.Factor >= 1 || b.Factor != 1 || b.P <= a.P {
		t.Errorf("seed 1: paper factor %v (p %v), conservative %v (p %v)", a.Factor, a.P, b.Factor, b.P)
	}
}
