package distribution

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// ExactKSMaxN is the largest sample size for which [KS1] and [KS2] compute exact
// p-values (SciPy's `method="auto"` threshold for ks_2samp; kstest always uses its
// exact kstwo, which we follow up to this size). Larger samples use the asymptotic
// Kolmogorov distribution.
const ExactKSMaxN = 10000

// KSResult is the outcome of a Kolmogorov–Smirnov test.
type KSResult struct {
	Statistic float64 // D, the largest vertical gap between the two CDFs
	PValue    float64 // P(D >= Statistic) under the null hypothesis
	N, M      int     // sample sizes; M = 0 for the one-sample test
	At        float64 // the x where the largest gap is
	// CDF values at At: for KS1 the sample's ECDF (its left limit when the gap is
	// below the model) and the model's CDF; for KS2 the two samples' ECDFs.
	CDF1, CDF2 float64
	Method     string // "exact" or "asymp"
	Model      string // the hypothesised distribution (KS1), if it has a String method
}

// Reject reports whether the null hypothesis is rejected at level alpha (p < alpha).
func (r KSResult) Reject(alpha float64) bool { return r.PValue < alpha }

// String is a one-line verdict fit for a failure message, e.g.
// "KS D=0.0810 p=0.0003 (n=1200, exact); largest gap at x=0.031: sample CDF 0.512, model CDF 0.431".
func (r KSResult) String() string {
	var b strings.Builder
	if r.M == 0 {
		fmt.Fprintf(&b, "KS D=%.4g p=%.4g (n=%d, %s)", r.Statistic, r.PValue, r.N, r.Method)
		if r.Model != "" {
			fmt.Fprintf(&b, " vs %s", r.Model)
		}
		fmt.Fprintf(&b, "; largest gap at x=%.6g: sample CDF %.4f, model CDF %.4f", r.At, r.CDF1, r.CDF2)
	} else {
		fmt.Fprintf(&b, "KS two-sample D=%.4g p=%.4g (n=%d, m=%d, %s); largest gap at x=%.6g: CDF %.4f vs %.4f",
			r.Statistic, r.PValue, r.N, r.M, r.Method, r.At, r.CDF1, r.CDF2)
	}
	return b.String()
}

// KS1 tests whether sample comes from the continuous distribution d, two-sided, as
// scipy.stats.kstest(sample, cdf) does: exact p-value (SciPy's kstwo) for
// n <= [ExactKSMaxN], the asymptotic Kolmogorov distribution above. For a discrete d
// (token lengths) this test is conservative; use [FitLength] or [DiscreteKS].
// It panics if sample is empty (a programmer error: check before testing).
func KS1(sample []float64, d CDFer) KSResult {
	n := len(sample)
	if n == 0 {
		panic("distribution: KS1 of an empty sample")
	}
	x := slices.Clone(sample)
	sortFloats(x)
	nf := float64(n)
	var dp, dm float64 = math.Inf(-1), math.Inf(-1)
	var ip, im int
	var cp, cm float64
	for i, v := range x {
		c := d.CDF(v)
		if g := float64(i+1)/nf - c; g > dp {
			dp, ip, cp = g, i, c
		}
		if g := c - float64(i)/nf; g > dm {
			dm, im, cm = g, i, c
		}
	}
	r := KSResult{N: n}
	if s, ok := d.(fmt.Stringer); ok {
		r.Model = s.String()
	}
	if dp > dm {
		r.Statistic, r.At, r.CDF1, r.CDF2 = dp, x[ip], float64(ip+1)/nf, cp
	} else {
		r.Statistic, r.At, r.CDF1, r.CDF2 = dm, x[im], float64(im)/nf, cm
	}
	if n <= ExactKSMaxN {
		r.Method = "exact"
		r.PValue = KolmogorovSF(n, r.Statistic)
	} else {
		r.Method = "asymp"
		r.PValue = KolmogorovAsympSF(r.Statistic * math.Sqrt(nf))
	}
	return r
}

