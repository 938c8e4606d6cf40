package check

import (
	"errors"
	"fmt"
	"math"

	"github.com/perfgate/perfgate/distribution"
)

// BaselinePlan asks how large a baseline and a gate must be for a decisive answer:
// [PlanBaseline] sizes them. Its zero fields take the gate's defaults.
type BaselinePlan struct {
	// RunCV is the between-run CV within a session (0.03 = 3%); required, in (0, 1).
	RunCV float64
	// SessionCV is the between-session CV (0 = sessions do not differ), in [0, 1).
	SessionCV float64
	// Margin is δ (0 = DefaultMargin), Power the probability of each decisive answer
	// (0 = DefaultPower), and Alpha the one-sided level of each end of the interval at
	// one look (0 = DefaultAlpha spread over DefaultSchedule's looks, as a sequential
	// gate spends it).
	Margin, Power, Alpha float64
	// Measure plans for a gate that measures the between-session noise itself, from the
	// baseline's sessions (MinSessions or more); otherwise the gate is given SessionCV
	// (stored with the baseline or configured), as if known exactly.
	Measure bool
}

// Plan is [PlanBaseline]'s answer: a baseline of Sessions sessions of Runs runs each, and
// a current side of Runs runs in one session.
type Plan struct {
	Runs, Sessions int
	// SE is the standard error of the log ratio at that size, DF its degrees of freedom.
	SE, DF float64
	// Input is the question, with defaults filled in.
	Input BaselinePlan
}

// String prints e.g. "5 sessions of 8 runs each for the baseline, 8 current runs".
func (p Plan) String() string {
	return fmt.Sprintf("%d %s of %d %s for the baseline, %d current %s",
		p.Sessions, plural(p.Sessions, "session", "sessions"), p.Runs, plural(p.Runs, "run", "runs"), p.Runs, plural(p.Runs, "run", "runs"))
}

// ErrNoPlan is returned (wrapped) when no baseline and gate up to the search's limits
// is decisive: the current side is one session, and its own offset hides δ.
var ErrNoPlan = errors.New("check: no plan")

// Limits of PlanBaseline's search.
const (
	planMaxRuns     = 1000
	planMaxSessions = 200
)

func (p BaselinePlan) withDefaults() BaselinePlan {
	if p.Margin == 0 {
		p.Margin = DefaultMargin
	}
	if p.Power == 0 {
		p.Power = DefaultPower
	}
	if p.Alpha == 0 {
		p.Alpha = DefaultSchedule.Alpha(DefaultAlpha, 0)
	}
	return p
}

func (p BaselinePlan) validate() error {
	var bad []string
	if !(p.RunCV > 0 && p.RunCV < 1) {
		bad = append(bad, fmt.Sprintf("run CV %v is outside (0, 1)", p.RunCV))
	}
	if !(p.SessionCV >= 0 && p.SessionCV < 1) {
		bad = append(bad, fmt.Sprintf("session CV %v is outside [0, 1)", p.SessionCV))
	}
	if !(p.Margin > 0 && p.Margin < 1) {
		bad = append(bad, fmt.Sprintf("margin %v is outside (0, 1)", p.Margin))
	}
	if !(p.Power > 0 && p.Power < 1) {
		bad = append(bad, fmt.Sprintf("power %v is outside (0, 1)", p.Power))
	}
	if !(p.Alpha > 0 && p.Alpha < 0.5) {
		bad = append(bad, fmt.Sprintf("alpha %v is outside (0, 0.5)", p.Alpha))
	}
	if len(bad) > 0 {
		return fmt.Errorf("check: plan: %s", join(bad))
	}
	return nil
}

func join(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}

