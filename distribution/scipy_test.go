package distribution

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/perfgate/perfgate/distribution/nprand"
)

// Reference values from testdata/gen_scipy.py (SciPy 1.10 / numpy 1.24, Debian).

type sampleSpec struct {
	Seed uint64  `json:"seed"`
	N    int     `json:"n"`
	T    string  `json:"t"`
	A    float64 `json:"a"`
	B    float64 `json:"b"`
}

// build regenerates a sample exactly as the script does: numpy's
// default_rng(seed).random(n) through an exactly reproducible transform.
func (s sampleSpec) build() []float64 {
	g := nprand.NewGenerator(s.Seed)
	x := make([]float64, s.N)
	for i := range x {
		u := g.Random()
		switch s.T {
		case "affine":
			x[i] = s.A + float64(s.B*u)
		case "square":
			x[i] = s.A + float64(s.B*float64(u*u))
		case "floor":
			x[i] = math.Floor(s.A + float64(s.B*u))
		case "ratio":
			x[i] = s.A + float64(s.B/(1-u))
		default:
			panic("unknown transform " + s.T)
		}
	}
	return x
}

func (s sampleSpec) String() string { return fmt.Sprintf("%s(seed=%d,n=%d)", s.T, s.Seed, s.N) }

type scipyRef struct {
	Numpy, Scipy string
	KSTwo        []struct {
		N              int
		D, SF, Smirnov float64
	} `json:"kstwo"`
	Kolmogorov []struct{ Z, SF float64 } `json:"kolmogorov"`
	KS1        []struct {
		Sample        sampleSpec
		Model, Method string
		D, P, At      float64
	} `json:"ks1"`
	KS2 []struct {
		A, B     sampleSpec
		D, P, At float64
	} `json:"ks2"`
	ChiSquare []struct {
		Obs, Exp []float64
		DDOF     int
		Stat, P  float64
	} `json:"chisquare"`
	ADK []struct {
		Samples []sampleSpec
		Stat, P float64
	} `json:"anderson_ksamp"`
	AD1 []struct {
		Sample sampleSpec
		Model  string
		Stat   float64
	} `json:"anderson1"`
	MW []struct {
		A, B sampleSpec
		U, P float64
	} `json:"mannwhitney"`
	Wilson []struct {
		K, N         int
		Conf, Lo, Hi float64
	} `json:"wilson"`
	StudentT []struct {
		X            []float64
		Conf, Lo, Hi float64
	} `json:"student_t"`
	Percentile []struct {
		Sample            sampleSpec
		P, Want, Quantile []float64
	} `json:"percentile"`
}

