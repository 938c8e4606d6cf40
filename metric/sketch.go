package metric

import (
	"math"

	"github.com/perfgate/perfgate/record"
)

// SketchRelativeError is the bound on a [Sketch] quantile's relative error: for any p,
// |Sketch.Quantile(p) − Quantile(values, p)| <= SketchRelativeError × |Quantile(values, p)|
// when the two order statistics numpy interpolates between have the same sign (always,
// for latencies, which are ≥ 0). 0.1%.
const SketchRelativeError = 0.001

// The sketch's bucket i holds the positive values in (γ^(i-1), γ^i]; its
// representative 2γ^i/(γ+1) is within α of every value in it (DDSketch, Masson et al.,
// VLDB 2019). α is a little under SketchRelativeError, so rounding in the logarithm
// never pushes the error past it.
const sketchAlpha = SketchRelativeError * 0.99

var (
	sketchGamma    = (1 + sketchAlpha) / (1 - sketchAlpha)
	sketchLogGamma = math.Log(sketchGamma)
)

// sketchMinValue: smaller magnitudes count as zero (1e-9 ms is a femtosecond).
const sketchMinValue = 1e-9

// Sketch summarises a stream of values in memory that grows with the logarithm of
// their range, not their number: about 1,150 buckets (9 KB) per decade of values
// (latencies from 1 µs to 100 s in ms: 8 decades, ~74 KB at most). Count, mean,
// population std, min and max are exact; quantiles follow numpy's linear
// interpolation between order statistics that are each known to within
// [SketchRelativeError]. Sketches merge exactly ([Sketch.Merge]): merging the sketches
// of two streams gives the sketch of their concatenation.
//
// The zero value is an empty sketch. A Sketch is not safe for concurrent use.
type Sketch struct {
	pos, neg buckets
	zero     uint64
	n        uint64
	sum      float64
	mean, m2 float64 // Welford
	min, max float64
}

type buckets struct {
	off    int // index of counts[0]
	counts []uint64
}

func (b *buckets) add(i int, c uint64) {
	if len(b.counts) == 0 {
		b.off = i
		b.counts = append(b.counts, 0)
	}
	if i < b.off {
		grow := b.off - i
		nc := make([]uint64, len(b.counts)+grow, cap(b.counts)+grow+grow/2)
		copy(nc[grow:], b.counts)
		b.counts, b.off = nc, i
	}
	if need := i - b.off + 1; need > len(b.counts) {
		b.counts = append(b.counts, make([]uint64, need-len(b.counts))...)
	}
	b.counts[i-b.off] += c
}

func sketchIndex(x float64) int { return int(math.Ceil(math.Log(x) / sketchLogGamma)) }

func sketchValue(i int) float64 { return 2 * math.Exp(float64(i)*sketchLogGamma) / (sketchGamma + 1) }

// Add adds x to the sketch. NaN and ±Inf are ignored.
func (s *Sketch) Add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	switch {
	case x > sketchMinValue:
		s.pos.add(sketchIndex(x), 1)
	case x < -sketchMinValue:
		s.neg.add(sketchIndex(-x), 1)
	default:
		s.zero++
	}
	if s.n == 0 || x < s.min {
		s.min = x
	}
	if s.n == 0 || x > s.max {
		s.max = x
	}
	s.n++
	s.sum += x
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (x - s.mean)
}

// Merge adds every value of o to s.
func (s *Sketch) Merge(o *Sketch) {
	if o.n == 0 {
		return
	}
	for j, c := range o.pos.counts {
		if c > 0 {
			s.pos.add(o.pos.off+j, c)
		}
	}
	for j, c := range o.neg.counts {
		if c > 0 {
			s.neg.add(o.neg.off+j, c)
		}
	}
	s.zero += o.zero
	if s.n == 0 {
		s.min, s.max = o.min, o.max
	} else {
		s.min, s.max = min(s.min, o.min), max(s.max, o.max)
	}
	na, nb := float64(s.n), float64(o.n)
	d := o.mean - s.mean
	s.mean += d * nb / (na + nb)
	s.m2 += o.m2 + d*d*na*nb/(na+nb)
	s.n += o.n
	s.sum += o.sum
}

// Count returns the number of values added.
func (s *Sketch) Count() int { return int(s.n) }

// Bytes returns the sketch's approximate size in memory.
func (s *Sketch) Bytes() int { return 8*(cap(s.pos.counts)+cap(s.neg.counts)) + 112 }

// orderStat returns the estimate of the k-th smallest value (0-based): exact for the
// first and last, else its bucket's representative, clamped to [min, max].
func (s *Sketch) orderStat(k uint64) float64 {
	if k == 0 {
		return s.min
	}
	if k >= s.n-1 {
		return s.max
	}
	v := s.bucketValue(k)
	return min(max(v, s.min), s.max)
}

func (s *Sketch) bucketValue(k uint64) float64 {
	var seen uint64
	for j := len(s.neg.counts) - 1; j >= 0; j-- {
		seen += s.neg.counts[j]
		if k < seen {
			return -sketchValue(s.neg.off + j)
		}
	}
	seen += s.zero
	if k < seen {
		return 0
	}
	for j, c := range s.pos.counts {
		seen += c
		if k < seen {
			return sketchValue(s.pos.off + j)
		}
	}
	return s.max
}

// Quantile returns the p-quantile, p in [0, 1], by [Quantile]'s definition applied to
// the sketch's estimates of the order statistics (see [SketchRelativeError]). NaN for
// an empty sketch; it panics if p is outside [0, 1].
func (s *Sketch) Quantile(p float64) float64 {
	checkProb(p)
	if s.n == 0 {
		return math.NaN()
	}
	lo, t := rank(int(s.n), p)
	a := s.orderStat(uint64(lo))
	if uint64(lo) >= s.n-1 {
		return a
	}
	return lerp(a, s.orderStat(uint64(lo)+1), t)
}

// Stat summarises the sketch as a [record.Stat] labelled with unit: count, mean,
// population std, min and max exact, percentiles from [Sketch.Quantile].
func (s *Sketch) Stat(unit string) record.Stat {
	st := record.Stat{Unit: unit, Count: int(s.n)}
	if s.n == 0 {
		return st
	}
	st.Avg = s.sum / float64(s.n)
	st.Std = math.Sqrt(max(s.m2, 0) / float64(s.n))
	st.Min, st.Max = s.min, s.max
	setPercentiles(&st, s.Quantile)
	return st
}
