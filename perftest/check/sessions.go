package check

import (
	"fmt"
	"math"

	"github.com/perfgate/perfgate/distribution"
)

// The run-level gate's noise model has two levels. A side's runs come in sessions (one
// `perfgate profile --num-profile-runs K`, one run.RunSeries, one history result):
// on the log scale a run's statistic is
//
//	y = μ(side) + b(session) + e(run)
//
// with a session offset b of variance σ_b² (the machine, the day, the server's warm
// state) and run noise e of variance σ_w² within a session, possibly correlated from one
// run to the next. More runs in a session shrink only the e part of its mean; a current
// side measured in one session keeps its whole b. docs/statistics.md ("Sessions, drift
// and dependence") explains the choices made here.

// MinSessions is the fewest sessions from which the gate measures the between-session
// noise itself (one-way random-effects ANOVA with MinSessions-1 degrees of freedom or
// more). With fewer it takes the larger of what they show and the stored, configured or
// assumed between-session CV: the calibration (`gate families`) found the Satterthwaite
// interval over-confident with fewer, up to 1.5% false alarms with five sessions where
// sessions wander as far as runs.
const MinSessions = 10

// DependenceAlpha is the level of each test for dependence between runs in run order
// (positive lag-1 autocorrelation, one-sided; a linear trend within a session,
// two-sided), on each side and on both sides' runs together. A side that fails one has
// its within-session variance widened by its effective number of runs. At 0.01 the five
// tests widen about 5% of comparisons of independent runs.
const DependenceAlpha = 0.01

// maxRho caps the lag-1 autocorrelation used for the effective number of runs.
const maxRho = 0.9

// Side is one side of a comparison: each run's statistic in run order, and the session
// each run was measured in (runs with equal labels share a session; nil = one session).
type Side struct {
	Values   []float64
	Sessions []int
}

// Dependence is what the tests for dependence found in one side's runs, in run order
// within each session.
type Dependence struct {
	// Rho is the lag-1 autocorrelation of the runs' deviations from their session's mean,
	// pooled over sessions and corrected for its small-sample bias; RhoP the one-sided
	// p-value of "positively correlated" (NaN with fewer than four runs past the first of
	// their session).
	Rho, RhoP float64
	// Slope is the within-session linear trend, in log units (≈ relative change) per run,
	// and TrendP its two-sided p-value (NaN with too few runs).
	Slope, TrendP float64
	// Widened reports whether a test found dependence (at DependenceAlpha), so that the
	// within-session variance of the side's mean was widened by Factor (>= 1): the runs
	// count as N/Factor effective runs. Pooled says the test that found it ran on both
	// sides' runs together (the environment's dependence, found with more runs than one
	// side has), and Rho is then theirs.
	Widened, Pooled bool
	Factor          float64
}

// found says what a dependence test found, for the verdict's note ("" = nothing).
func (d Dependence) found() string {
	var parts []string
	if d.RhoP < DependenceAlpha {
		parts = append(parts, fmt.Sprintf("lag-1 autocorrelation %.2f (p=%s)", d.Rho, pvalue(d.RhoP)))
	}
	if d.TrendP < DependenceAlpha {
		parts = append(parts, fmt.Sprintf("a trend of %s per run (p=%s)", signedPct(math.Expm1(d.Slope)), pvalue(d.TrendP)))
	}
	if len(parts) == 0 {
		return ""
	}
	if len(parts) == 2 {
		return parts[0] + " and " + parts[1]
	}
	return parts[0]
}

// side is one side's logs grouped by session.
type side struct {
	name     string
	logs     [][]float64 // per session, in run order
	n        int         // runs
	means    []float64   // session means
	mean     float64     // the side's estimate: the mean of its session means
	ssw, dfw float64     // within-session sum of squares and its degrees of freedom
	sm2      float64     // variance of the session means (NaN with one session)
	dep      Dependence
}

func (s *side) m() int { return len(s.logs) }

// groupSide groups a side's logs by session label, sessions in order of first
// appearance, runs in their order.
func groupSide(name string, logs []float64, labels []int, same bool) *side {
	s := &side{name: name, n: len(logs), sm2: math.NaN()}
	if same || len(labels) != len(logs) {
		s.logs = [][]float64{logs}
	} else {
		var order []int
		at := map[int]int{}
		for i, l := range labels {
			j, ok := at[l]
			if !ok {
				j = len(order)
				at[l] = j
				order = append(order, l)
				s.logs = append(s.logs, nil)
			}
			s.logs[j] = append(s.logs[j], logs[i])
		}
	}
	for _, xs := range s.logs {
		m, v := meanVar(xs)
		s.means = append(s.means, m)
		s.ssw += v * float64(len(xs)-1)
		s.dfw += float64(len(xs) - 1)
	}
	s.mean, s.sm2 = meanVar(s.means)
	if len(s.means) < 2 {
		s.sm2 = math.NaN()
	}
	s.dep = dependence(s)
	return s
}

