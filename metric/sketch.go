package metric

import (
	"math"
	"sync/atomic"
	"unsafe"

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
	// The last magnitude indexed and its bucket: runs add the same value over and over
	// (token counts, a reused connection's 1), which then costs no index. lastX is 0
	// until then, which no indexed magnitude (> sketchMinValue) equals.
	lastX float64
	lastI int
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

// sketchIndexLog is the definition of a value's bucket: i with γ^(i-1) < x <= γ^i as
// the float64 logarithm computes it. [sketchIndex] returns the same, faster.
func sketchIndexLog(x float64) int { return int(math.Ceil(math.Log(x) / sketchLogGamma)) }

// sketchIndex returns sketchIndexLog(x) for x > 0 without a logarithm when x is within
// [2^edgeMinExp, 2^edgeMaxExp) (1e-6 to 1.7e10: latencies in ms, counts, rates): an
// estimate from x's exponent and a table of log2 over its mantissa, within one bucket
// of the true index, is corrected against the exact lower edges of the buckets around
// it (edges.at). The edges are found with sketchIndexLog itself, so the index is the
// same for every value (TestSketchIndexExact). A third of the collector's metric cost
// per record was math.Log.
func sketchIndex(x float64) int {
	b := math.Float64bits(x)
	e := int(b>>52&0x7ff) - 1023
	if e < edgeMinExp || e >= edgeMaxExp {
		return sketchIndexLog(x)
	}
	t := float64(e)*sketchLog2Buckets + cellBuckets[b>>(52-cellBits)&(1<<cellBits-1)]
	i := int(t) // truncates toward zero: ceil for t < 0
	if t > float64(i) {
		i++
	}
	for x >= edges.at(i+1) {
		i++
	}
	for x < edges.at(i) {
		i--
	}
	return i
}

// The exact bucket edges cover x in [2^edgeMinExp, 2^edgeMaxExp).
const (
	edgeMinExp = -20
	edgeMaxExp = 34
	cellBits   = 10 // mantissa cells of 2^-10 (under half a bucket: the estimate is at most one bucket low)
)

var (
	// sketchLog2Buckets converts log2(x) to buckets: ln 2 / ln γ.
	sketchLog2Buckets = math.Ln2 / sketchLogGamma
	// cellBuckets[k] = log2(1 + k/2^cellBits) in buckets: the index of the least
	// value of a mantissa cell, but for the exponent's part and the rounding up.
	cellBuckets = func() (t [1 << cellBits]float64) {
		for k := range t {
			t[k] = math.Log2(1+float64(k)/(1<<cellBits)) * sketchLog2Buckets
		}
		return t
	}()
	edges = newEdgeTable(sketchIndexLog(math.Ldexp(1, edgeMinExp))-1, sketchIndexLog(math.Ldexp(1, edgeMaxExp))+2)
)

// edgeTable holds the lower edge of buckets lo..hi: the least float64 x with
// sketchIndexLog(x) >= i. Each edge is found the first time it is needed (a run
// touches a few hundred buckets of the ~19,000) and kept; the table is shared by every
// sketch, safely from any goroutine (each entry is written whole, always with the same
// value).
type edgeTable struct {
	lo    int
	edges []atomic.Uint64 // Float64bits of the edge; 0 = not found yet
}

func newEdgeTable(lo, hi int) *edgeTable {
	return &edgeTable{lo: lo, edges: make([]atomic.Uint64, hi-lo+1)}
}

// at returns bucket i's lower edge. sketchIndex asks only for buckets inside the table.
func (t *edgeTable) at(i int) float64 {
	p := &t.edges[i-t.lo]
	if b := p.Load(); b != 0 {
		return math.Float64frombits(b)
	}
	b := findEdge(i)
	p.Store(b)
	return math.Float64frombits(b)
}

// findEdge returns the Float64bits of the least positive x with sketchIndexLog(x) >= i,
// searching the float64s around γ^(i-1) (sketchIndexLog never decreases as x grows).
func findEdge(i int) uint64 {
	c := math.Float64bits(math.Exp(float64(i-1) * sketchLogGamma))
	lo, hi := c, c // lo: index < i; hi: index >= i
	for step := uint64(1); sketchIndexLog(math.Float64frombits(lo)) >= i; step *= 2 {
		lo = c - step
	}
	for step := uint64(1); sketchIndexLog(math.Float64frombits(hi)) < i; step *= 2 {
		hi = c + step
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if sketchIndexLog(math.Float64frombits(mid)) >= i {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func sketchValue(i int) float64 { return 2 * math.Exp(float64(i)*sketchLogGamma) / (sketchGamma + 1) }

// Add adds x to the sketch. NaN and ±Inf are ignored.
func (s *Sketch) Add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	switch {
	case x > sketchMinValue:
		s.pos.add(s.index(x), 1)
	case x < -sketchMinValue:
		s.neg.add(s.index(-x), 1)
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

// index is sketchIndex(x), remembered for the next value.
func (s *Sketch) index(x float64) int {
	if x == s.lastX {
		return s.lastI
	}
	i := sketchIndex(x)
	s.lastX, s.lastI = x, i
	return i
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
func (s *Sketch) Bytes() int {
	return 8*(cap(s.pos.counts)+cap(s.neg.counts)) + int(unsafe.Sizeof(Sketch{}))
}

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