func loadScipy(t *testing.T) scipyRef {
	t.Helper()
	b, err := os.ReadFile("testdata/scipy_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	var r scipyRef
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// close reports whether got is within rel of want, relatively, or within abs.
func closeTo(got, want, rel, abs float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= math.Max(rel*math.Abs(want), abs)
}

const exactRel = 1e-9

func TestScipyKolmogorov(t *testing.T) {
	t.Parallel()
	ref := loadScipy(t)
	for _, c := range ref.KSTwo {
		// kstwo: SciPy's own method choice; agreement to 1e-9 relative (1e-14 absolute
		// for p-values so small that both are rounding noise).
		if got := KolmogorovSF(c.N, c.D); !closeTo(got, c.SF, exactRel, 1e-14) {
			t.Errorf("KolmogorovSF(%d, %v) = %v, want %v (scipy kstwo.sf), rel err %.2g", c.N, c.D, got, c.SF, math.Abs(got-c.SF)/c.SF)
		}
		if got := SmirnovSF(c.N, c.D); !closeTo(got, c.Smirnov, exactRel, 1e-14) {
			t.Errorf("SmirnovSF(%d, %v) = %v, want %v (scipy special.smirnov)", c.N, c.D, got, c.Smirnov)
		}
	}
	for _, c := range ref.Kolmogorov {
		if got := KolmogorovAsympSF(c.Z); !closeTo(got, c.SF, exactRel, 1e-15) {
			t.Errorf("KolmogorovAsympSF(%v) = %v, want %v (scipy special.kolmogorov)", c.Z, got, c.SF)
		}
	}
}

func TestScipyKS1(t *testing.T) {
	t.Parallel()
	ref := loadScipy(t)
	for _, c := range ref.KS1 {
		d := MustParse(c.Model)
		r := KS1(c.Sample.build(), d)
		name := fmt.Sprintf("KS1(%v, %s)", c.Sample, c.Model)
		if r.Method != c.Method {
			t.Errorf("%s method = %s, want %s", name, r.Method, c.Method)
		}
		if !closeTo(r.Statistic, c.D, 1e-12, 1e-15) {
			t.Errorf("%s D = %v, want %v", name, r.Statistic, c.D)
		}
		if !closeTo(r.PValue, c.P, exactRel, 1e-14) {
			t.Errorf("%s p = %v, want %v", name, r.PValue, c.P)
		}
		if r.At != c.At {
			t.Errorf("%s at = %v, want %v", name, r.At, c.At)
		}
	}
}

func TestScipyKS2(t *testing.T) {
	t.Parallel()
	ref := loadScipy(t)
	for _, c := range ref.KS2 {
		r := KS2(c.A.build(), c.B.build())
		name := fmt.Sprintf("KS2(%v, %v)", c.A, c.B)
		if !closeTo(r.Statistic, c.D, 1e-12, 1e-15) {
			t.Errorf("%s D = %v, want %v", name, r.Statistic, c.D)
		}
		if !closeTo(r.PValue, c.P, exactRel, 1e-14) {
			t.Errorf("%s p = %v, want %v (%s)", name, r.PValue, c.P, r.Method)
		}
		if r.At != c.At {
			t.Errorf("%s at = %v, want %v", name, r.At, c.At)
		}
	}
}

func TestScipyChiSquare(t *testing.T) {
	t.Parallel()
	ref := loadScipy(t)
	for _, c := range ref.ChiSquare {
		r := ChiSquare(c.Obs, c.Exp, c.DDOF)
		if !closeTo(r.Statistic, c.Stat, 1e-12, 0) || !closeTo(r.PValue, c.P, exactRel, 1e-15) {
			t.Errorf("ChiSquare(%v, %v, %d) = %v, %v; want %v, %v", c.Obs, c.Exp, c.DDOF, r.Statistic, r.PValue, c.Stat, c.P)
		}
	}
}

func TestScipyAndersonDarling(t *testing.T) {
	t.Parallel()
	ref := loadScipy(t)
	for _, c := range ref.ADK {
		var samples [][]float64
		for _, s := range c.Samples {
			samples = append(samples, s.build())
		}
		r := AndersonDarlingKSamp(samples...)
		if !closeTo(r.Statistic, c.Stat, 1e-10, 1e-12) || !closeTo(r.PValue, c.P, exactRel, 1e-15) {
			t.Errorf("AndersonDarlingKSamp(%v) = %v, %v; want %v, %v (scipy anderson_ksamp)", c.Samples, r.Statistic, r.PValue, c.Stat, c.P)
		}
	}
	for _, c := range ref.AD1 {
		r := AndersonDarling(c.Sample.build(), MustParse(c.Model))
		if !closeTo(r.Statistic, c.Stat, 1e-10, 1e-12) {
			t.Errorf("AndersonDarling(%v, %s) A² = %v, want %v", c.Sample, c.Model, r.Statistic, c.Stat)
		}
	}
}

func TestScipyMannWhitney(t *testing.T) {
	t.Parallel()
	ref := loadScipy(t)
	for _, c := range ref.MW {
		r := MannWhitney(c.A.build(), c.B.build())
		if r.U != c.U || !closeTo(r.PValue, c.P, exactRel, 1e-15) {
			t.Errorf("MannWhitney(%v, %v) = U %v p %v (%s); want U %v p %v", c.A, c.B, r.U, r.PValue, r.Method, c.U, c.P)
		}
	}
}

func TestScipyIntervals(t *testing.T) {
	t.Parallel()
	ref := loadScipy(t)
	for _, c := range ref.Wilson {
		lo, hi := Wilson(c.K, c.N, c.Conf)
		if !closeTo(lo, c.Lo, exactRel, 1e-15) || !closeTo(hi, c.Hi, exactRel, 1e-15) {
			t.Errorf("Wilson(%d, %d, %v) = [%v, %v], want [%v, %v]", c.K, c.N, c.Conf, lo, hi, c.Lo, c.Hi)
		}
	}
	for _, c := range ref.StudentT {
		iv, err := StudentTCI(c.X, c.Conf)
		if err != nil {
			t.Fatal(err)
		}
		if !closeTo(iv.Lo, c.Lo, exactRel, 0) || !closeTo(iv.Hi, c.Hi, exactRel, 0) {
			t.Errorf("StudentTCI(%v, %v) = [%v, %v], want [%v, %v]", c.X, c.Conf, iv.Lo, iv.Hi, c.Lo, c.Hi)
		}
	}
}

func TestNumpyPercentile(t *testing.T) {
	t.Parallel()
	ref := loadScipy(t)
	for _, c := range ref.Percentile {
		x := c.Sample.build()
		got := Quantiles(x, c.P...)
		for i, p := range c.P {
			// np.quantile(x, p) with the same p: bit for bit.
			if got[i] != c.Quantile[i] {
				t.Errorf("Quantiles(%v)[p=%v] = %v, want %v (np.quantile)", c.Sample, p, got[i], c.Quantile[i])
			}
			// np.percentile(x, 100p) divides 100p by 100 again, which can move p by an ulp.
			if pp := Percentile(x, p); !closeTo(pp, c.Want[i], 1e-12, 1e-12) {
				t.Errorf("Percentile(%v, %v) = %v, want %v (np.percentile)", c.Sample, p, pp, c.Want[i])
			}
		}
	}
}
