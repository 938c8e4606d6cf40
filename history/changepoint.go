package history

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Detection configures change-point detection over a series. The zero value uses the
// defaults.
//
// The method is Hunter's (Fleming et al., ICPE 2023), as Apache Otava runs it:
//  1. Split: slide a window of Window points over the series (half a window at a
//     time). In each window, E-Divisive means (Matteson and James) picks the split
//     (τ, κ) that maximises the energy-distance statistic Q̂ over every interval between
//     the change points found so far; a t-test between the points either side decides
//     whether it is one, at a relaxed level (10 × MaxP). Found points are "weak".
//  2. Merge: over the whole series, each weak point is tested against its neighbours'
//     segments; the weakest (largest p, or smallest magnitude once every p passes) is
//     dropped and its neighbours retested, until every point has p < MaxP and a
//     magnitude above MinMagnitude.
//
// Where perfgate differs: the t-test is Welch's (unequal variances) rather than
// Student's, and every segment has at least MinSegment points. A single outlier then
// does not make a change point: a segment holding it has a wide variance and few
// degrees of freedom. Both are deterministic: no permutations, no random numbers.
type Detection struct {
	// Window is the sliding window's length in points (default 30).
	Window int
	// MaxP is the significance level a change point must reach (default 0.001).
	MaxP float64
	// MinMagnitude is the relative change a change point must exceed (default 0:
	// significance alone decides; `history check` applies its own margin).
	MinMagnitude float64
	// MinSegment is the fewest points on either side of a change point (default 3).
	MinSegment int
}

// Defaults of [Detection].
const (
	DefaultWindow     = 30
	DefaultMaxP       = 0.001
	DefaultMinSegment = 3
)

func (d Detection) withDefaults() Detection {
	if d.Window <= 0 {
		d.Window = DefaultWindow
	}
	if d.MaxP <= 0 {
		d.MaxP = DefaultMaxP
	}
	if d.MinSegment <= 0 {
		d.MinSegment = DefaultMinSegment
	}
	d.MinSegment = max(d.MinSegment, 2) // a t-test needs a variance on each side
	d.Window = max(d.Window, 2*d.MinSegment)
	return d
}

// weakP is the split step's relaxed level (Otava's: 10× below 0.05, 2× below 0.5).
func (d Detection) weakP() float64 {
	switch {
	case d.MaxP < 0.05:
		return d.MaxP * 10
	case d.MaxP < 0.5:
		return d.MaxP * 2
	}
	return d.MaxP
}

// ChangePoint is a point where a series' level changes.
type ChangePoint struct {
	// Index is the first point after the change (0-based in the series).
	Index int `json:"index"`
	// Before and After are the means of the segments on either side (to the previous
	// and the next change point), StdBefore and StdAfter their standard deviations.
	Before    float64 `json:"mean_before"`
	After     float64 `json:"mean_after"`
	StdBefore float64 `json:"std_before"`
	StdAfter  float64 `json:"std_after"`
	// P is the Welch t-test's two-sided p-value between the two segments.
	P float64 `json:"pvalue"`
}

// Change is the relative change After/Before - 1 (0 when Before is 0).
func (c ChangePoint) Change() float64 {
	if c.Before == 0 {
		return 0
	}
	return c.After/c.Before - 1
}

// Magnitude is the larger of the forward and backward relative changes, as Otava
// measures a change's size: a halving and a doubling are the same magnitude.
func (c ChangePoint) Magnitude() float64 {
	f := math.Abs(c.Change())
	if c.After != 0 {
		f = max(f, math.Abs(c.Before/c.After-1))
	}
	return f
}

// State is what [DetectIncremental] keeps between calls: the series length it saw,
// the ID of its last result, and the weak change points of the split step.
type State struct {
	N      int   `json:"n"`
	LastID int64 `json:"last_id,omitempty"`
	Weak   []int `json:"weak"`
	// Config is the detection settings the weak points were found with ([Detection]);
	// other settings start over.
	Config string `json:"config"`
}

