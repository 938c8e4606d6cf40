package distribution

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mathext"
)

// MinExpected is the smallest expected count per bin in [FitDiscrete] and [FitLength]:
// adjacent values are merged until each bin expects at least this many observations,
// the usual condition for the chi-square approximation.
const MinExpected = 5

// FitResult is the outcome of a goodness-of-fit test of a sample against a
// (usually discrete) target: [FitLength], [DiscreteKS], [FitDiscrete], [ChiSquare].
type FitResult struct {
	Method    string  // "discrete KS, Monte Carlo p (999 resamples)" or "chi-square"
	Statistic float64 // KS D, or Σ (observed - expected)² / expected
	PValue    float64
	N         int    // observations
	Target    string // the hypothesised distribution, if known

	// Chi-square: degrees of freedom (bins - 1 - ddof), the number of bins, and the bin
	// contributing most to the statistic: the values it covers (WorstLo, WorstHi]
	// (-Inf/+Inf for the open end bins), its observed and expected counts.
	DF, Bins           int
	WorstLo, WorstHi   float64
	Observed, Expected float64

	// Discrete KS: where the largest gap is, the sample's ECDF and the target's CDF
	// there.
	At, CDF1, CDF2 float64

	// Observations the target gives probability 0 (a length above Max); any makes
	// the result an outright rejection with PValue 0.
	Impossible        int
	ImpossibleExample float64
}

// Reject reports whether the fit is rejected at level alpha (p < alpha).
func (r FitResult) Reject(alpha float64) bool { return r.PValue < alpha }

// String is a one-line verdict for a failure message.
func (r FitResult) String() string {
	var b strings.Builder
	if r.Impossible > 0 {
		fmt.Fprintf(&b, "%s p=0: %d of %d values are ones the target never produces, e.g. %g", r.Method, r.Impossible, r.N, r.ImpossibleExample)
		if r.Target != "" {
			fmt.Fprintf(&b, "; target %s", r.Target)
		}
		return b.String()
	}
	if r.Bins == 0 && r.DF == 0 && r.Method != "chi-square" {
		fmt.Fprintf(&b, "%s D=%.4g p=%.4g (n=%d)", r.Method, r.Statistic, r.PValue, r.N)
		if r.Target != "" {
			fmt.Fprintf(&b, " vs %s", r.Target)
		}
		fmt.Fprintf(&b, "; largest gap at x=%g: sample CDF %.4f, target CDF %.4f", r.At, r.CDF1, r.CDF2)
		return b.String()
	}
	fmt.Fprintf(&b, "chi-square=%.4g p=%.4g (n=%d, %d bins, df=%d)", r.Statistic, r.PValue, r.N, r.Bins, r.DF)
	if r.Target != "" {
		fmt.Fprintf(&b, " vs %s", r.Target)
	}
	if r.Bins > 0 {
		fmt.Fprintf(&b, "; worst bin %s: observed %g, expected %.4g", binLabel(r.WorstLo, r.WorstHi), r.Observed, r.Expected)
	}
	return b.String()
}

func binLabel(lo, hi float64) string {
	switch {
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		return "(all)"
	case math.IsInf(lo, -1):
		return fmt.Sprintf("x <= %g", hi)
	case math.IsInf(hi, 1):
		return fmt.Sprintf("x > %g", lo)
	}
	return fmt.Sprintf("(%g, %g]", lo, hi)
}

// ChiSquare is Pearson's chi-square test of observed counts against expected counts,
// as scipy.stats.chisquare(observed, expected, ddof): statistic Σ (o-e)²/e, p-value
// from χ² with len-1-ddof degrees of freedom. Expected counts are rescaled to the
// observed total (scipy instead requires equal totals). It panics if the slices differ
// in length, have fewer than 2 entries, or an expected count is <= 0.
func ChiSquare(observed, expected []float64, ddof int) FitResult {
	if len(observed) != len(expected) || len(observed) < 2 {
		panic(fmt.Sprintf("distribution: ChiSquare: want two equal-length count slices (>= 2), got %d and %d", len(observed), len(expected)))
	}
	so, se := 0.0, 0.0
	for i := range observed {
		if !(expected[i] > 0) {
			panic(fmt.Sprintf("distribution: ChiSquare: expected count %d is %g, want > 0", i, expected[i]))
		}
		so += observed[i]
		se += expected[i]
	}
	r := FitResult{Method: "chi-square", N: int(math.Round(so)), Bins: len(observed), DF: len(observed) - 1 - ddof}
	worst := -1.0
	for i := range observed {
		e := expected[i]
		if so != se {
			e *= so / se
		}
		c := (observed[i] - e) * (observed[i] - e) / e
		r.Statistic += c
		if c > worst {
			worst = c
			r.WorstLo, r.WorstHi = float64(i)-1, float64(i)
			r.Observed, r.Expected = observed[i], e
		}
	}
	r.PValue = chi2SF(r.Statistic, r.DF)
	return r
}

