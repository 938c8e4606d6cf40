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
// [DefaultResamples]) values of D simulated under the target:
//
//   - n <= [DiscreteKSExactN]: samples of size n drawn from the target itself, so the
//     test has exact level (averaged over the simulation);
//   - larger n: the limit of √n·D for a discrete F, the maximum of |Brownian bridge|
//     over the target's CDF values F(k), scaled by Stephens' finite-n factor
//     √n + 0.12 + 0.11/√n; this null depends on the target only, so it is simulated once
//     for every n. When the target has more than 8192 atoms, each of tiny mass, the
//     continuous Kolmogorov limit is used instead (slightly conservative).
//
// The simulations are seeded with [DefaultSeed] and a hash of the target, so results
// are reproducible, and cached for the life of the process (up to 64 entries).
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
	r := FitResult{N: n, Target: target.String()}
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
		r.Method = "discrete KS"
		r.Statistic = 1
		r.PValue = 0
		return r
	}
	// D over all integers: between consecutive distinct sample values F_n is constant
	// and F increasing, so the largest gap of each run is at its ends.
	nf := float64(n)
	for i := 0; i < n; {
		v := x[i]
		below := float64(i) / nf
		if g, F := gap(below, target.CDF(v-1)); g > r.Statistic {
			r.Statistic, r.At, r.CDF1, r.CDF2 = g, float64(v-1), below, F
		}
		for i < n && x[i] == v {
			i++
		}
		after := float64(i) / nf
		if g, F := gap(after, target.CDF(v)); g > r.Statistic {
			r.Statistic, r.At, r.CDF1, r.CDF2 = g, float64(v), after, F
		}
	}
	// The null simulations need the CDF at every integer of the support; a support too
	// wide to tabulate is near-continuous (or nearly empty between a few atoms), and the
	// continuous limit is used.
	hi = max(hi, x[n-1])
	if hi-lo > maxSupportSpan {
		r.Method = "KS, asymptotic p (support too wide to simulate)"
		r.PValue = KolmogorovAsympSF(r.Statistic * (math.Sqrt(nf) + 0.12 + 0.11/math.Sqrt(nf)))
		return r
	}
	cdf := make([]float64, hi-lo+1)
	for k := lo; k <= hi; k++ {
		cdf[k-lo] = target.CDF(k)
	}
	cdf[len(cdf)-1] = 1
	atoms := 0
	for i, F := range cdf {
		if F < 1 && (i == 0 || F > cdf[i-1]) {
			atoms++
		}
	}
	var null []float64
	stat := r.Statistic
	switch {
	case n <= DiscreteKSExactN:
		r.Method = fmt.Sprintf("discrete KS, Monte Carlo p (%d resamples)", resamples)
		null = nullKSExact(target, cdf, n, resamples)
	case atoms <= maxBridgeGrid:
		r.Method = fmt.Sprintf("discrete KS, Monte Carlo p (%d Brownian-bridge resamples)", resamples)
		null = nullKSBridge(target, cdf, resamples)
		stat *= math.Sqrt(nf) + 0.12 + 0.11/math.Sqrt(nf)
	default:
		r.Method = "KS, asymptotic p (near-continuous target)"
		r.PValue = KolmogorovAsympSF(stat * (math.Sqrt(nf) + 0.12 + 0.11/math.Sqrt(nf)))
		return r
	}
	// count simulated statistics >= D (with a relative tolerance for rounding)
	idx, _ := slices.BinarySearch(null, stat*(1-1e-12))
	r.PValue = float64(1+len(null)-idx) / float64(resamples+1)
	return r
}

// DiscreteKSExactN is the largest sample size for which [DiscreteKS] simulates samples
// of the actual size; above it, it simulates the large-n limit.
const DiscreteKSExactN = 1000

const maxBridgeGrid = 8192

// maxSupportSpan bounds the integers DiscreteKS tabulates the CDF over (32 MB).
const maxSupportSpan = 1 << 22

func gap(ecdf, F float64) (float64, float64) { return math.Abs(ecdf - F), F }

type nullKey struct {
	target    string
	n, resamp int // n = 0 for the Brownian-bridge limit
}

var nullCache struct {
	sync.Mutex
	m     map[nullKey][]float64
	order []nullKey
}

func cachedNull(key nullKey, sim func(r *rand.Rand) []float64) []float64 {
	nullCache.Lock()
	if d, ok := nullCache.m[key]; ok {
		nullCache.Unlock()
		return d
	}
	nullCache.Unlock()

	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%d|%d", key.target, key.n, key.resamp)
	ds := sim(rand.New(rand.NewPCG(DefaultSeed, h.Sum64())))
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

// nullKSExact simulates D for samples of size n drawn from the target (by inverse
// CDF of sorted uniforms). Between consecutive distinct sample values F_n is constant
// and F increasing, so the gap is largest at the ends of the run: only the atoms at
// and just below sample values are visited.
func nullKSExact(target Length, cdf []float64, n, resamples int) []float64 {
	return cachedNull(nullKey{target.String(), n, resamples}, func(r *rand.Rand) []float64 {
		ds := make([]float64, resamples)
		u := make([]float64, n)
		nf := float64(n)
		for b := range ds {
			for i := range u {
				u[i] = r.Float64()
			}
			sortFloats(u)
			d := 0.0
			for i := 0; i < n; {
				// the draw is the smallest atom k with F(k) > u
				k, _ := slices.BinarySearch(cdf, math.Nextafter(u[i], 2))
				k = min(k, len(cdf)-1)
				// the run of atoms before k shares F_n = i/n; its largest gap is at k-1
				if k > 0 {
					d = math.Max(d, math.Abs(float64(i)/nf-cdf[k-1]))
				}
				for i < n && u[i] < cdf[k] {
					i++
				}
				d = math.Max(d, math.Abs(float64(i)/nf-cdf[k]))
			}
			ds[b] = d
		}
		return ds
	})
}

// nullKSBridge simulates max_k |B(F(k))| for a Brownian bridge B.
func nullKSBridge(target Length, cdf []float64, resamples int) []float64 {
	var grid []float64
	for i, F := range cdf {
		if F < 1 && (i == 0 || F > cdf[i-1]) {
			grid = append(grid, F)
		}
	}
	return cachedNull(nullKey{target.String(), 0, resamples}, func(r *rand.Rand) []float64 {
		ds := make([]float64, resamples)
		w := make([]float64, len(grid))
		steps := make([]float64, len(grid)+1)
		prev := 0.0
		for i, t := range grid {
			steps[i] = math.Sqrt(t - prev)
			prev = t
		}
		steps[len(grid)] = math.Sqrt(1 - prev)
		for b := range ds {
			acc := 0.0
			for i := range grid {
				acc += steps[i] * r.NormFloat64()
				w[i] = acc
			}
			w1 := acc + steps[len(grid)]*r.NormFloat64()
			d := 0.0
			for i, t := range grid {
				d = math.Max(d, math.Abs(w[i]-t*w1))
			}
			ds[b] = d
		}
		return ds
	})
}
