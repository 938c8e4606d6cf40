package distribution

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func testSrc() rand.Source { return rand.NewPCG(1, 1) }

// all returns one of each sampler, seeded.
func all() []Distribution {
	emp, _ := NewEmpirical([]float64{1, 2, 2, 3, 5, 8, 13})
	return []Distribution{
		Fixed{Value: 128},
		Uniform{Min: 100, Max: 200},
		UniformInt{Min: 100, Max: 200},
		Normal{Mu: 128, Sigma: 20},
		LogNormal{Mu: 6, Sigma: 0.5},
		LogNormalFromMeanStd(512, 128),
		Exponential{Rate: 20},
		Gamma{Shape: 0.5, Rate: 10},
		Gamma{Shape: 3, Rate: 2},
		Mixture{Weights: []float64{0.7, 0.3}, Components: []Distribution{Normal{Mu: 128, Sigma: 10}, Normal{Mu: 1024, Sigma: 50}}},
		emp,
		VLLMRange{Len: 1024, Ratio: 0.5},
		SGLangRange{Len: 1024, Ratio: 0.5},
	}
}

func TestParseRoundTrip(t *testing.T) {
	t.Parallel()
	for _, d := range all() {
		s := d.String()
		got, err := Parse(s)
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		if got.String() != s {
			t.Errorf("Parse(%q).String() = %q, want %q", s, got.String(), s)
		}
		if got.Mean() != d.Mean() {
			t.Errorf("Parse(%q).Mean() = %v, want %v", s, got.Mean(), d.Mean())
		}
	}
	for _, text := range []string{
		"fixed:128", "uniform:100,200", "normal:128,20", "lognormal:mean=512,stddev=128",
		"mix:0.7*normal:128,10+0.3*normal:1024,50", "exponential:20", "gamma:0.5,10",
		"vllm-range:1024,0.5", "sglang-range:1024,0.5", "uniformint:1,6", "empirical:1,2*3,5",
	} {
		d, err := Parse(text)
		if err != nil {
			t.Errorf("Parse(%q): %v", text, err)
			continue
		}
		if d.String() != text {
			t.Errorf("Parse(%q).String() = %q", text, d.String())
		}
	}
}

func TestParseForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want Distribution
	}{
		{"128", Fixed{Value: 128}},
		{" normal : mu=128, sigma=20 ", Normal{Mu: 128, Sigma: 20}},
		{"lognormal:mu=6,sigma=0.5", LogNormal{Mu: 6, Sigma: 0.5}},
		{"gamma:shape=2,scale=0.5", Gamma{Shape: 2, Rate: 2}},
		{"exponential:mean=0.05", Exponential{Rate: 20}},
		{"mix:0.25*normal:1e+3,20+0.75*fixed:5", Mixture{Weights: []float64{0.25, 0.75}, Components: []Distribution{Normal{Mu: 1000, Sigma: 20}, Fixed{Value: 5}}}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.text, err)
			continue
		}
		if got.String() != tt.want.String() {
			t.Errorf("Parse(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, want string }{
		{"normal:128", `cannot parse "normal:128": want 2 parameters, got 1; want normal:MU,SIGMA`},
		{"normal:128,-1", `sigma -1 < 0`},
		{"bogus:1", `unknown distribution "bogus"; want one of fixed,`},
		{"lognormal:mean=512", `give either mu and sigma or mean and stddev; want lognormal:MU,SIGMA or lognormal:mean=M,stddev=S`},
		{"mix:0.7*normal:1,2+0.3", `want mix:W1*DIST1+W2*DIST2`},
		{"mix:1*mix:1*fixed:1", `mixtures cannot nest`},
		{"mix:0.7*fixed:1+0.5*fixed:2", `weights sum to 1.2; they must sum to 1`},
		{"empirical:nope.jsonl", `"nope.jsonl" is neither FILE#FIELD nor a number`},
		{"empirical:/nonexistent.jsonl#isl", `no such file`},
		{"uniformint:1.5,3", `bounds must be integers`},
		{"vllm-range:100,1.5", `want len >= 0 and 0 <= ratio < 1`},
		{"", `no NAME: prefix`},
		{"exponential:mean=0", `give either rate or mean (> 0)`},
		{"exponential:1,2", `too many parameters`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.text)
		if err == nil {
			t.Errorf("Parse(%q) = nil error, want %q", tt.text, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "distribution: cannot parse ") {
			t.Errorf("Parse(%q) error = %q, want it to contain %q", tt.text, err, tt.want)
		}
	}
}

func TestSpecJSON(t *testing.T) {
	t.Parallel()
	type cfg struct {
		ISL Spec `json:"isl"`
		OSL Spec `json:"osl,omitzero"`
	}
	c := cfg{ISL: Spec{LogNormalFromMeanStd(512, 128)}}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"isl":"lognormal:mean=512,stddev=128"}`; got != want {
		t.Errorf("json.Marshal = %s, want %s", got, want)
	}
	var back cfg
	if err := json.Unmarshal([]byte(`{"isl":"normal:128,20","osl":""}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.ISL.String() != "normal:128,20" || !back.OSL.IsZero() {
		t.Errorf("json.Unmarshal = %+v", back)
	}
	if err := json.Unmarshal([]byte(`{"isl":"normal:abc"}`), &back); err == nil || !strings.Contains(err.Error(), `cannot parse "normal:abc"`) {
		t.Errorf("json.Unmarshal(bad) error = %v", err)
	}
}

