package nprand

import (
	"fmt"
	"math/bits"
)

// SeedSequence constants (numpy/random/bit_generator.pyx).
const (
	initA    = 0x43b0d7e5
	multA    = 0x931e8875
	initB    = 0x8b51f9dd
	multB    = 0x58f38ded
	mixMultL = 0xca01f9dd
	mixMultR = 0x4973f715
	xshift   = 16
	poolSize = 4
)

// SeedSequence is numpy's SeedSequence for a non-negative integer entropy and no spawn
// key: it hashes the entropy into a pool of 4 32-bit words and generates seed words
// from it.
type SeedSequence struct {
	pool [poolSize]uint32
}

// NewSeedSequence returns numpy's SeedSequence(entropy) for an integer entropy.
func NewSeedSequence(entropy uint64) *SeedSequence {
	// numpy splits a Python int into 32-bit words, least significant first, with at
	// least one word.
	words := []uint32{uint32(entropy)}
	if hi := uint32(entropy >> 32); hi != 0 {
		words = append(words, hi)
	}
	return newSeedSequenceWords(words)
}

func newSeedSequenceWords(entropy []uint32) *SeedSequence {
	s := &SeedSequence{}
	hc := uint32(initA)
	hashmix := func(v uint32) uint32 {
		v ^= hc
		hc *= multA
		v *= hc
		v ^= v >> xshift
		return v
	}
	mix := func(x, y uint32) uint32 {
		r := mixMultL*x - mixMultR*y
		r ^= r >> xshift
		return r
	}
	for i := range s.pool {
		if i < len(entropy) {
			s.pool[i] = hashmix(entropy[i])
		} else {
			s.pool[i] = hashmix(0)
		}
	}
	for src := range s.pool {
		for dst := range s.pool {
			if src != dst {
				s.pool[dst] = mix(s.pool[dst], hashmix(s.pool[src]))
			}
		}
	}
	for src := poolSize; src < len(entropy); src++ {
		for dst := range s.pool {
			s.pool[dst] = mix(s.pool[dst], hashmix(entropy[src]))
		}
	}
	return s
}

// GenerateState returns n 32-bit words of seed material (generate_state(n, np.uint32)).
func (s *SeedSequence) GenerateState(n int) []uint32 {
	out := make([]uint32, n)
	hc := uint32(initB)
	for i := range out {
		v := s.pool[i%poolSize]
		v ^= hc
		hc *= multB
		v *= hc
		v ^= v >> xshift
		out[i] = v
	}
	return out
}

// GenerateState64 returns n 64-bit words (generate_state(n, np.uint64)): pairs of
// 32-bit words, low word first.
func (s *SeedSequence) GenerateState64(n int) []uint64 {
	w := s.GenerateState(2 * n)
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(w[2*i]) | uint64(w[2*i+1])<<32
	}
	return out
}

// PCG64 multiplier: 0x2360ed051fc65da44385df649fccf645.
const (
	pcgMultHi = 0x2360ed051fc65da4
	pcgMultLo = 0x4385df649fccf645
)

// PCG64 is numpy's PCG64 bit generator (PCG XSL-RR 128/64) with its 32-bit buffer.
type PCG64 struct {
	stateHi, stateLo uint64
	incHi, incLo     uint64
	hasUint32        bool
	uinteger         uint32
}

// NewPCG64 returns numpy's PCG64(seed): seeded from SeedSequence(seed).
func NewPCG64(seed uint64) *PCG64 {
	v := NewSeedSequence(seed).GenerateState64(4)
	return NewPCG64State(v[0], v[1], v[2], v[3])
}

// NewPCG64State seeds with pcg64_set_seed: initial state (stateHi, stateLo) and stream
// (incHi, incLo), as numpy does with the four words its SeedSequence generates.
func NewPCG64State(stateHi, stateLo, seqHi, seqLo uint64) *PCG64 {
	p := &PCG64{}
	// inc = seq << 1 | 1
	p.incHi = seqHi<<1 | seqLo>>63
	p.incLo = seqLo<<1 | 1
	p.step()
	var c uint64
	p.stateLo, c = bits.Add64(p.stateLo, stateLo, 0)
	p.stateHi, _ = bits.Add64(p.stateHi, stateHi, c)
	p.step()
	return p
}

