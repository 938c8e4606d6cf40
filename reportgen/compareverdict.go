package reportgen

import (
	"fmt"
	"slices"

	"github.com/perfgate/perfgate/distribution"
)

// The comparison verdicts, strongest first.
const (
	// Identical: both recordings hold the same multiset of input lengths and the same
	// multiset of output lengths (what two runs with equal seeds must give).
	Identical = "identical"
	// SameDistribution: not identical, but the two-sample Kolmogorov–Smirnov tests on
	// ISL and on OSL do not reject one distribution at the stated level.
	SameDistribution = "same distribution"
	// Different: a KS test rejects one distribution for ISL or OSL.
	Different = "different"
)

// CompareVerdict is what `perfgate compare` concludes about two recordings.
type CompareVerdict struct {
	// Kind is Identical, SameDistribution or Different.
	Kind string
	// Alpha is the family-wise level: each of the two KS tests runs at Alpha/2
	// (Bonferroni), so two recordings of one workload are called Different with
	// probability at most Alpha.
	Alpha float64
	// ISL and OSL are the two-sample KS results.
	ISL, OSL distribution.KSResult
	// Text is the one-line verdict with its evidence.
	Text string
}

// Holds reports whether the verdict meets want: Identical needs Identical;
// SameDistribution (or "same") accepts Identical too.
func (v CompareVerdict) Holds(want string) bool {
	switch want {
	case Identical:
		return v.Kind == Identical
	default:
		return v.Kind != Different
	}
}

// Compare decides whether a and b are identical, the same distribution at level alpha
// (0 = 0.05), or different. Both need at least one request.
func Compare(a, b Recording, alpha float64) CompareVerdict {
	if alpha == 0 {
		alpha = 0.05
	}
	v := CompareVerdict{Alpha: alpha, ISL: distribution.KS2(ints(a.ISL), ints(b.ISL)), OSL: distribution.KS2(ints(a.OSL), ints(b.OSL))}
	same := func(x, y []int) bool {
		if len(x) != len(y) {
			return false
		}
		xs, ys := slices.Clone(x), slices.Clone(y)
		slices.Sort(xs)
		slices.Sort(ys)
		return slices.Equal(xs, ys)
	}
	ev := fmt.Sprintf("ISL KS D=%.4f p=%.3g, OSL KS D=%.4f p=%.3g; n=%d vs %d", v.ISL.Statistic, v.ISL.PValue, v.OSL.Statistic, v.OSL.PValue, len(a.ISL), len(b.ISL))
	switch {
	case same(a.ISL, b.ISL) && same(a.OSL, b.OSL):
		v.Kind = Identical
		v.Text = fmt.Sprintf("identical: %s and %s hold the same %d input lengths and the same output lengths", a.Label, b.Label, len(a.ISL))
	case v.ISL.PValue >= alpha/2 && v.OSL.PValue >= alpha/2:
		v.Kind = SameDistribution
		v.Text = fmt.Sprintf("same distribution at alpha=%g (each KS test at %g): %s", alpha, alpha/2, ev)
	default:
		v.Kind = Different
		what := "ISL"
		switch {
		case v.ISL.PValue < alpha/2 && v.OSL.PValue < alpha/2:
			what = "ISL and OSL"
		case v.OSL.PValue < alpha/2:
			what = "OSL"
		}
		v.Text = fmt.Sprintf("different: %s of %s and %s differ at alpha=%g (each KS test at %g): %s", what, a.Label, b.Label, alpha, alpha/2, ev)
	}
	return v
}
