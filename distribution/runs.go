package distribution

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// This file holds the maths of the run-level regression gate (perftest/check's
// CompareRuns): Welch's t interval for a difference of means, Holm's step-down
// correction, the Clopper–Pearson interval of a rate, and the power calculations behind
// the minimum detectable effect. Each is compared with SciPy/numpy in runs_scipy_test.go.

// WelchResult is Welch's unequal-variance t comparison of two samples' means.
type WelchResult struct {
	Diff       float64 // mean(y) - mean(x)
	SE         float64 // its standard error, sqrt(var(x)/n_x + var(y)/n_y)
	DF         float64 // Welch–Satterthwaite degrees of freedom (+Inf when SE is known exactly)
	T          float64 // Diff / SE
	PValue     float64 // two-sided
	Lo, Hi     float64 // Diff ± t_{DF,(1+Confidence)/2} SE
	Confidence float64
	NX, NY     int
}

// String prints e.g. "diff 0.0953 [0.0612, 0.129] (99% Welch t, t=7.12, df=17.6, p=1.3e-06, n=10+10)".
func (r WelchResult) String() string {
	return fmt.Sprintf("diff %.4g [%.4g, %.4g] (%g%% Welch t, t=%.3g, df=%.3g, p=%s, n=%d+%d)",
		r.Diff, r.Lo, r.Hi, r.Confidence*100, r.T, r.DF, FormatPValue(r.PValue), r.NX, r.NY)
}

