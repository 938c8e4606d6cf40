package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
)

// families runs the regression gate on constructed pairs, no runs: each pair's run
// statistics are drawn from a noise family at a run-to-run CV, and go through the real
// comparison code (gate.Compare, look by look as a gate's sequential plan takes
// them, stopping where check.Settled says so), beside the rule before sessions were
// modelled (oldrule.go) on the same pairs. It prints, per family and CV, false alarms
// on identical pairs with their 95% Clopper–Pearson bound, the share of identical pairs
// decided "no regression", and the power on slowdowns.
//
//	gate families [-pairs 2000] [-cvs 0.02,0.03,0.05] [-sessions 5] [-session-runs 10] [-only …] [-explain]
func families(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("gate families", flag.ContinueOnError)
	var o famOptions
	var cvs string
	fs.IntVar(&o.pairs, "pairs", 2000, "pairs per setting")
	fs.StringVar(&cvs, "cvs", famCVs, "run-to-run CVs within a session")
	fs.IntVar(&o.sessions, "sessions", gate.DefaultBaselineSessions, "baseline sessions of the default flow")
	fs.IntVar(&o.sessionRuns, "session-runs", gate.DefaultBaselineRuns, "runs per baseline session")
	fs.IntVar(&o.oneRuns, "one-session-runs", gate.DefaultRuns, "runs of the one-session baseline rows")
	fs.IntVar(&o.start, "start", gate.DefaultRuns, "current runs at the first look")
	fs.IntVar(&o.cap, "cap", check.DefaultSchedule.Cap, "current runs at the last look of the identical pairs")
	fs.Float64Var(&o.margin, "margin", check.DefaultMargin, "δ of the identical pairs")
	fs.Float64Var(&o.family, "alpha", check.DefaultAlpha, "the gate's family alpha")
	fs.Uint64Var(&o.seed, "seed", 1, "seed")
	fs.IntVar(&o.workers, "workers", 2, "pairs compared at once")
	fs.StringVar(&o.only, "only", "", "run only the settings whose name contains one of these |-separated strings")
	fs.BoolVar(&o.explain, "explain", false, "print each identical pair the gate called regressed: its look and the comparison that failed it (to stderr)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if o.cvs, err = parseCVs(cvs); err != nil {
		return err
	}
	if o.pairs < 1 || o.sessions < 1 || o.sessionRuns < 2 || o.oneRuns < 2 || o.start < 2 || o.cap < o.start || o.workers < 1 {
		return fmt.Errorf("want -pairs >= 1, -sessions >= 1, -session-runs >= 2, -one-session-runs >= 2, -start >= 2, -cap >= -start, -workers >= 1")
	}
	settings := o.settings()
	fmt.Fprintf(w, "# bench/gate families: the regression gate on constructed pairs (no runs), through gate.Compare with its sequential looks\n")
	fmt.Fprintf(w, "# default flow: a baseline of %d sessions of %d runs; current one session, looks %v; δ %s; family alpha %g; seed %d; %d pairs per setting\n",
		o.sessions, o.sessionRuns, check.Schedule{Start: o.start, Cap: o.cap}.Looks(), pct(o.margin), o.family, o.seed, o.pairs)
	fmt.Fprintf(w, "# a run's statistic = nominal × exp(session offset + run noise) × a 0.5%% log-normal floor per statistic; old rule: every run independent (sessions pooled), both ends at the Holm level\n\n")
	fmt.Fprintln(w, famHead)
	start := time.Now()
	for i, s := range settings {
		if !selected(s.name, o.only) {
			continue
		}
		s.index = i
		t0 := time.Now()
		r := o.run(s)
		famRow(w, r)
		fmt.Fprintf(stderr, "gate families: %s: %d pairs in %s\n", s.name, s.pairs, time.Since(t0).Round(time.Millisecond))
	}
	fmt.Fprintf(w, "\n# total %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// famCVs are gate families' CVs by default; a setting's draws depend on the seed and its
// place in the settings at these CVs (gate real draws the same pairs).
const famCVs = "0.02,0.03,0.05"

// parseCVs parses a comma-separated list of CVs in (0, 1).
func parseCVs(list string) ([]float64, error) {
	var out []float64
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v > 0 && v < 1) {
			return nil, fmt.Errorf("-cvs: %q is not a CV in (0, 1)", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// stderr is where progress goes (a variable so that tests can quiet it).
var stderr io.Writer = io.Discard

type famOptions struct {
	pairs, sessions, sessionRuns, oneRuns, start, cap, workers int
	cvs                                                        []float64
	margin, family                                             float64
	seed                                                       uint64
	only                                                       string
	explain                                                    bool
}

// noiseFamily draws a side's run noise (log scale) for the runs of one session.
type noiseFamily struct {
	name string
	// tails: "normal", "t3" (Student's t with 3 df, scaled to the CV), "contam" (a
	// share of runs shifted 3–5 CVs slower)
	tails   string
	contam  float64 // share of contaminated runs
	rho     float64 // lag-1 autocorrelation within a session (AR(1))
	session float64 // between-session offset sd, as a multiple of the CV
}

func (f noiseFamily) draw(r *rand.Rand, n int, cv float64) []float64 {
	out := make([]float64, n)
	off := f.session * cv * r.NormFloat64()
	x := 0.0
	for i := range out {
		e := cv * r.NormFloat64()
		switch f.tails {
		case "t3":
			e = cv * studentT3(r) / math.Sqrt(3)
		case "contam":
			if r.Float64() < f.contam {
				e += cv * (3 + 2*r.Float64())
			}
		}
		if f.rho > 0 {
			// Stationary AR(1) with the CV as its marginal sd.
			if i == 0 {
				x = e
			} else {
				x = f.rho*x + math.Sqrt(1-f.rho*f.rho)*e
			}
			e = x
		}
		out[i] = off + e
	}
	return out
}

// studentT3 draws Student's t with 3 degrees of freedom.
func studentT3(r *rand.Rand) float64 {
	z := r.NormFloat64()
	c := 0.0
	for range 3 {
		g := r.NormFloat64()
		c += g * g
	}
	return z / math.Sqrt(c/3)
}

var famList = []noiseFamily{
	{name: "independent, normal", tails: "normal"},
	{name: "heavy tails, t(3)", tails: "t3"},
	{name: "15% of runs 3–5 CVs slower", tails: "contam", contam: 0.15},
	{name: "lag-1 correlation 0.3", tails: "normal", rho: 0.3},
	{name: "lag-1 correlation 0.7", tails: "normal", rho: 0.7},
	{name: "session offsets sd CV/2", tails: "normal", session: 0.5},
	{name: "session offsets sd CV", tails: "normal", session: 1},
}

type famSetting struct {
	name        string
	index       int
	fam         noiseFamily
	cv          float64
	slowdown    float64
	margin      float64
	sessions    int // baseline sessions
	sessionRuns int
	sched       check.Schedule
	pairs       int
	target      string
}

func (o famOptions) settings() []famSetting {
	def := func(name string, fam noiseFamily, cv, slow, margin float64, capRuns int, target string) famSetting {
		return famSetting{name: name, fam: fam, cv: cv, slowdown: slow, margin: margin, sessions: o.sessions, sessionRuns: o.sessionRuns,
			sched: check.Schedule{Start: o.start, Cap: capRuns}, pairs: o.pairs, target: target}
	}
	var out []famSetting
	indep := famList[0]
	out = append(out,
		def("10% slower, CV 3%, δ 5%, ≤ 10 runs", indep, 0.03, 1.10, 0.05, 10, "caught >= 95%"),
		def("5% slower, CV 2%, δ 2%, ≤ 20 runs", indep, 0.02, 1.05, 0.02, 20, "caught >= 80%"),
	)
	for _, cv := range o.cvs {
		for _, f := range famList {
			out = append(out, def(fmt.Sprintf("identical, CV %s, %s", pct(cv), f.name), f, cv, 1, o.margin, o.cap, "false alarms <= 1% (95% bound)"))
		}
	}
	for _, cv := range o.cvs {
		for _, f := range []noiseFamily{famList[0], famList[4], famList[6]} {
			s := def(fmt.Sprintf("identical, CV %s, %s, one-session baseline of %d", pct(cv), f.name, o.oneRuns), f, cv, 1, o.margin, o.cap, "false alarms <= 1% (95% bound)")
			s.sessions, s.sessionRuns = 1, o.oneRuns
			out = append(out, s)
		}
	}
	return out
}

type famResult struct {
	s                             famSetting
	fail, noReg, inconcl          int
	oldFail, oldNoReg, oldInconcl int
	runs, oldRuns                 int
	used                          int // runs measured (pairResult.used, summed)
}

// nominal are the primary statistics at speed 1, as bench/gate's mock gives them.
var nominal = map[string]float64{"ttft_p50": 0.1, "itl_p50": 0.02, "latency_p50": 0.16, "output_tps": 295}

// run compares every pair of s, workers at a time; each pair draws from its own
// generator, so a seed reproduces a setting whatever the scheduling.
func (o famOptions) run(s famSetting) famResult {
	res := famResult{s: s}
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := o.pair(s, i)
				mu.Lock()
				res.add(p)
				mu.Unlock()
			}
		}()
	}
	for i := range s.pairs {
		next <- i
	}
	close(next)
	wg.Wait()
	return res
}

type pairResult struct {
	change, old   check.Change
	runs, oldRuns int
	used          int // runs the pair measured: the baseline's and the current runs either rule took
}

func (r *famResult) add(p pairResult) {
	r.runs += p.runs
	r.oldRuns += p.oldRuns
	r.used += p.used
	count := func(c check.Change, fail, noReg, inconcl *int) {
		switch c {
		case check.ChangeRegressed:
			*fail++
		case check.ChangeInconclusive:
			*inconcl++
		default:
			*noReg++
		}
	}
	count(p.change, &r.fail, &r.noReg, &r.inconcl)
	count(p.old, &r.oldFail, &r.oldNoReg, &r.oldInconcl)
}

// pair draws one pair and gates it, by the gate and by the old rule.
func (o famOptions) pair(s famSetting, i int) pairResult {
	d := o.draw(s, i)
	looks := s.sched.Looks()
	var out pairResult
	for li, k := range looks {
		if ch, gr, ok := o.gateLook(s, d.base, d.cur.Runs[:k], li); ok {
			out.change, out.runs = ch, k
			if o.explain && s.slowdown == 1 && ch == check.ChangeRegressed {
				fmt.Fprint(stderr, explainFalseAlarm(s, i, li, k, gr))
			}
			break
		}
	}
	for li, k := range looks {
		if ch, ok := o.oldLook(s, d.base, d.cur.Runs[:k], li); ok {
			out.old, out.oldRuns = ch, k
			break
		}
	}
	out.used = len(d.base.Runs) + max(out.runs, out.oldRuns)
	return out
}

// drawnPair is one pair as drawn: each run's log-speed and session (the noise the real
// mode injects into the mock), and the simulated statistics of those runs.
type drawnPair struct {
	base, cur *gate.Series // simulated: nominal × e^y × the 0.5% floor
	baseRuns  []plannedRun // in session order, sessions b0, b1, …
	curRuns   []plannedRun // the cap's worth, session "c"
}

// plannedRun is one run of a pair: its log-speed y (the mock's latency factor is e^y)
// and the session it belongs to.
type plannedRun struct {
	y       float64
	session string
}

// draw draws pair i of s from its own generator (so a seed reproduces a setting
// whatever the scheduling): the baseline's sessions, then the current side's runs up to
// the last look, each run's statistics after its session's speeds.
func (o famOptions) draw(s famSetting, i int) drawnPair {
	r := rand.New(rand.NewPCG(o.seed, uint64(s.index)<<32|uint64(i)))
	speeds := func(n int, cur bool) []float64 {
		ys := s.fam.draw(r, n, s.cv)
		if cur {
			for j := range ys {
				ys[j] += math.Log(s.slowdown)
			}
		}
		return ys
	}
	same := &gate.Workload{} // both sides one (constructed) workload
	d := drawnPair{base: &gate.Series{Workload: same}, cur: &gate.Series{Workload: same}}
	for k := range s.sessions {
		id := fmt.Sprintf("b%d", k)
		for _, y := range speeds(s.sessionRuns, false) {
			d.base.Runs = append(d.base.Runs, runStats(r, y, id))
			d.baseRuns = append(d.baseRuns, plannedRun{y: y, session: id})
		}
	}
	looks := s.sched.Looks()
	for _, y := range speeds(looks[len(looks)-1], true) {
		d.cur.Runs = append(d.cur.Runs, runStats(r, y, "c"))
		d.curRuns = append(d.curRuns, plannedRun{y: y, session: "c"})
	}
	return d
}

// gateLook is the gate's answer at look li (cur holds that look's runs) with the gate's
// result, and whether the pair stops there: check.Settled says so, or it is the last look.
// A pair the gate refused to compare (its workload differs, or is unknown) is a bug of
// the harness, not an answer to count: it panics, naming the refusal.
func (o famOptions) gateLook(s famSetting, base *gate.Series, cur []gate.RunStats, li int) (check.Change, gate.GateResult, bool) {
	gr := gate.Compare(base, &gate.Series{Workload: base.Workload, Runs: cur}, gate.Gate{Margin: s.margin}, s.sched.Alpha(o.family, li))
	if len(gr.Workload) > 0 {
		panic(fmt.Sprintf("bench/gate: %s: the gate compared nothing: %s", s.name, gr.Headline()))
	}
	if check.Settled(gr.Comparisons) || li == len(s.sched.Looks())-1 {
		return gr.Change(), gr, true
	}
	return check.ChangeInconclusive, gr, false
}

// explainFalseAlarm says why identical pair i of s was called regressed: at which look,
// and for each regressed primary statistic its change, level, standard error, degrees of
// freedom, where the session noise came from and what the dependence tests found.
func explainFalseAlarm(s famSetting, i, look, runs int, gr gate.GateResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "false alarm: %s, pair %d, look %d (%d current runs)\n", s.name, i, look+1, runs)
	for _, c := range gr.Comparisons {
		if !c.Primary || c.Change != check.ChangeRegressed {
			continue
		}
		fmt.Fprintf(&b, "    %s %+.2f%% at alpha %.3g: se %.4f, df %.1f, p %.2g, sessions %d/%d (%s, session CV %.2f%%)",
			c.Metric, 100*(c.Ratio-1), c.Alpha, c.SE, c.DF, c.PValue, c.BaselineSessions, c.CurrentSessions, c.SessionSource, 100*c.SessionCV)
		for k, d := range c.Dependence {
			if d.Widened {
				fmt.Fprintf(&b, "; %s widened: rho %.2f (pooled %v), factor %.2f", [2]string{"baseline", "current"}[k], d.Rho, d.Pooled, d.Factor)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// oldLook is the old rule's answer at look li, and whether it stops there (a decided
// answer, or the last look).
func (o famOptions) oldLook(s famSetting, base *gate.Series, cur []gate.RunStats, li int) (check.Change, bool) {
	cs := &gate.Series{Runs: cur}
	var ms []oldMetric
	for _, st := range gate.RunStatList() {
		if _, ok := nominal[st.Name]; !ok {
			continue
		}
		b, _ := base.Values(st.Name)
		c, _ := cs.Values(st.Name)
		ms = append(ms, oldMetric{base: b, cur: c, higherIsBetter: st.HigherIsBetter})
	}
	ch := oldFamily(ms, s.sched.Alpha(o.family, li), s.margin)
	return ch, ch != check.ChangeInconclusive || li == len(s.sched.Looks())-1
}

// runStats is one run's primary statistics at log-speed y (latencies × e^y, throughput
// ÷), each with its own 0.5% floor, in session id.
func runStats(r *rand.Rand, y float64, id string) gate.RunStats {
	rs := gate.RunStats{Session: id, Stats: map[string]float64{}}
	for _, st := range gate.RunStatList() {
		v, ok := nominal[st.Name]
		if !ok {
			continue
		}
		f := y
		if st.HigherIsBetter {
			f = -y
		}
		rs.Stats[st.Name] = v * math.Exp(f+0.005*r.NormFloat64())
	}
	return rs
}

const famHead = "| setting | pairs | gate: regressed (95% CP) | gate: no regression | gate: inconclusive | runs/side | old rule: regressed (95% CP) | old rule: no regression | target |\n|---|---|---|---|---|---|---|---|---|"

func famRow(w io.Writer, r famResult) {
	fmt.Fprintf(w, "| %s | %s |\n", r.s.name, famCells(r))
}

// famCells are a result's cells after the setting's name: pairs through target.
func famCells(r famResult) string {
	n := r.s.pairs
	share := func(k int) string { return pct1(float64(k) / float64(n)) }
	target := r.s.target
	rate := float64(r.fail) / float64(n)
	switch {
	case r.s.slowdown == 1:
		// Met when the 95% upper bound is within 1%, not only the rate itself.
		target += metText(distribution.ClopperPearson(r.fail, n, 0.95).Hi <= 0.01)
	case strings.Contains(target, "95%"):
		target += metText(rate >= 0.95)
	default:
		target += metText(rate >= 0.80)
	}
	return fmt.Sprintf("%d | %s | %s | %s | %.1f | %s | %s | %s", n, rateCP(r.fail, n), share(r.noReg), share(r.inconcl),
		float64(r.runs)/float64(n), rateCP(r.oldFail, n), share(r.oldNoReg), target)
}

func metText(ok bool) string {
	if ok {
		return ": met"
	}
	return ": NOT met"
}

// rateCP prints k/n as a percentage with the upper end of its 95% Clopper–Pearson
// interval: "3/2000 = 0.15% (≤ 0.44%)".
func rateCP(k, n int) string {
	iv := distribution.ClopperPearson(k, n, 0.95)
	return fmt.Sprintf("%d/%d = %s (≤ %s)", k, n, pct2(float64(k)/float64(n)), pct2(iv.Hi))
}

func pct2(x float64) string { return strconv.FormatFloat(x*100, 'f', 2, 64) + "%" }