// PlanBaseline returns the smallest baseline and gate (fewest runs in all: a baseline of
// S sessions of n runs, and n current runs in one session) for which both decisive
// answers come with the plan's power: "regressed" for a slowdown of 2δ (the better end
// at Alpha beyond no change, the ratio beyond δ) and "no regression" for no change (the
// worse end at Alpha within δ). On the log scale, with σ_w² = log(1+RunCV²) and σ_b² =
// log(1+SessionCV²), the variance of the log ratio is
//
//	σ_b²·(1 + 1/S) + σ_w²·(1/n + 1/(S·n))            (SessionCV given: known)
//	(σ_b² + σ_w²/n)/S + σ_b² + σ_w²/n                (Measure: the gate estimates σ_b²)
//
// with Satterthwaite degrees of freedom (the session part has S-1 when measured), and an
// answer is decisive when the t test's power ([distribution.DetectableEffect]) at that
// standard error reaches Power for the effect (δ for "no regression", 2δ for
// "regressed"). A given SessionCV makes one session the cheapest; a measured one needs
// MinSessions at least. When the current session's own offset alone is too large for δ
// no size is decisive, and the error (wrapping ErrNoPlan) says so.
func PlanBaseline(p BaselinePlan) (Plan, error) {
	p = p.withDefaults()
	if err := p.validate(); err != nil {
		return Plan{Input: p}, err
	}
	sw2 := math.Log1p(p.RunCV * p.RunCV)
	sb2 := math.Log1p(p.SessionCV * p.SessionCV)
	terms := func(s, n int) []term {
		fs, fn := float64(s), float64(n)
		if p.Measure {
			return []term{{(sb2+sw2/fn)/fs + sb2, fs - 1}, {sw2 / fn, fn - 1}}
		}
		return []term{{sb2 * (1 + 1/fs), math.Inf(1)}, {sw2 / (fs * fn), fs * (fn - 1)}, {sw2 / fn, fn - 1}}
	}
	ok := func(s, n int) bool {
		v, df := satterthwaite(terms(s, n))
		return decisiveExact(math.Sqrt(v), df, p.Alpha, p.Alpha, p.Power, math.Log1p(p.Margin))
	}
	best := Plan{Input: p}
	first := 1
	if p.Measure {
		first = MinSessions
	}
	for s := first; s <= planMaxSessions; s++ {
		if best.Runs > 0 && (s+1)*2 > (best.Sessions+1)*best.Runs {
			break // even two runs a session would cost more
		}
		if !ok(s, planMaxRuns) {
			continue
		}
		lo, hi := 1, planMaxRuns // !ok(lo) or lo < 2; ok(hi)
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if ok(s, mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		if best.Runs == 0 || (s+1)*hi < (best.Sessions+1)*best.Runs {
			v, df := satterthwaite(terms(s, hi))
			best.Runs, best.Sessions, best.SE, best.DF = hi, s, math.Sqrt(v), df
		}
		if !p.Measure && p.SessionCV == 0 {
			break // without session noise more sessions only add runs
		}
	}
	if best.Runs == 0 {
		return best, fmt.Errorf("%w: no baseline of up to %d sessions and %d runs a session decides a %s change when sessions differ by CV %s: the current side is one session, and its own offset hides the change; widen the margin, make sessions steadier, or compare A/B within one session",
			ErrNoPlan, planMaxSessions, planMaxRuns, pct(p.Margin), pct(p.SessionCV))
	}
	return best, nil
}

// decisiveExact reports whether a comparison with standard error se on df degrees of
// freedom proves "no regression" for no change (worse end at alphaN within the log
// margin d) and shows "regressed" for a 2δ change (better end at alphaR), each with the
// given power, by the t test's exact power.
func decisiveExact(se, df, alphaR, alphaN, power, d float64) bool {
	if se == 0 {
		return true
	}
	if !(df > 0) {
		return false
	}
	return distribution.DetectableEffect(se, df, 2*alphaN, power) <= d &&
		distribution.DetectableEffect(se, df, 2*alphaR, power) <= 2*d
}

// decisiveApprox is decisiveExact by the usual approximation (t_{1-α} + t_power)·se, which
// the verdict's "what would decide" uses: it is fast, and within a run or two of exact.
func decisiveApprox(se, df, alphaR, alphaN, power, d float64) bool {
	if se == 0 {
		return true
	}
	if !(df > 0) {
		return false
	}
	zp := tApprox(power, df)
	return (tApprox(1-alphaN, df)+zp)*se <= d && (tApprox(1-alphaR, df)+zp)*se <= 2*d
}

// tApprox is Student's t quantile by its Cornish–Fisher expansion about the normal one
// (within 0.4% from 8 df at the levels a gate uses), exact below 8 df: what the estimates
// of what would decide a comparison, searched over many sizes, can afford.
func tApprox(p, df float64) float64 {
	if df < 8 {
		return distribution.TQuantile(p, df)
	}
	z := distribution.TQuantile(p, math.Inf(1))
	z2 := z * z
	return z + z*(z2+1)/(4*df) + z*((5*z2+16)*z2+3)/(96*df*df) + z*(((3*z2+19)*z2+17)*z2-15)/(384*df*df*df)
}

// toDecide fills in what would make a comparison decisive, keeping the
// estimates it has: more current runs; else, for a one-session baseline, more baseline
// runs in it; else more baseline sessions of its runs per session.
func (c *Comparison) toDecide(b, cu *side, wb, wc term, nz noise) {
	if math.IsNaN(c.SE) {
		return
	}
	g := c.Gate
	d := g.marginLog()
	ok := func(ts []term) bool {
		v, df := satterthwaite(ts)
		return decisiveApprox(math.Sqrt(v), df, g.Alpha, g.NoRegressionAlpha, g.Power, d)
	}
	search := func(from, limit int, at func(k int) []term) int {
		if from > limit || !ok(at(limit)) {
			return 0
		}
		lo, hi := from-1, limit
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if ok(at(mid)) {
				hi = mid
			} else {
				lo = mid
			}
		}
		return hi
	}
	m := nz.model(b, cu, wb, wc, c.Gate)
	if g.SameSession {
		c.SEMoreRuns = 0
		// Both sides run together (A/B): they grow together.
		c.CurrentRunsToDecide = search(max(b.n, cu.n)+1, maxRunsForMargin, func(k int) []term { return m.terms(1, k, k) })
		return
	}
	v, _ := satterthwaite(m.terms(b.m(), b.n, math.MaxInt32))
	c.SEMoreRuns = math.Sqrt(v)
	c.CurrentRunsToDecide = search(cu.n+1, maxRunsForMargin, func(k int) []term { return m.terms(b.m(), b.n, k) })
	if c.CurrentRunsToDecide > 0 || nz.source == sessionAssumed || nz.source == sessionSame {
		return
	}
	if b.m() == 1 {
		c.BaselineRunsToDecide = search(b.n+1, maxRunsForMargin, func(k int) []term { return m.terms(1, k, cu.n) })
		if c.BaselineRunsToDecide > 0 {
			return
		}
	}
	per := max(1, int(math.Round(float64(b.n)/float64(b.m()))))
	c.SessionsToDecide = search(b.m()+1, planMaxSessions, func(s int) []term { return m.terms(s, s*per, cu.n) })
}

