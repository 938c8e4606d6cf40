package distribution

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// DefaultResamples is the number of simulated samples behind [DiscreteKS]'s Monte
// Carlo p-value when given 0: p = (1 + #{D* >= D})/10000. Because the simulated null
// distribution is seeded (and cached), the test's level at alpha = 0.01 is fixed by one
// simulated threshold; with 9999 samples that level is within about ±0.1% of 1%
// (with 999 it would be ±0.3%).
const DefaultResamples = 9999

// FitLength tests recorded integer lengths against the exact length distribution of
// target (see [Length]). It is [DiscreteKS] with [DefaultResamples] resamples.
//
// Why this default: a KS p-value computed as if the target were continuous is
// conservative for a discrete target (its false-rejection rate falls below alpha, by
// far when the support is narrow), and chi-square on merged bins, which keeps its level,
// spreads its power over many bins and misses small shifts: at n = 5000, a 2% shift of
// normal:512,128 lengths is caught about half the time by chi-square and almost always
// by the KS statistic (see the README). DiscreteKS keeps KS's power and gets an exact
// level by comparing D with its null distribution simulated from the target itself.
// [FitLengthChiSquare] is the alternative for detecting shape differences over a
// narrow support.
func FitLength(sample []int, target Length) FitResult {
	return DiscreteKS(sample, target, 0)
}

// FitLengthChiSquare tests lengths against target with [FitDiscrete]'s chi-square test.
func FitLengthChiSquare(sample []int, target Length) FitResult {
	target.check()
	xs := make([]float64, len(sample))
	for i, k := range sample {
		xs[i] = float64(k)
	}
	return FitDiscrete(xs, target.AsDistribution())
}

// DiscreteKS is the Kolmogorov–Smirnov test of integer lengths against the exact
// discrete distribution of target: D = max_k |F_n(k) - F(k)| over the integers, with a
// Monte Carlo p-value (1 + #{D* >= D})/(B + 1) from B = resamples (0 =
// [DefaultResamples]) samples of the same size drawn from target. Such a p-value gives
// an exact-level test for any B (averaged over the simulation). The null samples come from a PCG seeded with
// [DefaultSeed] and a hash of (target, n, B), so results are reproducible, and the
// simulated null distribution is cached per (target, n, B) for the life of the process
// (up to 64 entries), so repeated tests against one target are cheap.
// Lengths the target cannot produce make it an outright rejection (PValue 0).
// It panics on an empty sample.
func DiscreteKS(sample []int, target Length, resamples int) FitResult {
	target.check()
	n := len(sample)
	if n == 0 {
		panic("distribution: DiscreteKS of an empty sample")
	}
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	r := FitResult{
		Method: fmt.Sprintf("discrete KS, Monte Carlo p (%d resamples)", resamples),
		N:      n, Target: target.String(),
	}
	x := slices.Clone(sample)
	slices.Sort(x)
	lo, hi := target.support()
	impossible := false
	for i, k := range x {
		if i == 0 || k != x[i-1] {
			impossible = k < lo || (target.Max > 0 && k > target.Max) || target.Prob(k) == 0
		}
		if impossible {
			if r.Impossible == 0 {
				r.ImpossibleExample = float64(k)
			}
			r.Impossible++
		}
	}
	if r.Impossible > 0 {
		r.Statistic = 1
		r.PValue = 0
		return r
	}
	// Observed values beyond the numerical support's upper end extend it.
	hi = max(hi, x[n-1])
	cdf := make([]float64, hi-lo+1)
	for k := lo; k <= hi; k++ {
		cdf[k-lo] = target.CDF(k)
	}
	cdf[len(cdf)-1] = 1
	nf := float64(n)
	j := 0
	for i, F := range cdf {
		k := lo + i
		for j < n && x[j] <= k {
			j++
		}
		if g := math.Abs(float64(j)/nf - F); g > r.Statistic {
			r.Statistic, r.At, r.CDF1, r.CDF2 = g, float64(k), float64(j)/nf, F
		}
	}
	null := nullKS(target, cdf, n, resamples)
	// count null statistics >= D (with a relative tolerance for rounding)
	idx, _ := slices.BinarySearch(null, r.Statistic*(1-1e-12))
	r.PValue = float64(1+len(null)-idx) / float64(resamples+1)
	return r
}

type nullKey struct {
	target    string
	n, resamp int
}

var nullCache struct {
	sync.Mutex
	m     map[nullKey][]float64
	order []nullKey
}

// nullKS returns the sorted simulated null distribution of D for samples of size n.
func nullKS(target Length, cdf []float64, n, resamples int) []float64 {
	key := nullKey{target.String(), n, resamples}
	nullCache.Lock()
	if d, ok := nullCache.m[key]; ok {
		nullCache.Unlock()
		return d
	}
	nullCache.Unlock()

	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%d|%d", key.target, n, resamples)
	r := rand.New(rand.NewPCG(DefaultSeed, h.Sum64()))
	ds := make([]float64, resamples)
	u := make([]float64, n)
	nf := float64(n)
	for b := range ds {
		for i := range u {
			u[i] = r.Float64()
		}
		sortFloats(u)
		// A draw from the target is the smallest k with F(k) > U (inverse CDF), so
		// #{X <= k} = #{U < F(k)}.
		j := 0
		d := 0.0
		for _, F := range cdf {
			for j < n && u[j] < F {
				j++
			}
			d = math.Max(d, math.Abs(float64(j)/nf-F))
		}
		ds[b] = d
	}
	slices.Sort(ds)

	nullCache.Lock()
	defer nullCache.Unlock()
	if nullCache.m == nil {
		nullCache.m = map[nullKey][]float64{}
	}
	if _, ok := nullCache.m[key]; !ok {
		if len(nullCache.order) >= 64 {
			delete(nullCache.m, nullCache.order[0])
			nullCache.order = nullCache.order[1:]
		}
		nullCache.m[key] = ds
		nullCache.order = append(nullCache.order, key)
	}
	return ds
}
