package distribution

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/perfgate/perfgate/internal/testutil"
)

// Simulation checks: at alpha = 0.01 each test's false-rejection rate over simulated
// samples from the null hypothesis must lie in the binomial 99% interval around 1%.
// Seeds are fixed, so the outcome is deterministic; -short trims the repetitions
// (CI runs them in full).

const simAlpha = 0.01

func simReps() int {
	if testutil.Short() {
		return 400
	}
	return 2000
}

// binomInterval returns the central 99% interval of Binomial(n, p).
func binomInterval(n int, p float64) (lo, hi int) {
	b := distuv.Binomial{N: float64(n), P: p}
	lo, hi = -1, -1
	for k := 0; k <= n; k++ {
		c := b.CDF(float64(k))
		if lo < 0 && c >= 0.005 {
			lo = k
		}
		if c >= 0.995 {
			hi = k
			break
		}
	}
	return lo, hi
}

type nullCase struct {
	name string
	// size is the test's actual level at simAlpha when it differs from simAlpha (an
	// exact test of a discrete statistic cannot hit 1% exactly); 0 = simAlpha.
	size float64
	// reject draws one null sample from r and reports whether the test rejects it.
	reject func(r *rand.Rand) bool
}

func normals(r *rand.Rand, n int, mu, sigma float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = mu + sigma*r.NormFloat64()
	}
	return x
}

func lengths(l Length, r *rand.Rand, n int) []int {
	l.Dist = WithSrc(l.Dist, r)
	x := make([]int, n)
	for i := range x {
		x[i] = l.Rand()
	}
	return x
}

func draws(d Distribution, r *rand.Rand, n int) []float64 {
	d = WithSrc(d, r)
	x := make([]float64, n)
	for i := range x {
		x[i] = d.Rand()
	}
	return x
}

func nullCases() []nullCase {
	norm := Normal{Mu: 128, Sigma: 20}
	expo := Exponential{Rate: 20}
	lnLen := Length{Dist: LogNormalFromMeanStd(512, 128), Max: 2048}
	vr := Length{Dist: VLLMRange{Len: 256, Ratio: 0.5}}
	normLen := Length{Dist: Normal{Mu: 40, Sigma: 15}, Min: 10, Max: 70}
	narrow := Length{Dist: Normal{Mu: 3, Sigma: 1.5}, Max: 6}
	return []nullCase{
		{name: "KS1 exact n=50 normal", reject: func(r *rand.Rand) bool { return KS1(draws(norm, r, 50), norm).Reject(simAlpha) }},
		{name: "KS1 exact n=400 exponential", reject: func(r *rand.Rand) bool { return KS1(draws(expo, r, 400), expo).Reject(simAlpha) }},
		{name: "KS1 asymp n=12000 exponential", reject: func(r *rand.Rand) bool { return KS1(draws(expo, r, 12000), expo).Reject(simAlpha) }},
		{name: "KS2 exact n=m=100", reject: func(r *rand.Rand) bool { return KS2(draws(expo, r, 100), draws(expo, r, 100)).Reject(simAlpha) }},
		{name: "KS2 exact n=300 m=200", reject: func(r *rand.Rand) bool { return KS2(draws(norm, r, 300), draws(norm, r, 200)).Reject(simAlpha) }},
		{name: "FitLength lognormal n=1000", reject: func(r *rand.Rand) bool {
			return FitLength(lengths(lnLen, r, 1000), lnLen).Reject(simAlpha)
		}},
		{name: "FitLength vllm-range n=2000", reject: func(r *rand.Rand) bool {
			return FitLength(lengths(vr, r, 2000), vr).Reject(simAlpha)
		}},
		{name: "FitLength clamped normal n=500", reject: func(r *rand.Rand) bool {
			return FitLength(lengths(normLen, r, 500), normLen).Reject(simAlpha)
		}},
		{name: "FitLengthChiSquare lognormal n=1000", reject: func(r *rand.Rand) bool {
			return FitLengthChiSquare(lengths(lnLen, r, 1000), lnLen).Reject(simAlpha)
		}},
		{name: "FitLengthChiSquare clamped normal n=500", reject: func(r *rand.Rand) bool {
			return FitLengthChiSquare(lengths(normLen, r, 500), normLen).Reject(simAlpha)
		}},
		{name: "DiscreteKS narrow support n=300", reject: func(r *rand.Rand) bool {
			return DiscreteKS(lengths(narrow, r, 300), narrow, 0).Reject(simAlpha)
		}},
		{name: "AndersonDarling n=100 normal", reject: func(r *rand.Rand) bool {
			return AndersonDarling(draws(norm, r, 100), norm).Reject(simAlpha)
		}},
		{name: "AndersonDarlingKSamp 2x150", reject: func(r *rand.Rand) bool {
			return AndersonDarlingKSamp(draws(expo, r, 150), draws(expo, r, 150)).Reject(simAlpha)
		}},
		{name: "MannWhitney asymptotic 60x80", reject: func(r *rand.Rand) bool {
			return MannWhitney(draws(expo, r, 60), draws(expo, r, 80)).Reject(simAlpha)
		}},
		{name: "MannWhitney exact 8x8", size: mwExactSize(8, 8), reject: func(r *rand.Rand) bool {
			return MannWhitney(draws(norm, r, 8), draws(norm, r, 8)).Reject(simAlpha)
		}},
		{name: "StudentTCI 99% n=10 misses", reject: func(r *rand.Rand) bool {
			iv, _ := StudentTCI(normals(r, 10, 5, 2), 1-simAlpha)
			return !iv.Contains(5)
		}},
		{name: "Wilson 99% n=500 p=0.3 misses", reject: func(r *rand.Rand) bool {
			k := 0
			for range 500 {
				if r.Float64() < 0.3 {
					k++
				}
			}
			lo, hi := Wilson(k, 500, 1-simAlpha)
			return 0.3 < lo || 0.3 > hi
		}},
	}
}

