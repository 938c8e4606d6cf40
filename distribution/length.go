package distribution

import (
	"errors"
	"fmt"
	"math"
)

// MaxResample bounds how many draws [Length.Rand] makes while its value rounds below 1
// before it panics (the distribution then has almost no mass at lengths >= 1, which is
// a configuration error).
const MaxResample = 1000

// Length turns a sampler into token lengths (positive integers), by one rule used
// everywhere in perfgate:
//
//  1. draw x from Dist and round it to the nearest integer, halves away from zero
//     (math.Round: 127.5 → 128);
//  2. if the result is below 1, draw again (so the length distribution is Dist
//     conditioned on round(x) >= 1, not a pile-up at 1);
//  3. clamp to [max(Min, 1), Max]; Max <= 0 means no upper bound. Clamping piles the
//     mass beyond the bounds onto Min and Max, as a server's max_tokens would.
//
// Prob and CDF give the exact distribution of the result, from Dist.CDF:
// with G(k) = P(X < k + 1/2) (the left limit, so atoms of Dist at half-integers are
// counted where math.Round puts them),
// P(L <= k) = (G(k) - G(0)) / (1 - G(0)) for max(Min,1) <= k < Max.
// Tests of recorded lengths should compare against this, not against Dist.
//
// Length is a value; it is safe for concurrent use if Dist is.
type Length struct {
	Dist     Distribution
	Min, Max int
}

func (l Length) check() {
	if l.Dist == nil {
		panic("distribution: Length has no Dist")
	}
	if l.Max > 0 && l.Max < max(l.Min, 1) {
		panic(fmt.Sprintf("distribution: Length max %d < min %d", l.Max, max(l.Min, 1)))
	}
}

// MinLengthMass is the least probability of a draw of a Length's Dist rounding to 1
// or more that [Length.Err] accepts: below it, MaxResample draws in a row below 1
// stop being negligible ((1-0.05)^1000 < 1e-22).
const MinLengthMass = 0.05

// Err reports why l cannot draw lengths: no Dist, Max below Min, or a Dist that
// rarely or never rounds to a length >= 1 (fixed:0, normal:-100,1), which would make
// Rand panic. Configuration checks call it so that such a spec is refused when read,
// not when a run draws from it.
func (l Length) Err() error {
	if l.Dist == nil {
		return errors.New("distribution: Length has no Dist")
	}
	if l.Max > 0 && l.Max < max(l.Min, 1) {
		return fmt.Errorf("distribution: Length max %d < min %d", l.Max, max(l.Min, 1))
	}
	if p := 1 - l.g(0); !(p >= MinLengthMass) {
		return fmt.Errorf("distribution: draws round to a length >= 1 with probability %.3g; want at least %g (lengths are whole tokens >= 1)", p, MinLengthMass)
	}
	return nil
}

func (l Length) lo() int { return max(l.Min, 1) }

// g returns P(round(X) <= k) = P(X < k + 0.5).
func (l Length) g(k int) float64 {
	return l.Dist.CDF(math.Nextafter(float64(k)+0.5, math.Inf(-1)))
}

func (l Length) clamp(k float64) int {
	if l.Max > 0 && k > float64(l.Max) {
		return l.Max
	}
	if k < float64(l.lo()) {
		return l.lo()
	}
	if k > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(k)
}

// Rand draws a length. It panics after [MaxResample] consecutive draws below 1.
func (l Length) Rand() int {
	l.check()
	for range MaxResample {
		k := math.Round(l.Dist.Rand())
		if k >= 1 {
			return l.clamp(k)
		}
	}
	panic(fmt.Sprintf("distribution: Length: %d draws of %v in a row rounded below 1", MaxResample, l.Dist))
}

// CDF returns P(L <= k).
func (l Length) CDF(k int) float64 {
	l.check()
	if k < l.lo() {
		return 0
	}
	if l.Max > 0 && k >= l.Max {
		return 1
	}
	g0 := l.g(0)
	if g0 >= 1 {
		panic(fmt.Sprintf("distribution: Length: %v has no mass at lengths >= 1", l.Dist))
	}
	return math.Min((l.g(k)-g0)/(1-g0), 1)
}

