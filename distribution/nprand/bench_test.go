package nprand

import "testing"

func BenchmarkIntegers32(b *testing.B) {
	g := NewGenerator(0)
	for b.Loop() {
		g.Integers(512, 1537)
	}
}

func BenchmarkIntegers64(b *testing.B) {
	g := NewGenerator(0)
	for b.Loop() {
		g.Integers(0, 1<<40)
	}
}

func BenchmarkRandom(b *testing.B) {
	g := NewGenerator(0)
	for b.Loop() {
		g.Random()
	}
}

func BenchmarkRandomStateGamma(b *testing.B) {
	r := NewRandomState(0)
	for b.Loop() {
		r.Gamma(0.5, 0.2)
	}
}

func BenchmarkRandomStateRandint(b *testing.B) {
	r := NewRandomState(0)
	for b.Loop() {
		r.Randint(1, 1025)
	}
}