// model is the fitted two-level model, to predict the variance at other sizes.
type model struct {
	sw2b, sw2c float64 // within-session variance per run, with the dependence factor
	wbDF, wcDF float64 // as estimated
	ownB, ownC bool    // whether each side's within variance is its own
	effB, effC float64 // its degrees of freedom per run less session (below 1 under dependence: arDF)
	sb2, sb2DF float64
	same       bool
	mc         int
}

func (nz noise) model(b, cu *side, wb, wc term, g RunGate) model {
	m := model{sb2: nz.sb2, sb2DF: nz.sb2DF, same: g.SameSession, mc: cu.m()}
	m.sw2b, m.sw2c = wb.v*arFactor(max(1, b.n/b.m()), b.rho()), wc.v*arFactor(max(1, cu.n/cu.m()), cu.rho())
	m.ownB, m.ownC = b.dfw > 0, cu.dfw > 0
	m.wbDF, m.wcDF = wb.df, wc.df
	m.effB, m.effC = 1, 1
	if b.dfw > 0 {
		m.effB = wb.df / b.dfw
	}
	if cu.dfw > 0 {
		m.effC = wc.df / cu.dfw
	}
	return m
}

// terms predicts the variance's parts for a baseline of s sessions and nb runs in all,
// and nc current runs (in the current side's sessions).
func (m model) terms(s, nb, nc int) []term {
	fs, fnb, fnc := float64(s), float64(nb), float64(nc)
	dfB, dfC := m.wbDF, m.wcDF
	if m.ownB {
		dfB = (fnb - fs) * m.effB
	}
	if m.ownC {
		dfC = (fnc - float64(m.mc)) * m.effC
	}
	wc := term{m.sw2c / fnc, dfC}
	if m.same {
		return []term{{m.sw2b / fnb, dfB}, wc}
	}
	if s >= MinSessions {
		// The gate measures σ_b² from the baseline's sessions, whose means vary by
		// σ_b² + σ_w²/n each: S-1 degrees of freedom.
		return []term{{(m.sb2+m.sw2b*fs/fnb)/fs + m.sb2/float64(m.mc), fs - 1}, wc}
	}
	return []term{{m.sb2 * (1/fs + 1/float64(m.mc)), m.sb2DF}, {m.sw2b / fnb, dfB}, wc}
}