// FormatPValue prints a p-value with three significant digits, small ones in exponent form.
func FormatPValue(p float64) string {
	if p < 1e-4 && p > 0 {
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.3g", p)
}

// Welch compares the means of x and y with Welch's t (scipy.stats.ttest_ind(y, x,
// equal_var=False)): Diff = mean(y) - mean(x), SE² = s_x²/n_x + s_y²/n_y with sample
// variances (divisor n-1), DF by Welch–Satterthwaite,
//
//	DF = SE⁴ / ((s_x²/n_x)²/(n_x-1) + (s_y²/n_y)²/(n_y-1)),
//
// the two-sided p-value of T = Diff/SE, and the interval Diff ± t_{DF,(1+c)/2}·SE. Both
// samples need at least two values. When SE is 0 (both samples constant) the interval is
// the point Diff and the p-value is 1 if Diff is 0 and 0 otherwise.
func Welch(x, y []float64, confidence float64) (WelchResult, error) {
	checkConfidence(confidence)
	if len(x) < 2 || len(y) < 2 {
		return WelchResult{}, fmt.Errorf("distribution: Welch needs >= 2 values per sample, got %d and %d", len(x), len(y))
	}
	mx, sx := meanStd(x)
	my, sy := meanStd(y)
	vx, vy := sx*sx/float64(len(x)), sy*sy/float64(len(y))
	df := (vx + vy) * (vx + vy) / (vx*vx/float64(len(x)-1) + vy*vy/float64(len(y)-1))
	return WelchFrom(my-mx, math.Sqrt(vx+vy), df, confidence, len(x), len(y)), nil
}

// WelchFrom is the interval and two-sided p-value of a difference diff with standard
// error se and df degrees of freedom (+Inf for a normal reference, as when the variance is
// known rather than estimated). Welch calls it; a caller that assumed a variance for one
// side (one run, a stored CV) builds se and df itself.
func WelchFrom(diff, se, df, confidence float64, nx, ny int) WelchResult {
	checkConfidence(confidence)
	r := WelchResult{Diff: diff, SE: se, DF: df, Confidence: confidence, NX: nx, NY: ny}
	if se == 0 {
		r.Lo, r.Hi = diff, diff
		r.T = math.Copysign(math.Inf(1), diff)
		r.PValue = 0
		if diff == 0 {
			r.T, r.PValue = 0, 1
		}
		return r
	}
	r.T = diff / se
	r.PValue = math.Min(1, 2*tSurvival(math.Abs(r.T), df))
	half := TQuantile(0.5+0.5*confidence, df) * se
	r.Lo, r.Hi = diff-half, diff+half
	return r
}

// TQuantile returns Student's t quantile at probability p with df degrees of freedom
// (scipy.stats.t.ppf(p, df)); df = +Inf gives the standard normal quantile.
func TQuantile(p, df float64) float64 {
	checkProb(p)
	if math.IsInf(df, 1) {
		return stdNormalQuantile(p)
	}
	if !(df > 0) {
		panic(fmt.Sprintf("distribution: TQuantile df %v is not positive", df))
	}
	// gonum's inverse incomplete beta is good to about 1e-9; three Newton steps on the
	// CDF (on the survival function in the upper half, where 1-p is exact) take it to
	// the CDF's own precision.
	st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	x := st.Quantile(p)
	for range 3 {
		d := st.Prob(x)
		if !(d > 0) || math.IsInf(x, 0) {
			break
		}
		if p > 0.5 {
			x += (st.Survival(x) - (1 - p)) / d
		} else {
			x -= (st.CDF(x) - p) / d
		}
	}
	return x
}

// TSurvival returns P(T > t) for Student's t with df degrees of freedom (the standard
// normal at df = +Inf): scipy.stats.t.sf(t, df).
func TSurvival(t, df float64) float64 { return tSurvival(t, df) }

// tSurvival is P(T > t) for Student's t with df degrees of freedom (normal at +Inf).
func tSurvival(t, df float64) float64 {
	if math.IsInf(df, 1) {
		return Normal{Mu: 0, Sigma: 1}.Survival(t)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
}

// Holm returns Holm's step-down adjusted p-values, in the input order: with the p-values
// sorted ascending p₍₁₎ ≤ … ≤ p₍ₘ₎, the adjusted p₍ᵢ₎ is max over j ≤ i of
// min(1, (m-j+1)·p₍ⱼ₎). Rejecting where the adjusted value is below alpha controls the
// family-wise error rate at alpha for any dependence between the tests. NaN p-values are
// not allowed (it panics).
func Holm(p []float64) []float64 {
	m := len(p)
	order := HolmOrder(p)
	adj := make([]float64, m)
	run := 0.0
	for i, k := range order {
		run = math.Max(run, math.Min(1, float64(m-i)*p[k]))
		adj[k] = run
	}
	return adj
}

// HolmOrder returns the indices of p sorted by p ascending (ties in input order): the
// order in which Holm's procedure tests them.
func HolmOrder(p []float64) []int {
	order := make([]int, len(p))
	for i, x := range p {
		if math.IsNaN(x) {
			panic(fmt.Sprintf("distribution: Holm p-value %d is NaN", i))
		}
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	return order
}

// HolmLevels returns, in the input order, the level at which Holm's procedure tests each
// p-value for a family level alpha: the i-th smallest (0-based) is tested at alpha/(m-i)
// while every smaller one was rejected; from the first p-value that is not rejected on,
// the procedure stops, and every remaining one keeps that level (it cannot be rejected,
// since its p-value is at least as large). p[k] < levels[k] exactly when Holm rejects k,
// and an interval at confidence 1-levels[k] excludes the null exactly then too.
func HolmLevels(p []float64, alpha float64) []float64 {
	m := len(p)
	lv := make([]float64, m)
	stopped := 0.0
	for i, k := range HolmOrder(p) {
		if stopped > 0 {
			lv[k] = stopped
			continue
		}
		lv[k] = alpha / float64(m-i)
		if !(p[k] < lv[k]) {
			stopped = lv[k]
		}
	}
	return lv
}

// ClopperPearson returns the exact (Clopper–Pearson) two-sided interval for a proportion
// of k successes in n trials, as scipy.stats.binomtest(k, n).proportion_ci(confidence,
// method="exact"): Lo is the a/2 quantile of Beta(k, n-k+1) (0 when k = 0) and Hi the
// 1-a/2 quantile of Beta(k+1, n-k) (1 when k = n), with a = 1-confidence. Its coverage is
// at least the confidence for every true rate, so it is the interval to quote for a
// measured false-alarm rate. It panics unless 0 <= k <= n, n >= 1.
func ClopperPearson(k, n int, confidence float64) Interval {
	if n < 1 || k < 0 || k > n {
		panic(fmt.Sprintf("distribution: ClopperPearson(%d, %d): want 0 <= k <= n, n >= 1", k, n))
	}
	checkConfidence(confidence)
	a := 1 - confidence
	lo, hi := 0.0, 1.0
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a / 2)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a/2)
	}
	return Interval{Lo: lo, Hi: hi, Estimate: float64(k) / float64(n), Confidence: confidence, N: n, Method: "Clopper-Pearson"}
}