func TestWithSrcDeterministic(t *testing.T) {
	t.Parallel()
	for _, d := range all() {
		a := WithSrc(d, rand.NewPCG(7, 7))
		b := WithSrc(d, rand.NewPCG(7, 7))
		for i := 0; i < 10; i++ {
			if x, y := a.Rand(), b.Rand(); x != y {
				t.Errorf("%v: draw %d differs with equal seeds: %v vs %v", d, i, x, y)
				break
			}
		}
	}
}

// TestConsistency checks each sampler's Rand, CDF, Quantile, Mean and StdDev agree:
// Quantile inverts CDF, and a seeded sample's moments and KS fit match.
func TestConsistency(t *testing.T) {
	t.Parallel()
	for _, d := range all() {
		d := WithSrc(d, testSrc())
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			for _, p := range []float64{0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99} {
				q := d.Quantile(p)
				if c := d.CDF(q); c < p-1e-9 {
					t.Errorf("CDF(Quantile(%v)) = CDF(%v) = %v, want >= p", p, q, c)
				}
				if c := d.CDF(math.Nextafter(q, math.Inf(-1)) - 1e-9*math.Abs(q)); c > p+1e-9 {
					t.Errorf("CDF just below Quantile(%v)=%v is %v, want <= p", p, q, c)
				}
			}
			if sv, ok := d.(interface{ Survival(float64) float64 }); ok {
				for _, p := range []float64{0.01, 0.5, 0.99} {
					x := d.Quantile(p)
					if got, want := sv.Survival(x), 1-d.CDF(x); math.Abs(got-want) > 1e-12 {
						t.Errorf("Survival(%v) = %v, want 1-CDF = %v", x, got, want)
					}
				}
			}
			const n = 20000
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = d.Rand()
			}
			m, s := meanStd(xs)
			if tol := 5*d.StdDev()/math.Sqrt(n) + 1e-9; math.Abs(m-d.Mean()) > tol {
				t.Errorf("sample mean = %v, want %v ± %v", m, d.Mean(), tol)
			}
			if math.Abs(s-d.StdDev()) > 0.05*d.StdDev()+1e-9 {
				t.Errorf("sample stddev = %v, want %v ± 5%%", s, d.StdDev())
			}
			if _, discrete := d.(Prober); !discrete {
				if r := KS1(xs, d); r.Reject(0.001) {
					t.Errorf("own sample rejected: %v", r)
				}
			}
		})
	}
}

// gonum's distuv types plug into the consumer-side interfaces as they are.
func TestGonumPlugsIn(t *testing.T) {
	t.Parallel()
	g := distuv.Exponential{Rate: 20, Src: testSrc()}
	var _ Rander = g
	var _ CDFer = g
	var _ Quantiler = g
	xs := make([]float64, 500)
	for i := range xs {
		xs[i] = g.Rand()
	}
	ours := KS1(xs, Exponential{Rate: 20})
	theirs := KS1(xs, g)
	if math.Abs(ours.Statistic-theirs.Statistic) > 1e-12 {
		t.Errorf("KS1 against distuv.Exponential D = %v, against ours %v", theirs.Statistic, ours.Statistic)
	}
	if theirs.Reject(0.01) {
		t.Errorf("KS1 rejected gonum's own sample: %v", theirs)
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

func writeFile(path, data string) error { return os.WriteFile(path, []byte(data), 0o644) }