// poolDependence widens each side by the dependence both sides' runs show together,
// where that is more than its own: the lag-1 autocorrelation of runs in one environment
// is its property, and a side of five runs alone can hardly show it.
func poolDependence(b, c *side) {
	p := dependence(b, c)
	if !p.Widened {
		return
	}
	for _, s := range []*side{b, c} {
		if s.dep.Widened && s.dep.Rho >= p.Rho {
			continue
		}
		nbar := float64(s.n) / float64(s.m())
		s.dep.Widened, s.dep.Pooled, s.dep.Rho = true, true, p.Rho
		s.dep.RhoP, s.dep.TrendP, s.dep.Slope = p.RhoP, p.TrendP, p.Slope
		s.dep.Factor = arFactor(int(math.Round(nbar)), p.Rho)
	}
}

// wdf is the degrees of freedom of the side's within-session variance: its runs less its
// sessions, or, where a test found dependence, the fewer that correlated runs carry
// (arDF at the autocorrelation the side is widened by).
func (s *side) wdf() float64 {
	ns := make([]int, len(s.logs))
	for j, xs := range s.logs {
		ns[j] = len(xs)
	}
	return arDF(ns, s.rho())
}

// sw2 is the side's within-session variance (NaN without within-session degrees of
// freedom).
func (s *side) sw2() float64 {
	if s.dfw == 0 {
		return math.NaN()
	}
	return s.ssw / s.dfw
}

// h is the mean over sessions of factor/n_j: the within-session variance's multiplier in
// the variance of a session mean, averaged.
func (s *side) h() float64 {
	h := 0.0
	for _, xs := range s.logs {
		h += arFactor(len(xs), s.rho()) / float64(len(xs))
	}
	return h / float64(s.m())
}

// rho is the autocorrelation the side's variance is widened by (0 when no test found
// dependence).
func (s *side) rho() float64 {
	if !s.dep.Widened {
		return 0
	}
	return s.dep.Rho
}

// dependence tests the runs of the sides' sessions, within each session and in run
// order, for positive lag-1 autocorrelation and for a linear trend.
func dependence(ss ...*side) Dependence {
	d := Dependence{Rho: math.NaN(), RhoP: math.NaN(), Slope: math.NaN(), TrendP: math.NaN(), Factor: 1}
	var num, den, sxe, sxx, dfw float64
	pairs, n, m := 0, 0, 0
	for _, s := range ss {
		n += s.n
		m += s.m()
		dfw += s.dfw
		for j, xs := range s.logs {
			k := len(xs)
			for t, x := range xs {
				e := x - s.means[j]
				den += e * e
				if t+1 < k {
					num += e * (xs[t+1] - s.means[j])
					pairs++
				}
				c := float64(t) - float64(k-1)/2
				sxe += c * e
				sxx += c * c
			}
		}
	}
	if den == 0 {
		return d
	}
	nbar := float64(n) / float64(m)
	if pairs >= 4 && nbar > 3 {
		r1 := num / den
		// Under independence r1 is about N(-1/n, 1/N) (n runs a session, N runs in all);
		// its bias under AR(1) is about -(1+3ρ)/n (Marriott and Pope), corrected here.
		d.RhoP = 1 - normalCDF((r1+1/nbar)*math.Sqrt(float64(n)))
		d.Rho = math.Max(0, math.Min(maxRho, (nbar*r1+1)/(nbar-3)))
	}
	if df := dfw - 1; df >= 2 && sxx > 0 {
		b := sxe / sxx
		res := (den - b*b*sxx) / df
		if res > 0 {
			t := b / math.Sqrt(res/sxx)
			d.Slope = b
			d.TrendP = math.Min(1, 2*distribution.TSurvival(math.Abs(t), df))
		} else {
			d.Slope, d.TrendP = b, 0
		}
	}
	if d.RhoP < DependenceAlpha || d.TrendP < DependenceAlpha {
		d.Widened = true
		if math.IsNaN(d.Rho) {
			d.Rho = 0
		}
		if d.Rho < 0.5 && d.TrendP < DependenceAlpha {
			// A trend makes the level of a session depend on when it was measured: the
			// runs count as if correlated at 0.5 at least.
			d.Rho = 0.5
		}
		d.Factor = arFactor(int(math.Round(nbar)), d.Rho)
	}
	return d
}