// TTestPower returns the power of the two-sided t test at level alpha on df degrees of
// freedom (+Inf: the z test) against a true standardized difference lambda (the
// difference over its standard error): P(|T'| > t_{df,1-alpha/2}) for T' non-central t
// with non-centrality lambda, as scipy.stats.nct.sf(c, df, lambda) + nct.cdf(-c, df,
// lambda). It is computed as E[Φ(lambda - c·S) + Φ(-lambda - c·S)] over S = sqrt(χ²_df/df)
// by composite Gauss–Legendre quadrature (agreeing with SciPy to 1e-9).
func TTestPower(lambda, df, alpha float64) float64 {
	if !(alpha > 0 && alpha < 1) {
		panic(fmt.Sprintf("distribution: TTestPower alpha %v is outside (0, 1)", alpha))
	}
	return ttestPower(lambda, df, TQuantile(1-alpha/2, df))
}

// ttestPower is TTestPower for the critical value c = t_{df,1-alpha/2}.
func ttestPower(lambda, df, c float64) float64 {
	return newPowerNodes(df, c, lambda).power(lambda, c)
}

func phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// powerNodes are the quadrature nodes s and weights w (with their sum) of E[g(S)] over
// S = sqrt(χ²_df/df), refined where Φ(±lambda - c·S) steps for the lambda they were made
// for: ttestPower's integral, whose nodes a root search over lambda can reuse while
// lambda stays near.
type powerNodes struct {
	s, w   []float64
	den    float64
	lambda float64 // the lambda the panels were refined for
	normal bool    // df = +Inf: no integral
}

func newPowerNodes(df, c, lambda float64) powerNodes {
	p := powerNodes{lambda: lambda}
	if math.IsInf(df, 1) {
		p.normal = true
		return p
	}
	// S has density ∝ s^(df-1) exp(-df s²/2), peaked at 1 with sd ≈ 1/sqrt(2 df); beyond
	// 12/sqrt(df) from 1 it is below e^-70 of the peak. Φ(±lambda - c·s) steps from 0 to 1
	// over a width of about 1/c around s = ±lambda/c: the panels are refined there.
	w := 12 / math.Sqrt(df)
	lo, hi := math.Max(0, 1-w), 1+w
	const panels = 16
	cuts := make([]float64, 0, panels+16)
	for k := range panels + 1 {
		cuts = append(cuts, lo+float64(k)*(hi-lo)/panels)
	}
	for _, at := range []float64{lambda / c, -lambda / c} {
		for j := -9; j <= 9; j += 3 {
			if x := at + float64(j)/c; x > lo && x < hi {
				cuts = append(cuts, x)
			}
		}
	}
	slices.Sort(cuts)
	x, wt := legendreNodes()
	for i := 1; i < len(cuts); i++ {
		a, b := cuts[i-1], cuts[i]
		for k := range x {
			s := a + (x[k]+1)/2*(b-a)
			if s <= 0 {
				continue
			}
			f := wt[k] * (b - a) * math.Exp((df-1)*math.Log(s)-df*s*s/2+df/2) // scaled to avoid underflow
			p.s = append(p.s, s)
			p.w = append(p.w, f)
			p.den += f
		}
	}
	return p
}

// power is P(|T'| > c) at non-centrality lambda, by the nodes.
func (p powerNodes) power(lambda, c float64) float64 {
	if p.normal {
		return phi(lambda-c) + phi(-lambda-c)
	}
	num := 0.0
	for k, s := range p.s {
		num += p.w[k] * (phi(lambda-c*s) + phi(-lambda-c*s))
	}
	return num / p.den
}

// legendreNodes returns 20-point Gauss–Legendre nodes and weights on [-1, 1].
var legendreNodes = sync.OnceValues(func() ([]float64, []float64) {
	x, w := make([]float64, 20), make([]float64, 20)
	quad.Legendre{}.FixedLocations(x, w, -1, 1)
	return x, w
})