func (p *PCG64) step() {
	hi, lo := bits.Mul64(p.stateLo, pcgMultLo)
	hi += p.stateHi*pcgMultLo + p.stateLo*pcgMultHi
	var c uint64
	lo, c = bits.Add64(lo, p.incLo, 0)
	hi, _ = bits.Add64(hi, p.incHi, c)
	p.stateHi, p.stateLo = hi, lo
}

// Uint64 advances the generator and returns the XSL-RR output of the new state.
func (p *PCG64) Uint64() uint64 {
	p.step()
	return bits.RotateLeft64(p.stateHi^p.stateLo, -int(p.stateHi>>58))
}

// Uint32 returns numpy's next_uint32: the low half of a fresh 64-bit output, buffering
// the high half, which the next Uint32 call returns without advancing.
func (p *PCG64) Uint32() uint32 {
	if p.hasUint32 {
		p.hasUint32 = false
		return p.uinteger
	}
	v := p.Uint64()
	p.hasUint32 = true
	p.uinteger = uint32(v >> 32)
	return uint32(v)
}

// Float64 returns numpy's next_double: (Uint64 >> 11) * 2^-53, in [0, 1).
func (p *PCG64) Float64() float64 {
	return float64(p.Uint64()>>11) * (1.0 / 9007199254740992.0)
}

// State returns the 128-bit state and increment, high words first, for debugging
// against numpy's bit_generator.state.
func (p *PCG64) State() (stateHi, stateLo, incHi, incLo uint64) {
	return p.stateHi, p.stateLo, p.incHi, p.incLo
}

// Generator is numpy's np.random.Generator over PCG64 (np.random.default_rng(seed)).
type Generator struct {
	bg *PCG64
}

// NewGenerator returns np.random.default_rng(seed).
func NewGenerator(seed uint64) *Generator { return &Generator{bg: NewPCG64(seed)} }

// BitGenerator returns the underlying PCG64.
func (g *Generator) BitGenerator() *PCG64 { return g.bg }

// Random returns rng.random(): a float64 in [0, 1).
func (g *Generator) Random() float64 { return g.bg.Float64() }

// Integers returns rng.integers(lo, hi): a uniform int64 in [lo, hi) drawn exactly as
// numpy draws it. It panics if hi <= lo, as numpy raises ValueError.
func (g *Generator) Integers(lo, hi int64) int64 {
	if hi <= lo {
		panic(fmt.Sprintf("nprand: Integers(%d, %d): low >= high", lo, hi))
	}
	rng := uint64(hi) - uint64(lo) - 1 // inclusive range, as numpy computes it
	return lo + int64(g.bounded(rng))
}

// IntegersN returns rng.integers(lo, hi, size=n); numpy's array path draws the same
// stream as n scalar calls.
func (g *Generator) IntegersN(lo, hi int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = g.Integers(lo, hi)
	}
	return out
}

// bounded returns a uniform value in [0, rng] (rng inclusive), numpy's
// random_bounded_uint64 with use_masked = false (Lemire).
func (g *Generator) bounded(rng uint64) uint64 {
	switch {
	case rng == 0:
		return 0 // one value: numpy draws nothing
	case rng <= 0xFFFFFFFF:
		if rng == 0xFFFFFFFF {
			return uint64(g.bg.Uint32())
		}
		return uint64(lemire32(g.bg, uint32(rng)))
	case rng == 0xFFFFFFFFFFFFFFFF:
		return g.bg.Uint64()
	}
	return lemire64(g.bg, rng)
}

func lemire32(bg *PCG64, rng uint32) uint32 {
	excl := rng + 1
	m := uint64(bg.Uint32()) * uint64(excl)
	left := uint32(m)
	if left < excl {
		threshold := (0xFFFFFFFF - rng) % excl
		for left < threshold {
			m = uint64(bg.Uint32()) * uint64(excl)
			left = uint32(m)
		}
	}
	return uint32(m >> 32)
}

func lemire64(bg *PCG64, rng uint64) uint64 {
	excl := rng + 1
	hi, lo := bits.Mul64(bg.Uint64(), excl)
	if lo < excl {
		threshold := (0xFFFFFFFFFFFFFFFF - rng) % excl
		for lo < threshold {
			hi, lo = bits.Mul64(bg.Uint64(), excl)
		}
	}
	return hi
}