func chi2SF(x float64, df int) float64 {
	if df <= 0 {
		return math.NaN()
	}
	if x <= 0 {
		return 1
	}
	return mathext.GammaIncRegComp(float64(df)/2, x/2)
}

// FitDiscrete tests whether sample fits d with a chi-square test on bins of d's values
// chosen so that each expects at least [MinExpected] observations (and, for large
// samples, about 2n^(2/5) bins in all, so a shift still moves several bins): bin edges
// are quantiles of d, so a discrete d is binned at its atoms and a continuous one into
// near-equiprobable bins. If d implements Prober, any observed value with probability 0
// under d (a length outside [Min, Max], a non-integer length) makes the result an
// outright rejection (PValue 0). With fewer than 2 bins (a degenerate target) PValue
// is 1. It panics on an empty sample.
func FitDiscrete(sample []float64, d Distribution) FitResult {
	n := len(sample)
	if n == 0 {
		panic("distribution: FitDiscrete of an empty sample")
	}
	x := slices.Clone(sample)
	sortFloats(x)
	r := FitResult{Method: "chi-square", N: n, Target: d.String()}
	if pr, ok := d.(Prober); ok {
		for i, v := range x {
			if i > 0 && v == x[i-1] {
				continue
			}
			if pr.Prob(v) == 0 && isAtomless(d, v) {
				c := 0
				for j := i; j < n && x[j] == v; j++ {
					c++
				}
				if r.Impossible == 0 {
					r.ImpossibleExample = v
				}
				r.Impossible += c
			}
		}
		if r.Impossible > 0 {
			r.PValue = 0
			r.Statistic = math.Inf(1)
			return r
		}
	}
	// Bin edges: each bin (edge[j-1], edge[j]] holds mass >= step.
	nf := float64(n)
	maxBins := math.Ceil(2 * math.Pow(nf, 0.4))
	step := math.Max(MinExpected/nf, 1/maxBins)
	var edges []float64 // upper edges; the last bin is open above
	var cdfs []float64
	prevC := 0.0
	for {
		target := prevC + step
		if target >= 1 {
			break
		}
		e := d.Quantile(target)
		c := d.CDF(e)
		if 1-c < step-1e-12 { // the remainder would be too small a bin: stop
			break
		}
		if len(edges) > 0 && e <= edges[len(edges)-1] {
			break // no progress (numerical): stop binning
		}
		edges = append(edges, e)
		cdfs = append(cdfs, c)
		prevC = c
	}
	bins := len(edges) + 1
	r.Bins = bins
	if bins < 2 {
		r.PValue = 1
		r.DF = 0
		return r
	}
	r.DF = bins - 1
	worst := -1.0
	lo := 0
	prev := 0.0
	for j := 0; j < bins; j++ {
		var hiIdx int
		var mass float64
		if j < len(edges) {
			hiIdx, _ = slices.BinarySearchFunc(x, edges[j], func(a, b float64) int {
				if a <= b {
					return -1
				}
				return 1
			})
			mass = cdfs[j] - prev
			prev = cdfs[j]
		} else {
			hiIdx = n
			mass = 1 - prev
		}
		obs := float64(hiIdx - lo)
		exp := nf * mass
		c := (obs - exp) * (obs - exp) / exp
		r.Statistic += c
		if c > worst {
			worst = c
			r.WorstLo, r.WorstHi = math.Inf(-1), math.Inf(1)
			if j > 0 {
				r.WorstLo = edges[j-1]
			}
			if j < len(edges) {
				r.WorstHi = edges[j]
			}
			r.Observed, r.Expected = obs, exp
		}
		lo = hiIdx
	}
	r.PValue = chi2SF(r.Statistic, r.DF)
	return r
}

// isAtomless reports whether v carries no probability under d, also for continuous
// distributions whose Prob would be a density: it checks the CDF has no jump at v and
// no mass around it.
func isAtomless(d Distribution, v float64) bool {
	below := d.CDF(math.Nextafter(v, math.Inf(-1)))
	at := d.CDF(v)
	if at > below {
		return false
	}
	// a point with no jump: impossible only if no mass in a neighbourhood either
	eps := math.Max(1e-9, 1e-9*math.Abs(v))
	return d.CDF(v+eps)-d.CDF(v-eps) == 0
}
