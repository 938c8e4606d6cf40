package distribution

import (
	"fmt"
	"math/rand/v2"
	"sync"
)

// Rander is anything that draws a sample: every sampler here, and gonum's distuv types.
type Rander interface{ Rand() float64 }

// CDFer is anything with a cumulative distribution function P(X <= x). The
// goodness-of-fit tests ([KS1], [AndersonDarling]) accept it, so gonum's distuv types
// plug in as they are.
type CDFer interface{ CDF(x float64) float64 }

// Quantiler is anything with an inverse CDF, p in [0, 1].
type Quantiler interface{ Quantile(p float64) float64 }

// Prober is a discrete distribution's probability mass function P(X = x).
type Prober interface{ Prob(x float64) float64 }

// Distribution is what a configured workload or latency model is: a sampler that also
// knows its CDF, quantiles and moments, and prints in the [Parse] text form.
//
// All implementations in this package are value structs; a copy is independent except
// that copies share the Src they hold.
type Distribution interface {
	Rand() float64
	CDF(x float64) float64
	Quantile(p float64) float64
	Mean() float64
	StdDev() float64
	String() string
}

// DefaultSeed seeds the source used by every sampler whose Src is nil: a PCG
// (math/rand/v2) seeded with (DefaultSeed, DefaultSeed), shared by the whole process and
// guarded by a mutex. A program that draws from one goroutine therefore sees the same
// sequence on every run; set Src for streams that must not interleave.
const DefaultSeed = 0x5eed

var defaultSrc rand.Source = &lockedSource{src: rand.NewPCG(DefaultSeed, DefaultSeed)}

type lockedSource struct {
	mu  sync.Mutex
	src *rand.PCG
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	v := s.src.Uint64()
	s.mu.Unlock()
	return v
}

// rng returns a generator over src, or over the shared default source when src is nil.
func rng(src rand.Source) *rand.Rand {
	if src == nil {
		src = defaultSrc
	}
	return rand.New(src)
}

// sampler is implemented by this package's distributions so a Mixture can draw a
// component's value from the mixture's own generator.
type sampler interface {
	randWith(r *rand.Rand) float64
}

func drawWith(d Rander, r *rand.Rand) float64 {
	if s, ok := d.(sampler); ok {
		return s.randWith(r)
	}
	return d.Rand()
}

func checkProb(p float64) {
	if !(p >= 0 && p <= 1) {
		panic(fmt.Sprintf("distribution: probability %v out of [0, 1]", p))
	}
}

func fmtFloat(x float64) string {
	return fmt.Sprintf("%g", x)
}

// WithSrc returns a copy of d that draws from src. Distributions from other packages
// that it does not know are returned unchanged. A Mixture's components keep their own
// Src but are drawn from the mixture's, so a copy of the mixture is enough.
func WithSrc(d Distribution, src rand.Source) Distribution {
	switch v := d.(type) {
	case Fixed:
		v.Src = src
		return v
	case Uniform:
		v.Src = src
		return v
	case UniformInt:
		v.Src = src
		return v
	case Normal:
		v.Src = src
		return v
	case LogNormal:
		v.Src = src
		return v
	case Exponential:
		v.Src = src
		return v
	case Gamma:
		v.Src = src
		return v
	case Mixture:
		v.Src = src
		return v
	case Empirical:
		v.Src = src
		return v
	case VLLMRange:
		v.Src = src
		return v
	case SGLangRange:
		v.Src = src
		return v
	}
	return d
}

// bisect finds the smallest x in [lo, hi] (to float precision) with cdf(x) >= p.
func bisect(cdf func(float64) float64, p, lo, hi float64) float64 {
	for i := 0; i < 200 && lo < hi; i++ {
		mid := lo + (hi-lo)/2
		if mid == lo || mid == hi {
			break
		}
		if cdf(mid) >= p {
			hi = mid
		} else {
			lo = mid
		}
	}
	if cdf(lo) >= p {
		return lo
	}
	return hi
}

// Compile-time checks: every sampler is a Distribution; the discrete ones are Probers.
var (
	_ Distribution = Fixed{}
	_ Distribution = Uniform{}
	_ Distribution = UniformInt{}
	_ Distribution = Normal{}
	_ Distribution = LogNormal{}
	_ Distribution = Exponential{}
	_ Distribution = Gamma{}
	_ Distribution = Mixture{}
	_ Distribution = Empirical{}
	_ Distribution = VLLMRange{}
	_ Distribution = SGLangRange{}
	_ Prober       = Fixed{}
	_ Prober       = UniformInt{}
	_ Prober       = Empirical{}
	_ Prober       = VLLMRange{}
	_ Prober       = SGLangRange{}
)