// KS2 is the two-sample Kolmogorov–Smirnov test (two-sided), as scipy.stats.ks_2samp
// with method="auto": D is computed exactly with ties (ECDFs compared at every
// observed value), the p-value is exact (lattice-path counting, Hodges 1958) when both
// samples have at most [ExactKSMaxN] values and asymptotic otherwise. The exact
// p-value assumes no ties; with many ties it is conservative.
// It panics if either sample is empty.
func KS2(a, b []float64) KSResult {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		panic("distribution: KS2 of an empty sample")
	}
	x := slices.Clone(a)
	y := slices.Clone(b)
	sortFloats(x)
	sortFloats(y)
	// Walk the merged order; at each distinct value compare ECDFs after all ties.
	var i, j int
	var maxS, minS float64 // max of F1-F2 and max of F2-F1
	var atMax, atMin float64
	var c1Max, c2Max, c1Min, c2Min float64
	first := true
	for i < n1 || j < n2 {
		var v float64
		switch {
		case j >= n2 || (i < n1 && x[i] <= y[j]):
			v = x[i]
		default:
			v = y[j]
		}
		for i < n1 && x[i] == v {
			i++
		}
		for j < n2 && y[j] == v {
			j++
		}
		f1, f2 := float64(i)/float64(n1), float64(j)/float64(n2)
		if first || f1-f2 > maxS {
			maxS, atMax, c1Max, c2Max = f1-f2, v, f1, f2
		}
		if first || f2-f1 > minS {
			minS, atMin, c1Min, c2Min = f2-f1, v, f1, f2
		}
		first = false
	}
	minS = clip01(minS)
	r := KSResult{N: n1, M: n2}
	if minS > maxS {
		r.Statistic, r.At, r.CDF1, r.CDF2 = minS, atMin, c1Min, c2Min
	} else {
		r.Statistic, r.At, r.CDF1, r.CDF2 = maxS, atMax, c1Max, c2Max
	}
	d := r.Statistic
	if max(n1, n2) <= ExactKSMaxN {
		g := gcd(n1, n2)
		lcm := float64(n1/g) * float64(n2)
		h := int(math.Round(d * lcm))
		r.Method = "exact"
		if h == 0 {
			r.PValue = 1
			return r
		}
		var p float64
		if n1 == n2 {
			p = probOutsideSquare(n1, h)
		} else {
			p = outerProbInside(n1, n2, g, h)
		}
		if p >= 0 && p <= 1 && !math.IsNaN(p) {
			r.Statistic = float64(h) / lcm
			r.PValue = p
			return r
		}
	}
	r.Method = "asymp"
	m, n := float64(max(n1, n2)), float64(min(n1, n2))
	en := m * n / (m + n)
	r.PValue = KolmogorovSF(int(math.RoundToEven(en)), d)
	return r
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// probOutsideSquare returns P(D_{n,n} >= h/n) for two samples of equal size n:
// 2 Σ_k (-1)^(k-1) C(2n, n-kh)/C(2n, n), evaluated in nested (Horner) form to avoid
// cancellation.
func probOutsideSquare(n, h int) float64 {
	p := 0.0
	for k := n / h; k >= 0; k-- {
		p1 := 1.0
		for j := 0; j < h; j++ {
			p1 = float64(n-k*h-j) * p1 / float64(n+k*h+j+1)
		}
		p = p1 * (1 - p)
	}
	return 2 * p
}

// outerProbInside returns the share of lattice paths from (0,0) to (m,n) that leave the
// band |x/m - y/n| < h/lcm(m,n), computing 1-p directly by the inside method
// (Hodges 1958; Viehmann 2021's recursion), one sliding column at a time.
func outerProbInside(m, n, g, h int) float64 {
	if m < n {
		m, n = n, m
	}
	mg, ng := m/g, n/g
	minj, maxj := 0, min(int(math.Ceil(float64(h)/float64(mg))), n+1)
	curlen := maxj - minj
	lenA := min(2*maxj+2, n+1)
	A := make([]float64, lenA)
	for i := range A {
		A[i] = 1
	}
	for i := minj; i < maxj; i++ {
		A[i] = 0
	}
	for i := 1; i <= m; i++ {
		lastminj, lastlen := minj, curlen
		minj = max(int(math.Floor(float64(ng*i-h)/float64(mg)))+1, 0)
		minj = min(minj, n)
		maxj = min(int(math.Ceil(float64(ng*i+h)/float64(mg))), n+1)
		if maxj <= minj {
			return 1
		}
		val := 1.0
		if minj == 0 {
			val = 0
		}
		fi := float64(i)
		for jj := 0; jj < maxj-minj; jj++ {
			j := jj + minj
			val = (A[jj+minj-lastminj]*fi + val*float64(j)) / (fi + float64(j))
			A[jj] = val
		}
		curlen = maxj - minj
		if lastlen > curlen {
			for t := maxj - minj; t < maxj-minj+(lastlen-curlen) && t < lenA; t++ {
				A[t] = 1
			}
		}
	}
	return A[maxj-minj-1]
}
