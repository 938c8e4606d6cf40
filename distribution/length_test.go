package distribution

import (
	"math"
	"testing"
)

func TestLengthExactPMF(t *testing.T) {
	t.Parallel()
	tests := []Length{
		{Dist: Normal{Mu: 5, Sigma: 3, Src: testSrc()}, Min: 2, Max: 8},
		{Dist: Normal{Mu: 3, Sigma: 4, Src: testSrc()}},
		{Dist: Fixed{Value: 2.5}},
		{Dist: UniformInt{Min: 0, Max: 10, Src: testSrc()}},
		{Dist: VLLMRange{Len: 10, Ratio: 0.5, Src: testSrc()}, Max: 12},
		{Dist: LogNormalFromMeanStd(20, 10), Min: 5, Max: 40},
	}
	for _, l := range tests {
		t.Run(l.String(), func(t *testing.T) {
			t.Parallel()
			if l.Dist.String() == "lognormal:mean=20,stddev=10" {
				l.Dist = WithSrc(l.Dist, testSrc())
			}
			const n = 100000
			counts := map[int]int{}
			for range n {
				k := l.Rand()
				if k < max(l.Min, 1) || (l.Max > 0 && k > l.Max) {
					t.Fatalf("Rand() = %d outside [%d, %d]", k, max(l.Min, 1), l.Max)
				}
				counts[k]++
			}
			lo, hi := l.support()
			sum := 0.0
			for k := lo; k <= hi; k++ {
				p := l.Prob(k)
				sum += p
				if math.Abs(sum-l.CDF(k)) > 1e-12 {
					t.Errorf("sum of Prob up to %d = %v, CDF = %v", k, sum, l.CDF(k))
				}
				sd := math.Sqrt(n * p * (1 - p))
				if got := float64(counts[k]); math.Abs(got-n*p) > 5*sd+1 {
					t.Errorf("count of %d = %v, want %v ± %v", k, got, n*p, 5*sd)
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("Prob sums to %v over [%d, %d], want 1", sum, lo, hi)
			}
			for _, p := range []float64{0.01, 0.3, 0.5, 0.9, 0.999} {
				k := l.Quantile(p)
				if l.CDF(k) < p || (k > lo && l.CDF(k-1) >= p) {
					t.Errorf("Quantile(%v) = %d: CDF(k)=%v CDF(k-1)=%v", p, k, l.CDF(k), l.CDF(k-1))
				}
			}
		})
	}
}

func TestLengthRoundingRule(t *testing.T) {
	t.Parallel()
	// 2.5 rounds away from zero to 3: the atom must be counted at 3.
	l := Length{Dist: Fixed{Value: 2.5}}
	if got := l.Rand(); got != 3 {
		t.Errorf("Length{fixed:2.5}.Rand() = %d, want 3", got)
	}
	if got := l.Prob(3); got != 1 {
		t.Errorf("Length{fixed:2.5}.Prob(3) = %v, want 1", got)
	}
	// Values below 1 are resampled: Normal(0.4, 1) conditioned on round >= 1.
	l = Length{Dist: Normal{Mu: 0.4, Sigma: 1}}
	if got := l.Prob(0); got != 0 {
		t.Errorf("Prob(0) = %v, want 0", got)
	}
	d := Normal{Mu: 0.4, Sigma: 1}
	want := (d.CDF(1.5) - d.CDF(0.5)) / (1 - d.CDF(0.5))
	if got := l.Prob(1); math.Abs(got-want) > 1e-15 {
		t.Errorf("Prob(1) = %v, want %v", got, want)
	}
}

func TestLengthPanics(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(){
		"no mass >= 1": func() { Length{Dist: Fixed{Value: 0}}.Rand() },
		"max < min":    func() { Length{Dist: Fixed{Value: 5}, Min: 10, Max: 5}.Rand() },
		"nil dist":     func() { Length{}.Rand() },
	} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || len(s) < 14 || s[:14] != "distribution: " {
					t.Errorf("%s: panic = %v, want a \"distribution: \" message", name, r)
				}
			}()
			f()
		}()
	}
}
