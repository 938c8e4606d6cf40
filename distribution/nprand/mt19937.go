package nprand

import (
	"fmt"
	"math"
)

const (
	mtN         = 624
	mtM         = 397
	mtMatrixA   = 0x9908b0df
	mtUpperMask = 0x80000000
	mtLowerMask = 0x7fffffff
)

// MT19937 is the Mersenne Twister as numpy's legacy RandomState uses it.
type MT19937 struct {
	key [mtN]uint32
	pos int
}

// NewMT19937 seeds with init_genrand(seed), which is what numpy does for an integer
// seed (np.random.seed(42), RandomState(42)).
func NewMT19937(seed uint32) *MT19937 {
	m := &MT19937{}
	m.seed(seed)
	return m
}

func (m *MT19937) seed(seed uint32) {
	m.key[0] = seed
	for i := 1; i < mtN; i++ {
		prev := m.key[i-1]
		m.key[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	m.pos = mtN
}

// NewMT19937Array seeds with init_by_array(key), numpy's seeding for an array seed
// (RandomState([1, 2, 3])).
func NewMT19937Array(key []uint32) *MT19937 {
	m := &MT19937{}
	m.seed(19650218)
	i, j := 1, 0
	k := max(mtN, len(key))
	for ; k > 0; k-- {
		prev := m.key[i-1]
		m.key[i] = (m.key[i] ^ ((prev ^ (prev >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= mtN {
			m.key[0] = m.key[mtN-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = mtN - 1; k > 0; k-- {
		prev := m.key[i-1]
		m.key[i] = (m.key[i] ^ ((prev ^ (prev >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= mtN {
			m.key[0] = m.key[mtN-1]
			i = 1
		}
	}
	m.key[0] = 0x80000000
	m.pos = mtN
	return m
}

func (m *MT19937) generate() {
	var i int
	for i = 0; i < mtN-mtM; i++ {
		y := (m.key[i] & mtUpperMask) | (m.key[i+1] & mtLowerMask)
		m.key[i] = m.key[i+mtM] ^ (y >> 1) ^ (-(y & 1) & mtMatrixA)
	}
	for ; i < mtN-1; i++ {
		y := (m.key[i] & mtUpperMask) | (m.key[i+1] & mtLowerMask)
		m.key[i] = m.key[i+(mtM-mtN)] ^ (y >> 1) ^ (-(y & 1) & mtMatrixA)
	}
	y := (m.key[mtN-1] & mtUpperMask) | (m.key[0] & mtLowerMask)
	m.key[mtN-1] = m.key[mtM-1] ^ (y >> 1) ^ (-(y & 1) & mtMatrixA)
	m.pos = 0
}

// Uint32 returns the next tempered 32-bit output.
func (m *MT19937) Uint32() uint32 {
	if m.pos == mtN {
		m.generate()
	}
	y := m.key[m.pos]
	m.pos++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// Uint64 returns two 32-bit outputs, the first as the high word (numpy's next_uint64).
func (m *MT19937) Uint64() uint64 {
	hi := uint64(m.Uint32())
	return hi<<32 | uint64(m.Uint32())
}

// Float64 returns the 53-bit double in [0, 1) built from two outputs:
// ((a>>5)·2^26 + (b>>6)) / 2^53.
func (m *MT19937) Float64() float64 {
	a := m.Uint32() >> 5
	b := m.Uint32() >> 6
	return (float64(a)*67108864.0 + float64(b)) / 9007199254740992.0
}

// RandomState is numpy's legacy np.random.RandomState (also the global state behind
// np.random.seed and np.random.gamma …).
type RandomState struct {
	mt       *MT19937
	hasGauss bool
	gauss    float64
}

// NewRandomState returns np.random.RandomState(seed), the state np.random.seed(seed)
// sets. It panics if seed >= 2^32, as numpy raises ValueError.
func NewRandomState(seed uint64) *RandomState {
	if seed > math.MaxUint32 {
		panic(fmt.Sprintf("nprand: RandomState seed %d must be < 2^32", seed))
	}
	return &RandomState{mt: NewMT19937(uint32(seed))}
}

// NewRandomStateArray returns np.random.RandomState(key) for an array seed.
func NewRandomStateArray(key []uint32) *RandomState {
	return &RandomState{mt: NewMT19937Array(key)}
}

// MT returns the underlying MT19937.
func (r *RandomState) MT() *MT19937 { return r.mt }

// RandomSample returns np.random.random_sample(): a float64 in [0, 1).
func (r *RandomState) RandomSample() float64 { return r.mt.Float64() }

// StandardExponential returns np.random.standard_exponential(): -log(1 - U).
func (r *RandomState) StandardExponential() float64 {
	return -math.Log(1.0 - r.mt.Float64())
}

// Exponential returns np.random.exponential(scale) (scale = 1/rate).
func (r *RandomState) Exponential(scale float64) float64 {
	return scale * r.StandardExponential()
}

// StandardNormal returns np.random.standard_normal(): the polar Box–Muller method;
// each accepted pair yields two values, the second cached for the next call.
func (r *RandomState) StandardNormal() float64 {
	if r.hasGauss {
		r.hasGauss = false
		g := r.gauss
		r.gauss = 0
		return g
	}
	var x1, x2, r2 float64
	for {
		x1 = 2*r.mt.Float64() - 1
		x2 = 2*r.mt.Float64() - 1
		r2 = x1*x1 + x2*x2
		if r2 < 1 && r2 != 0 {
			break
		}
	}
	f := math.Sqrt(-2 * math.Log(r2) / r2)
	r.gauss = f * x1
	r.hasGauss = true
	return f * x2
}

// Normal returns np.random.normal(loc, scale).
func (r *RandomState) Normal(loc, scale float64) float64 {
	return loc + scale*r.StandardNormal()
}

// StandardGamma returns np.random.standard_gamma(shape) by numpy's legacy algorithm.
func (r *RandomState) StandardGamma(shape float64) float64 {
	switch {
	case shape == 1:
		return r.StandardExponential()
	case shape == 0:
		return 0
	case shape < 1:
		for {
			u := r.mt.Float64()
			v := r.StandardExponential()
			if u <= 1-shape {
				x := math.Pow(u, 1/shape)
				if x <= v {
					return x
				}
			} else {
				y := -math.Log((1 - u) / shape)
				x := math.Pow(1-shape+shape*y, 1/shape)
				if x <= v+y {
					return x
				}
			}
		}
	}
	b := shape - 1.0/3.0
	c := 1 / math.Sqrt(9*b)
	for {
		var x, v float64
		for {
			x = r.StandardNormal()
			v = 1 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := r.mt.Float64()
		if u < 1-0.0331*(x*x)*(x*x) {
			return b * v
		}
		if math.Log(u) < 0.5*x*x+b*(1-v+math.Log(v)) {
			return b * v
		}
	}
}

// Gamma returns np.random.gamma(shape, scale): scale · StandardGamma(shape). vLLM's
// arrival gaps at request rate λ and burstiness b are Gamma(b, 1/(λ b)).
func (r *RandomState) Gamma(shape, scale float64) float64 {
	return scale * r.StandardGamma(shape)
}

// Randint returns np.random.randint(lo, hi): a uniform int64 in [lo, hi), drawn by
// numpy's legacy masked rejection (mask the draw to the next power of two minus one,
// retry while above the range). It panics if hi <= lo.
func (r *RandomState) Randint(lo, hi int64) int64 {
	if hi <= lo {
		panic(fmt.Sprintf("nprand: Randint(%d, %d): low >= high", lo, hi))
	}
	rng := uint64(hi) - uint64(lo) - 1
	if rng == 0 {
		return lo
	}
	mask := rng
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	mask |= mask >> 32
	if rng <= 0xFFFFFFFF {
		if rng == 0xFFFFFFFF {
			return lo + int64(r.mt.Uint32())
		}
		for {
			v := uint64(r.mt.Uint32()) & mask
			if v <= rng {
				return lo + int64(v)
			}
		}
	}
	if rng == 0xFFFFFFFFFFFFFFFF {
		return lo + int64(r.mt.Uint64())
	}
	for {
		v := r.mt.Uint64() & mask
		if v <= rng {
			return lo + int64(v)
		}
	}
}