// Prob returns P(L = k).
func (l Length) Prob(k int) float64 {
	return math.Max(l.CDF(k)-l.CDF(k-1), 0)
}

// Quantile returns the smallest length k with CDF(k) >= p.
func (l Length) Quantile(p float64) int {
	checkProb(p)
	l.check()
	if p == 0 {
		return l.lo()
	}
	g0 := l.g(0)
	q := l.Dist.Quantile(math.Min(g0+p*(1-g0), 1))
	k := l.clamp(math.Round(q))
	for k > l.lo() && l.CDF(k-1) >= p {
		k--
	}
	for (l.Max <= 0 || k < l.Max) && l.CDF(k) < p && k < math.MaxInt32 {
		k++
	}
	return k
}

// support returns the range of k that carries all but ~1e-13 of the mass.
func (l Length) support() (int, int) {
	hi := l.Max
	if hi <= 0 {
		hi = l.Quantile(1 - 1e-13)
	}
	return l.lo(), hi
}

// Mean returns E[L], summed over the support (all but ~1e-13 of the mass when Max is
// unbounded). For a support wider than 2^20 integers it averages 2^16 evenly spaced
// quantiles instead (relative error ~1e-4 for smooth targets).
func (l Length) Mean() float64 {
	lo, hi := l.support()
	if hi-lo > 1<<20 {
		m, _ := l.quantileMoments()
		return m
	}
	s, prev := 0.0, 0.0
	for k := lo; k <= hi; k++ {
		c := l.CDF(k)
		s += float64(k) * (c - prev)
		prev = c
	}
	return s
}

// StdDev returns the standard deviation of L, summed like Mean.
func (l Length) StdDev() float64 {
	lo, hi := l.support()
	if hi-lo > 1<<20 {
		_, sd := l.quantileMoments()
		return sd
	}
	m := l.Mean()
	s, prev := 0.0, 0.0
	for k := lo; k <= hi; k++ {
		c := l.CDF(k)
		s += (float64(k) - m) * (float64(k) - m) * (c - prev)
		prev = c
	}
	return math.Sqrt(s)
}

func (l Length) quantileMoments() (mean, sd float64) {
	const m = 1 << 16
	var s, ss float64
	for i := range m {
		q := float64(l.Quantile((float64(i) + 0.5) / m))
		s += q
		ss += q * q
	}
	mean = s / m
	return mean, math.Sqrt(math.Max(ss/m-mean*mean, 0))
}

// AsDistribution returns L as a discrete Distribution (integer-valued floats), for the
// goodness-of-fit tests and anything else that takes a CDFer.
func (l Length) AsDistribution() Distribution { return lengthDist{l} }

// String describes the length rule, e.g. "length(normal:128,20, min=1, max=4096)".
func (l Length) String() string {
	s := "length(" + fmt.Sprint(l.Dist) + fmt.Sprintf(", min=%d", l.lo())
	if l.Max > 0 {
		s += fmt.Sprintf(", max=%d", l.Max)
	}
	return s + ")"
}

type lengthDist struct{ l Length }

func (d lengthDist) Rand() float64   { return float64(d.l.Rand()) }
func (d lengthDist) Mean() float64   { return d.l.Mean() }
func (d lengthDist) StdDev() float64 { return d.l.StdDev() }
func (d lengthDist) String() string  { return d.l.String() }
func (d lengthDist) CDF(x float64) float64 {
	if x >= math.MaxInt32 {
		return 1
	}
	if x < float64(d.l.lo()) {
		return 0
	}
	return d.l.CDF(int(math.Floor(x)))
}
func (d lengthDist) Prob(x float64) float64 {
	if x != math.Trunc(x) || x > math.MaxInt32 || x < math.MinInt32 {
		return 0
	}
	return d.l.Prob(int(x))
}
func (d lengthDist) Quantile(p float64) float64 { return float64(d.l.Quantile(p)) }