// key identifies the settings the split step depends on.
func (d Detection) key() string {
	return fmt.Sprintf("w%d p%g s%d", d.Window, d.weakP(), d.MinSegment)
}

// Detect returns the change points of x, in order.
func Detect(x []float64, d Detection) []ChangePoint {
	cps, _ := DetectIncremental(x, d, State{})
	return cps
}

// DetectIncremental is [Detect] that reuses the split step of a previous call on a
// prefix of x (prev, with prev.N ≤ len(x)): only the tail of the series, from a few
// windows before its end, is split again, so adding one point costs a few windows,
// not the whole history (Otava's incremental update). The merge step runs over the
// whole series (linear in its length per change point). A zero prev, or one that
// does not fit x, computes everything.
func DetectIncremental(x []float64, d Detection, prev State) ([]ChangePoint, State) {
	d = d.withDefaults()
	n := len(x)
	start := 0
	var weak []int
	if prev.N > 0 && prev.N <= n && prev.Config == d.key() {
		added := n - prev.N
		step := d.Window / 2
		maxStart := n - (added/d.Window+4)*d.Window
		for _, c := range prev.Weak {
			if c < maxStart {
				start = c
			}
		}
		for s := 0; s < n; s += step {
			if s < maxStart && start < s {
				start = s
			}
		}
		for _, c := range prev.Weak {
			if c < start {
				weak = append(weak, c)
			}
		}
	}
	weak = append(weak, split(x, d, start)...)
	slices.Sort(weak)
	weak = slices.Compact(weak)
	st := State{N: n, Weak: slices.Clone(weak), Config: d.key()}
	return merge(x, d, weak), st
}

// split runs the split step from start to the end of x and returns the weak change
// points it finds.
func split(x []float64, d Detection, start int) []int {
	var found []int
	step := d.Window / 2
	p := d.weakP()
	for start < len(x) {
		end := min(start+d.Window, len(x))
		cps := edivisive(x[start:end], d.MinSegment, p)
		last := 0
		for _, c := range cps {
			found = append(found, start+c)
			last = max(last, start+c)
		}
		start = max(last, start+step)
	}
	return found
}

// edivisive finds change points in w hierarchically: the best split over every
// interval between the points found so far, kept while its t-test passes at level p.
func edivisive(w []float64, minSeg int, p float64) []int {
	n := len(w)
	if n < 2*minSeg {
		return nil
	}
	// pre[k][j] = Σ_{i<j} |w_i - w_k|: every sum of distances to one point in O(1).
	pre := make([][]float64, n)
	for k := range n {
		pre[k] = make([]float64, n+1)
		for j := range n {
			pre[k][j+1] = pre[k][j] + math.Abs(w[j]-w[k])
		}
	}
	var cps []int
	for {
		bounds := append(append([]int{0}, cps...), n)
		best, bestQ, bs, be := -1, math.Inf(-1), 0, 0
		for i := 0; i+1 < len(bounds); i++ {
			s, e := bounds[i], bounds[i+1]
			if tau, q := bestSplit(pre, s, e, minSeg); tau >= 0 && q > bestQ {
				best, bestQ, bs, be = tau, q, s, e
			}
		}
		if best < 0 || welch(w[bs:best], w[best:be]) >= p {
			return cps
		}
		cps = append(cps, best)
		slices.Sort(cps)
	}
}