// arFactor is the factor by which the sample variance s² of n runs, divided by n,
// understates the variance of their mean when consecutive runs are AR(1)-correlated at
// rho: Var(mean) = σ²/n·(1 + 2Σ(1-k/n)ρᵏ) and E[s²] = σ²·(1 - 2/(n(n-1))·Σ(n-k)ρᵏ),
// k = 1…n-1. For large n it is (1+ρ)/(1-ρ): the runs count as n(1-ρ)/(1+ρ) effective runs.
func arFactor(n int, rho float64) float64 {
	if rho <= 0 || n < 2 {
		return 1
	}
	var a, b float64
	pk := 1.0
	for k := 1; k < n; k++ {
		pk *= rho
		a += (1 - float64(k)/float64(n)) * pk
		b += float64(n-k) * pk
	}
	return (1 + 2*a) / (1 - 2*b/float64(n*(n-1)))
}

// arDF is the degrees of freedom of a pooled within-session variance (the sum over
// sessions of each one's squared deviations from its mean, over Σ(n_j-1)) when
// consecutive runs of a session are AR(1)-correlated at rho, sessions of ns runs: by
// Satterthwaite's moment match, (Σ tr(AΣ))² / Σ tr(AΣAΣ) with Σ_ik = rho^|i-k| and A the
// centring matrix of a session. Without correlation it is Σ(n_j-1); with it fewer, since
// neighbouring runs repeat each other: 2.8 instead of 4 for five runs at rho 0.7, 7.7
// instead of 19 for twenty. A t interval that used Σ(n_j-1) under dependence would
// take its variance for better known than it is (docs/statistics.md).
func arDF(ns []int, rho float64) float64 {
	var tr, tr2, dfw float64
	for _, n := range ns {
		if n < 2 {
			continue
		}
		dfw += float64(n - 1)
		if rho <= 0 {
			continue
		}
		a, b := arQuad(n, rho)
		tr += a
		tr2 += b
	}
	if rho <= 0 || tr2 <= 0 {
		return dfw
	}
	return math.Min(dfw, tr*tr/tr2)
}

// arQuad returns tr(AΣ) and tr(AΣAΣ) for n runs AR(1)-correlated at rho (unit
// variance): tr(AΣ) = n - 1'Σ1/n, tr(AΣAΣ) = tr(Σ²) - 2·1'Σ²1/n + (1'Σ1/n)², with
// 1'Σ²1 the sum of Σ's squared row sums.
func arQuad(n int, rho float64) (tr, tr2 float64) {
	fn := float64(n)
	s1, s2 := fn, fn // 1'Σ1 and tr(Σ²) = Σ_ik rho^(2|i-k|)
	pk := 1.0
	for k := 1; k < n; k++ {
		pk *= rho
		s1 += 2 * (fn - float64(k)) * pk
		s2 += 2 * (fn - float64(k)) * pk * pk
	}
	rows := 0.0 // Σ_i (Σ_k rho^|i-k|)²
	for i := range n {
		left := (1 - math.Pow(rho, float64(i+1))) / (1 - rho)
		right := rho * (1 - math.Pow(rho, float64(n-1-i))) / (1 - rho)
		r := left + right
		rows += r * r
	}
	return fn - s1/fn, s2 - 2*rows/fn + (s1/fn)*(s1/fn)
}

func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// term is one independent part of the variance of the difference of the sides' means:
// its value (log scale) and its degrees of freedom (+Inf: known).
type term struct {
	v, df float64
}

// satterthwaite returns the sum of the terms and its Welch–Satterthwaite degrees of
// freedom.
func satterthwaite(ts []term) (v, df float64) {
	var den float64
	for _, t := range ts {
		v += t.v
		if t.v > 0 && !(t.df > 0) {
			return v, 0 // a part with no degrees of freedom: nothing is known
		}
		if t.v > 0 && !math.IsInf(t.df, 1) {
			den += t.v * t.v / t.df
		}
	}
	if den == 0 {
		return v, math.Inf(1)
	}
	return v, v * v / den
}

// Session sources: where the between-session variance came from.
const (
	sessionSame       = "same session"
	sessionMeasured   = "measured"
	sessionGiven      = "given"
	sessionAssumed    = "assumed"
	sessionFewMeasure = "few sessions"
)

// noise is the two-level variance of the difference of means, and how it was found.
type noise struct {
	terms     []term
	sw2       float64 // within-session variance used (pooled over the sides that have it)
	sb2       float64 // between-session variance used (0 for the same session)
	sb2DF     float64
	source    string
	measuredM int // sessions the measurement rested on (sum over measuring sides)
}