// DetectableEffect returns the minimum detectable effect: the true difference that a
// two-sided t test at level alpha detects with the given power, for a difference
// estimated with standard error se on df degrees of freedom (+Inf: z test). It solves
// TTestPower(d/se, df, alpha) = power for d (exact, with the non-central t), so with 5
// runs per side it is noticeably larger than the normal approximation
// (z_{1-alpha/2} + z_power)·se. It panics unless alpha and power are in (0, 1).
func DetectableEffect(se, df, alpha, power float64) float64 {
	if !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) {
		panic(fmt.Sprintf("distribution: DetectableEffect alpha %v, power %v: want both in (0, 1)", alpha, power))
	}
	if se == 0 {
		return 0
	}
	if power <= alpha {
		return 0 // detected at no effect at all
	}
	c := TQuantile(1-alpha/2, df)
	// The nodes are refined around the lambda they were made for; the search reuses them
	// while lambda stays within a third of the refinement's step (1/c) of it.
	var nodes powerNodes
	f := func(l float64) float64 {
		if nodes.s == nil && !nodes.normal || math.Abs(l-nodes.lambda) > 1.0/3 {
			nodes = newPowerNodes(df, c, l)
		}
		return nodes.power(l, c) - power
	}
	// Power rises with lambda from alpha (at 0): bracket, then the Illinois variant of
	// regula falsi, which converges superlinearly and never leaves the bracket. The
	// bracket starts 2% around the normal approximation of the non-central t,
	// P(T' > c) ≈ Φ((λ - c(1-1/(4df))) / sqrt(1 + c²/(2df))), within 1% of the root from 4
	// df, and widens until it holds the root.
	z := stdNormalQuantile(power)
	guess := c + z
	if !math.IsInf(df, 1) {
		guess = c*(1-1/(4*df)) + z*math.Sqrt(1+c*c/(2*df))
	}
	guess = math.Max(guess, 0.1)
	lo, hi := 0.98*guess, 1.02*guess
	flo, fhi := f(lo), f(hi)
	for w := hi - lo; flo > 0 && lo > 0; w *= 4 {
		hi, fhi = lo, flo
		lo = math.Max(0, lo-w)
		flo = f(lo)
	}
	for w := hi - lo; fhi < 0; w *= 4 {
		lo, flo = hi, fhi
		hi += w
		fhi = f(hi)
	}
	side := 0
	for range 100 {
		if hi-lo <= 1e-14*hi {
			break
		}
		x := hi - fhi*(hi-lo)/(fhi-flo)
		if !(x > lo && x < hi) {
			x = (lo + hi) / 2
		}
		fx := f(x)
		switch {
		case math.Abs(fx) < 1e-11:
			// The power is within 1e-11 of the target: the effect is within about 1e-10
			// (relative) of the root, as the slope of the power in lambda is about 0.1-0.4.
			return x * se
		case fx < 0:
			lo, flo = x, fx
			if side == -1 {
				fhi /= 2
			}
			side = -1
		default:
			hi, fhi = x, fx
			if side == 1 {
				flo /= 2
			}
			side = 1
		}
	}
	return (lo + hi) / 2 * se
}

// RunsForEffect returns the smallest n (>= 2) such that two samples of n values each,
// with common standard deviation sigma, detect a difference of effect by a two-sided t
// test at level alpha with the given power:
//
//	TTestPower(effect / (sigma·sqrt(2/n)), 2n-2, alpha) >= power
//
// or 0 when no n up to limit does (or effect is not positive). sigma 0 gives 2.
func RunsForEffect(sigma, effect, alpha, power float64, limit int) int {
	if !(effect > 0) || math.IsNaN(sigma) || sigma < 0 || limit < 2 {
		return 0
	}
	enough := func(n int) bool {
		if sigma == 0 {
			return true
		}
		return TTestPower(effect/(sigma*math.Sqrt(2/float64(n))), float64(2*n-2), alpha) >= power
	}
	// Power rises with n. Start from the normal approximation 2((z_{1-α/2}+z_power)σ/effect)²,
	// which the t test's heavier tails put at or a little below the answer, and walk to it.
	z := (stdNormalQuantile(1-alpha/2) + stdNormalQuantile(power)) * sigma / effect
	n0 := 2.0
	if f := math.Ceil(2 * z * z); f > n0 {
		n0 = math.Min(f, float64(limit))
	}
	n := int(n0)
	if enough(n) {
		for n > 2 && enough(n-1) {
			n--
		}
		return n
	}
	lo, hi := n, n // !enough(lo); find enough(hi)
	for step := 1; ; step *= 2 {
		hi = min(lo+step, limit)
		if enough(hi) {
			break
		}
		if hi == limit {
			return 0
		}
		lo = hi
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if enough(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