// bestSplit maximises Q̂(w[s:τ], w[τ:κ]) over s+minSeg ≤ τ, τ+minSeg ≤ κ ≤ e, with
//
//	Q̂(X, Y) = 2/(n+m) Σ|X_i-Y_j| - 2m/((n+m)(n-1)) Σ_{i<k}|X_i-X_k| - 2n/((n+m)(m-1)) Σ_{j<k}|Y_j-Y_k|
//
// (n = |X|, m = |Y|; Matteson and James's energy statistic with α = 1, scaled by
// nm/(n+m)). It returns τ and Q̂, or -1 when the interval is too short.
func bestSplit(pre [][]float64, s, e, minSeg int) (int, float64) {
	best, bestQ := -1, math.Inf(-1)
	wx := 0.0 // Σ_{s≤i<k<τ} |w_i - w_k|
	for tau := s + 1; tau <= e-minSeg; tau++ {
		k := tau - 1
		wx += pre[k][k] - pre[k][s]
		if tau-s < minSeg {
			continue
		}
		between, wy := 0.0, 0.0
		for kappa := tau + 1; kappa <= e; kappa++ {
			j := kappa - 1
			between += pre[j][tau] - pre[j][s]
			wy += pre[j][j] - pre[j][tau]
			if kappa-tau < minSeg {
				continue
			}
			nx, ny := float64(tau-s), float64(kappa-tau)
			q := 2/(nx+ny)*between - 2*ny/((nx+ny)*(nx-1))*wx - 2*nx/((nx+ny)*(ny-1))*wy
			if q > bestQ {
				best, bestQ = tau, q
			}
		}
	}
	return best, bestQ
}

// merge is the merge step over the whole series: weak points are tested against
// their neighbours' segments and the weakest dropped until all pass.
func merge(x []float64, d Detection, weak []int) []ChangePoint {
	cps := make([]ChangePoint, len(weak))
	for i, w := range weak {
		cps[i].Index = w
	}
	// retest recomputes change point i against its neighbours' segments.
	retest := func(i int) {
		if i < 0 || i >= len(cps) {
			return
		}
		lo, hi := 0, len(x)
		if i > 0 {
			lo = cps[i-1].Index
		}
		if i+1 < len(cps) {
			hi = cps[i+1].Index
		}
		cps[i] = segmentStats(x[lo:cps[i].Index], x[cps[i].Index:hi], cps[i].Index, d.MinSegment)
	}
	for i := range cps {
		retest(i)
	}
	for len(cps) > 0 {
		weakest := 0
		for i, c := range cps {
			if c.P > cps[weakest].P {
				weakest = i
			}
		}
		if cps[weakest].P < d.MaxP {
			for i, c := range cps {
				if c.Magnitude() < cps[weakest].Magnitude() {
					weakest = i
				}
			}
			if cps[weakest].Magnitude() > d.MinMagnitude {
				return cps
			}
		}
		// Dropping a point changes only its neighbours' segments.
		cps = slices.Delete(cps, weakest, weakest+1)
		retest(weakest - 1)
		retest(weakest)
	}
	return cps
}

// segmentStats describes the change between left and right (p = 1 when a side is
// shorter than minSeg).
func segmentStats(left, right []float64, index, minSeg int) ChangePoint {
	c := ChangePoint{Index: index, P: 1}
	c.Before, c.StdBefore = meanStd(left)
	c.After, c.StdAfter = meanStd(right)
	if len(left) >= minSeg && len(right) >= minSeg {
		c.P = welch(left, right)
	}
	return c
}

// meanStd returns the mean and the sample standard deviation (n-1) of x.
func meanStd(x []float64) (float64, float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	if len(x) < 2 {
		return m, 0
	}
	ss := 0.0
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(x)-1))
}

// welch is the two-sided p-value of Welch's t-test between a and b (each ≥ 2 points).
// Two constant samples: 0 when their means differ, 1 when they do not.
func welch(a, b []float64) float64 {
	if len(a) < 2 || len(b) < 2 {
		return 1
	}
	ma, sa := meanStd(a)
	mb, sb := meanStd(b)
	va, vb := sa*sa/float64(len(a)), sb*sb/float64(len(b))
	se := math.Sqrt(va + vb)
	if se == 0 || math.IsNaN(se) {
		if ma == mb {
			return 1
		}
		return 0
	}
	t := math.Abs(ma-mb) / se
	df := (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
}