// twoLevel assembles the variance of mean(current) - mean(baseline) under the two-level
// model. sw2 is the within-session variance each side uses (its own, else borrowed);
// prior is the stored/configured between-session variance (0 = none) with its df.
func twoLevel(b, c *side, wb, wc term, g RunGate) noise {
	nz := noise{sw2: pooledWithin(b, c, wb, wc)}
	sides := []*side{b, c}
	within := []term{wb, wc}
	if g.SameSession {
		nz.source = sessionSame
		for i, s := range sides {
			nz.terms = append(nz.terms, term{within[i].v * s.h() / float64(s.m()), within[i].df})
		}
		return nz
	}
	// The between-session variance each side's sessions show (one-way ANOVA:
	// E[var of session means] = σ_b² + σ_w²·mean(f/n)), pooled over the sides with two
	// sessions or more, weighted by their m-1 degrees of freedom.
	var num, dfb float64
	for i, s := range sides {
		if s.m() >= 2 {
			est := math.Max(0, s.sm2-within[i].v*s.h())
			num += float64(s.m()-1) * est
			dfb += float64(s.m() - 1)
			nz.measuredM += s.m()
		}
	}
	measured := math.NaN()
	if dfb > 0 {
		measured = num / dfb
	}
	prior := math.Log1p(g.SessionCV * g.SessionCV)
	priorDF := g.SessionDF
	if priorDF == 0 {
		priorDF = math.Inf(1)
	}
	switch {
	case dfb >= MinSessions-1:
		nz.sb2, nz.sb2DF, nz.source = measured, dfb, sessionMeasured
	case g.SessionCV > 0:
		nz.sb2, nz.sb2DF, nz.source = prior, priorDF, sessionGiven
	default:
		// Nothing says how far sessions wander: assume as far as runs do (the ceiling of
		// the calibrated range), with the within-session variance's df.
		nz.sb2, nz.sb2DF, nz.source = nz.sw2, wb.df+wc.df, sessionAssumed
		if math.IsInf(wb.df, 1) || math.IsInf(wc.df, 1) {
			nz.sb2DF = math.Inf(1)
		}
	}
	if dfb > 0 && dfb < MinSessions-1 && measured > nz.sb2 {
		nz.sb2, nz.sb2DF, nz.source = measured, dfb, sessionFewMeasure
	} else if dfb > 0 && dfb < MinSessions-1 {
		nz.source = sessionFewMeasure + "/" + nz.source
	}
	if nz.source == sessionMeasured {
		// A side with sessions of its own contributes the variance of its session means
		// over their count (batch means: right under any dependence within a session); a
		// one-session side contributes σ_b² plus its within-session part. σ_b²'s share
		// goes with the measuring sides' term, whose df (m-1) it shares.
		var sess term
		for i, s := range sides {
			if s.m() >= 2 {
				sess.v += s.sm2 / float64(s.m())
			} else {
				sess.v += nz.sb2
				nz.terms = append(nz.terms, term{within[i].v * s.h(), within[i].df})
			}
		}
		sess.df = dfb
		nz.terms = append(nz.terms, sess)
		return nz
	}
	// Model-based: each side's mean has variance (σ_b² + σ_w²·mean(f/n))/m.
	sess := term{df: nz.sb2DF}
	for i, s := range sides {
		sess.v += nz.sb2 / float64(s.m())
		nz.terms = append(nz.terms, term{within[i].v * s.h() / float64(s.m()), within[i].df})
	}
	nz.terms = append(nz.terms, sess)
	return nz
}

// pooledWithin pools the two sides' within-session variances by their degrees of
// freedom (a borrowed or prior variance counts once).
func pooledWithin(b, c *side, wb, wc term) float64 {
	switch {
	case b.dfw > 0 && c.dfw > 0:
		return (b.ssw + c.ssw) / (b.dfw + c.dfw)
	case b.dfw > 0:
		return wb.v
	default:
		return wc.v
	}
}

// BetweenSessionCV returns the between-session CV that a side's sessions show — the
// one-way random-effects ANOVA estimate on the logs, sqrt(e^σ_b² - 1) with σ_b² = the
// variance of the session means less the within-session variance's share, 0 when
// negative — and its degrees of freedom (sessions less one). NaN and 0 with fewer than
// two sessions, a session-less run, or a value that is not a positive finite number.
func BetweenSessionCV(s Side) (cv, df float64) {
	if len(s.Sessions) != len(s.Values) {
		return math.NaN(), 0
	}
	ls, bad := logs(s.Values, "")
	if bad != "" {
		return math.NaN(), 0
	}
	sd := groupSide("", ls, s.Sessions, false)
	if sd.m() < 2 {
		return math.NaN(), 0
	}
	w := 0.0
	if sd.dfw > 0 {
		w = sd.sw2() * sd.h()
	}
	return math.Sqrt(math.Expm1(math.Max(0, sd.sm2-w))), float64(sd.m() - 1)
}