func TestFalseRejectionRate(t *testing.T) {
	t.Parallel()
	reps := simReps()
	for ci, c := range nullCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			size := simAlpha
			if c.size > 0 {
				size = c.size
			}
			lo, hi := binomInterval(reps, size)
			r := rand.New(rand.NewPCG(0x5eed, uint64(ci)))
			k := 0
			for range reps {
				if c.reject(r) {
					k++
				}
			}
			t.Logf("%s: %d/%d false rejections at alpha=%g (%.2f%%), 99%% interval [%d, %d] around size %.4g", c.name, k, reps, simAlpha, 100*float64(k)/float64(reps), lo, hi, size)
			if k < lo || k > hi {
				t.Errorf("%s: %d false rejections in %d null samples, want %d..%d (binomial 99%% interval around the test's size %.4g)", c.name, k, reps, lo, hi, size)
			}
		})
	}
}

// powerReport collects the power table for the README (printed by TestPower).
var powerReport sync.Map

// TestPower reports each test's power to detect a 2% shift of the mean at n = 5000
// (alpha = 0.01). It asserts only that power beats the false-rejection rate; the
// numbers go to the log (and the README).
func TestPower(t *testing.T) {
	t.Parallel()
	reps := 200
	if testutil.Short() {
		reps = 50
	}
	const n = 5000
	norm := Normal{Mu: 128, Sigma: 20} // lengths-like; shift = 2% of 128
	shiftN := Normal{Mu: 128 * 1.02, Sigma: 20}
	lat := LogNormalFromMeanStd(0.2, 0.1) // a latency in seconds; scale by 1.02
	lenT := Length{Dist: Normal{Mu: 512, Sigma: 128}}
	lenS := Length{Dist: Normal{Mu: 512 * 1.02, Sigma: 128}}
	scaled := func(x []float64) []float64 {
		for i := range x {
			x[i] *= 1.02
		}
		return x
	}
	cases := []nullCase{
		{name: "KS1 normal, mean +2%", reject: func(r *rand.Rand) bool { return KS1(draws(shiftN, r, n), norm).Reject(simAlpha) }},
		{name: "AndersonDarling normal, mean +2%", reject: func(r *rand.Rand) bool { return AndersonDarling(draws(shiftN, r, n), norm).Reject(simAlpha) }},
		{name: "KS1 normal:512,128 (continuous), mean +2%", reject: func(r *rand.Rand) bool {
			return KS1(draws(Normal{Mu: 512 * 1.02, Sigma: 128}, r, n), Normal{Mu: 512, Sigma: 128}).Reject(simAlpha)
		}},
		{name: "FitLength (discrete KS) normal:512,128, mean +2%", reject: func(r *rand.Rand) bool {
			return FitLength(lengths(lenS, r, n), lenT).Reject(simAlpha)
		}},
		{name: "FitLengthChiSquare normal:512,128, mean +2%", reject: func(r *rand.Rand) bool {
			return FitLengthChiSquare(lengths(lenS, r, n), lenT).Reject(simAlpha)
		}},
		{name: "KS1 lognormal latency x1.02", reject: func(r *rand.Rand) bool { return KS1(scaled(draws(lat, r, n)), lat).Reject(simAlpha) }},
		{name: "KS2 lognormal latency x1.02 (n=m=5000)", reject: func(r *rand.Rand) bool {
			return KS2(draws(lat, r, n), scaled(draws(lat, r, n))).Reject(simAlpha)
		}},
		{name: "MannWhitney lognormal latency x1.02 (n=m=5000)", reject: func(r *rand.Rand) bool {
			return MannWhitney(draws(lat, r, n), scaled(draws(lat, r, n))).Reject(simAlpha)
		}},
		{name: "AndersonDarlingKSamp lognormal x1.02 (n=m=5000)", reject: func(r *rand.Rand) bool {
			return AndersonDarlingKSamp(draws(lat, r, n), scaled(draws(lat, r, n))).Reject(simAlpha)
		}},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(0xb0057, uint64(ci)))
			k := 0
			for range reps {
				if c.reject(r) {
					k++
				}
			}
			power := float64(k) / float64(reps)
			powerReport.Store(c.name, power)
			t.Logf("power %-50s %5.1f%% (%d/%d, n=%d, alpha=%g)", c.name, 100*power, k, reps, n, simAlpha)
			if power <= 2*simAlpha {
				t.Errorf("%s: power %.3f, want well above alpha %g", c.name, power, simAlpha)
			}
		})
	}
	var lines []string
	powerReport.Range(func(k, v any) bool {
		lines = append(lines, fmt.Sprintf("| %s | %.0f%% |", k, 100*v.(float64)))
		return true
	})
	sort.Strings(lines)
	t.Logf("power table (n=%d, alpha=%g, %d reps):\n%s", n, simAlpha, reps, strings.Join(lines, "\n"))
}

// mwExactSize returns the actual level of the exact two-sided Mann-Whitney test at
// simAlpha for sizes m, n: the null probability of the U values it rejects.
func mwExactSize(m, n int) float64 {
	size := 0.0
	for u := 0; u <= m*n; u++ {
		pu := mwuSF(u, m, n) - mwuSF(u+1, m, n) // P(U = u)
		big := max(u, m*n-u)
		if 2*mwuSF(big, m, n) < simAlpha {
			size += pu
		}
	}
	return size
}
