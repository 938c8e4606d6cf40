package distribution

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkKS1_1M(b *testing.B) {
	d := Normal{Mu: 0, Sigma: 1}
	x := draws(d, newRand(1), 1_000_000)
	b.ResetTimer()
	for b.Loop() {
		if r := KS1(x, d); r.N != len(x) {
			b.Fatal(r)
		}
	}
	b.ReportMetric(float64(len(x))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Msamples/s")
}

func BenchmarkKS2_100k(b *testing.B) {
	d := Exponential{Rate: 1}
	x, y := draws(d, newRand(1), 100_000), draws(d, newRand(2), 100_000)
	for b.Loop() {
		KS2(x, y)
	}
}

func BenchmarkMannWhitney_100k(b *testing.B) {
	d := Exponential{Rate: 1}
	x, y := draws(d, newRand(1), 100_000), draws(d, newRand(2), 100_000)
	for b.Loop() {
		MannWhitney(x, y)
	}
}

func BenchmarkFitLength_100k(b *testing.B) {
	l := Length{Dist: LogNormalFromMeanStd(512, 128), Max: 4096}
	x := lengths(l, newRand(1), 100_000)
	for b.Loop() {
		FitLength(x, l)
	}
}

func BenchmarkPercentile_1M(b *testing.B) {
	x := draws(Exponential{Rate: 1}, newRand(1), 1_000_000)
	for b.Loop() {
		Quantiles(x, 0.5, 0.9, 0.99)
	}
}

// BenchmarkRand measures sampling throughput per distribution (seeded PCG Src).
func BenchmarkRand(b *testing.B) {
	for _, d := range all() {
		d := WithSrc(d, rand.NewPCG(1, 1))
		b.Run(d.String(), func(b *testing.B) {
			s := 0.0
			for b.Loop() {
				s += d.Rand()
			}
			_ = s
		})
	}
	b.Run("normal nil Src (shared locked default)", func(b *testing.B) {
		d := Normal{Mu: 1, Sigma: 1}
		for b.Loop() {
			d.Rand()
		}
	})
	b.Run("Length lognormal:mean=512,stddev=128", func(b *testing.B) {
		l := Length{Dist: WithSrc(LogNormalFromMeanStd(512, 128), rand.NewPCG(1, 1)), Max: 4096}
		for b.Loop() {
			l.Rand()
		}
	})
}

func BenchmarkDetectableEffect(b *testing.B) {
	for b.Loop() {
		DetectableEffect(0.013, 8.3, 0.0025, 0.8)
	}
}

func BenchmarkRunsForEffect(b *testing.B) {
	for b.Loop() {
		RunsForEffect(0.03, 0.0488, 0.0025, 0.8, 1000)
	}
}
