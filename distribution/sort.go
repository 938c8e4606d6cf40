package distribution

import (
	"math"
	"slices"
)

// sortFloats sorts x ascending. Large slices use an LSD radix sort on the IEEE bits
// (about 3x faster than comparison sorting at a million values, which is what KS on a
// big recording spends its time on); NaNs are not supported (their position is
// unspecified either way).
func sortFloats(x []float64) {
	const radixMin = 1 << 12
	if len(x) < radixMin {
		slices.Sort(x)
		return
	}
	n := len(x)
	keys := make([]uint64, n)
	for i, v := range x {
		b := math.Float64bits(v)
		// flip so that unsigned order is float order: negatives invert all bits,
		// positives set the sign bit
		if b>>63 == 1 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		keys[i] = b
	}
	tmp := make([]uint64, n)
	const bitsPerPass = 11
	const buckets = 1 << bitsPerPass
	var count [buckets]int
	src, dst := keys, tmp
	for shift := uint(0); shift < 64; shift += bitsPerPass {
		clear(count[:])
		for _, k := range src {
			count[(k>>shift)&(buckets-1)]++
		}
		// skip a pass where every key has the same digit
		if count[(src[0]>>shift)&(buckets-1)] == n {
			continue
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range src {
			d := (k >> shift) & (buckets - 1)
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	for i, b := range src {
		if b>>63 == 1 {
			b &^= 1 << 63
		} else {
			b = ^b
		}
		x[i] = math.Float64frombits(b)
	}
}

// sortedCopy returns a sorted copy of x.
func sortedCopy(x []float64) []float64 {
	s := slices.Clone(x)
	sortFloats(s)
	return s
}
