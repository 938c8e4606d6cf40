package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
)

// realFamilies is the families calibration on real runs: the same settings and the same
// draws as `gate families` (pair i of a setting draws the same session offsets and run
// noise from the same seed), but each run of a pair is a real run, a few dozen streamed
// requests through loadgen to an in-process mock whose latencies (TTFT and ITL) are
// multiplied by that run's drawn factor e^y (mockserver.Server.SetLatencyScale): the gate
// sees the mock's own measurement noise where the simulation adds a 0.5% floor. The
// baseline is the default flow's (10 sessions of 10 runs, labelled b0…b9), the current
// side one session ("c") on the sequential plan, run look by look as far as the gate (or
// the old rule) still needs. Each row is printed beside the simulation of the same pairs
// and of -sim-pairs pairs, so a reader sees both.
//
//	gate real [-pairs 100] [-cvs 0.03] [-only …] [-workers 8] [-sim-pairs 2000] [run flags]
func realFamilies(args []string, w io.Writer) error {
	o, err := parseReal(args)
	if err != nil {
		return err
	}
	return o.run(w)
}

type realOptions struct {
	fam        famOptions // the settings, the draws and the gate's plan
	runOpt     options    // the runs: requests, concurrency, the mock's latencies, workers
	simPairs   int        // pairs of the simulation row beside each setting (0 = none)
	oneSession bool       // also the one-session-baseline rows
	verbose    bool       // the first pair's verdicts to stderr
	onRun      func(realRun)
}

// realRun is one finished run, for tests: the setting, the pair, the side, the run's
// number on its side, the latency factor the mock was given and what the run measured.
type realRun struct {
	setting string
	pair    int
	side    string // "baseline" or "current"
	n       int
	scale   float64
	stats   gate.RunStats
}

func parseReal(args []string) (realOptions, error) {
	fs := flag.NewFlagSet("gate real", flag.ContinueOnError)
	var o realOptions
	var cvs string
	fs.IntVar(&o.fam.pairs, "pairs", 100, "pairs per setting, each of real runs")
	fs.StringVar(&cvs, "cvs", "0.03", "run-to-run CVs within a session (the slowdown rows keep their own)")
	fs.IntVar(&o.fam.sessions, "sessions", gate.DefaultBaselineSessions, "baseline sessions of the default flow")
	fs.IntVar(&o.fam.sessionRuns, "session-runs", gate.DefaultBaselineRuns, "runs per baseline session")
	fs.IntVar(&o.fam.oneRuns, "one-session-runs", gate.DefaultRuns, "runs of the one-session baseline rows (with -one-session)")
	fs.BoolVar(&o.oneSession, "one-session", false, "also the rows with a one-session baseline")
	fs.BoolVar(&o.verbose, "v", false, "print the first pair's verdicts of each setting (to stderr)")
	fs.IntVar(&o.fam.start, "start", gate.DefaultRuns, "current runs at the first look")
	fs.IntVar(&o.fam.cap, "cap", check.DefaultSchedule.Cap, "current runs at the last look of the identical pairs")
	fs.Float64Var(&o.fam.margin, "margin", check.DefaultMargin, "δ of the identical pairs")
	fs.Float64Var(&o.fam.family, "alpha", check.DefaultAlpha, "the gate's family alpha")
	fs.Uint64Var(&o.fam.seed, "seed", 1, "seed (the same pairs as gate families with this seed)")
	fs.StringVar(&o.fam.only, "only", "", "run only the settings whose name contains one of these |-separated strings, e.g. \"lag-1 correlation 0.7|slower\"")
	fs.IntVar(&o.simPairs, "sim-pairs", 2000, "pairs of the simulation row printed beside each setting (0 = none)")
	fs.IntVar(&o.fam.workers, "sim-workers", 2, "pairs the simulation compares at once")
	fs.IntVar(&o.runOpt.workers, "workers", 8, "real runs in flight at once (of different pairs), each against its own mock")
	fs.IntVar(&o.runOpt.requests, "requests", 24, "measured requests per run")
	fs.IntVar(&o.runOpt.requestsWarmup, "warmup", 2, "warm-up requests per run")
	fs.IntVar(&o.runOpt.conc, "concurrency", 8, "concurrent streams per run")
	fs.IntVar(&o.runOpt.osl, "osl", 4, "output tokens per request")
	fs.Float64Var(&o.runOpt.ttftMs, "ttft-ms", 100, "the mock's TTFT (ms) at factor 1 (a few ms measure with a floor of 10-20% on a busy 2-core machine)")
	fs.Float64Var(&o.runOpt.itlMs, "itl-ms", 20, "the mock's ITL (ms) at factor 1")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("gate real: unexpected argument %q", fs.Arg(0))
	}
	var err error
	if o.fam.cvs, err = parseCVs(cvs); err != nil {
		return o, err
	}
	f := o.fam
	if f.pairs < 1 || f.sessions < 1 || f.sessionRuns < 2 || f.oneRuns < 2 || f.start < 2 || f.cap < f.start || f.workers < 1 || o.simPairs < 0 {
		return o, fmt.Errorf("want -pairs >= 1, -sessions >= 1, -session-runs >= 2, -one-session-runs >= 2, -start >= 2, -cap >= -start, -sim-workers >= 1, -sim-pairs >= 0")
	}
	r := o.runOpt
	if r.workers < 1 || r.requests < 2 || r.requestsWarmup < 0 || r.conc < 1 || r.osl < 2 || !(r.ttftMs > 0) || !(r.itlMs > 0) {
		return o, fmt.Errorf("want -workers >= 1, -requests >= 2, -warmup >= 0, -concurrency >= 1, -osl >= 2, -ttft-ms > 0, -itl-ms > 0")
	}
	return o, nil
}

// settings are the families settings the real mode runs: all but the one-session rows
// unless asked, then -only. Each is numbered as gate families at its default CVs numbers
// it, so that it draws the same pairs (a CV outside them gets a number of its own).
func (o realOptions) settings() []famSetting {
	def := o.fam
	def.cvs, _ = parseCVs(famCVs)
	index := map[string]int{}
	for i, s := range def.settings() {
		index[s.name] = i
	}
	var out []famSetting
	for i, s := range o.fam.settings() {
		var ok bool
		if s.index, ok = index[s.name]; !ok {
			s.index = 1000 + i
		}
		if (s.sessions == 1 && !o.oneSession) || !selected(s.name, o.fam.only) {
			continue
		}
		out = append(out, s)
	}
	return out
}

const realHead = "| setting | runs by | pairs | gate: regressed (95% CP) | gate: no regression | gate: inconclusive | runs/side | old rule: regressed (95% CP) | old rule: no regression | target | runs | wall time | pairs/min |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"

func (o realOptions) run(w io.Writer) error {
	settings := o.settings()
	if len(settings) == 0 {
		return fmt.Errorf("-only %q selects no setting", o.fam.only)
	}
	b, err := newBench(o.runOpt)
	if err != nil {
		return err
	}
	defer b.close()
	r := o.runOpt
	fmt.Fprintf(w, "# bench/gate real: the regression gate on pairs of real runs against the in-process mock, through gate.Compare with its sequential looks\n")
	fmt.Fprintf(w, "# default flow: a baseline of %d sessions of %d runs (b0…b%d); current one session (c), looks %v; δ %s; family alpha %g; seed %d\n",
		o.fam.sessions, o.fam.sessionRuns, o.fam.sessions-1, check.Schedule{Start: o.fam.start, Cap: o.fam.cap}.Looks(), pct(o.fam.margin), o.fam.family, o.fam.seed)
	fmt.Fprintf(w, "# a run: %d streamed requests (+%d warm-up) at concurrency %d, OSL %d, mock TTFT %gms ITL %gms × the run's factor e^(session offset + run noise), drawn as gate families draws pair i; %d runs in flight\n",
		r.requests, r.requestsWarmup, r.conc, r.osl, r.ttftMs, r.itlMs, r.workers)
	fmt.Fprintf(w, "# beside each: the simulation of the same pairs (the same factors, a 0.5%% floor in place of the mock's measurement) and of %d pairs\n\n", o.simPairs)
	fmt.Fprintln(w, realHead)
	start := time.Now()
	for _, s := range settings {
		t0 := time.Now()
		res, runs, err := o.realSetting(b, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		wall := time.Since(t0)
		realRow(w, res, "real runs", runs, wall)
		fmt.Fprintf(stderr, "gate real: %s: %d pairs in %s (%d runs)\n", s.name, s.pairs, wall.Round(time.Second), runs)
		t0 = time.Now()
		same := famResult{s: s}
		for i := range s.pairs {
			same.add(o.fam.pair(s, i))
		}
		realRow(w, same, fmt.Sprintf("simulated, the same %d pairs", s.pairs), same.used, time.Since(t0))
		if o.simPairs > 0 {
			t0 = time.Now()
			sim := s
			sim.pairs = o.simPairs
			sr := o.fam.run(sim)
			realRow(w, sr, fmt.Sprintf("simulated, %d pairs", o.simPairs), sr.used, time.Since(t0))
		}
	}
	fmt.Fprintf(w, "\n# total %s\n", time.Since(start).Round(time.Second))
	return nil
}

func realRow(w io.Writer, r famResult, by string, runs int, wall time.Duration) {
	perMin := float64(r.s.pairs) / wall.Minutes()
	fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s |\n", r.s.name, by, famCells(r), runs, wall.Round(time.Millisecond), strconv.FormatFloat(perMin, 'g', 3, 64))
}

// realPair is one pair in progress: its draws, the runs measured so far and where each
// rule stopped.
type realPair struct {
	i                int
	d                drawnPair
	base             *gate.Series
	cur              []gate.RunStats // the cap's worth; the first have are measured
	have             int
	res              pairResult
	newDone, oldDone bool
}

type realJob struct {
	p    *realPair
	side string
	n    int
	pl   plannedRun
	out  *gate.RunStats
}

// realSetting runs every pair of s: the baselines first, session by session and run n
// of every pair before run n+1 (a pair's sessions are then spread in time, as sessions
// recorded on different days are), then the current side look by look for the pairs
// either rule has not stopped, each look's runs in the same order. It returns the result
// and the runs measured.
func (o realOptions) realSetting(b *bench, s famSetting) (famResult, int, error) {
	ps := make([]*realPair, s.pairs)
	var jobs []realJob
	wl := b.workload()
	for i := range ps {
		d := o.fam.draw(s, i)
		p := &realPair{i: i, d: d, base: &gate.Series{Workload: wl, Runs: make([]gate.RunStats, len(d.baseRuns))}, cur: make([]gate.RunStats, len(d.curRuns))}
		ps[i] = p
	}
	for n := range len(ps[0].d.baseRuns) {
		for _, p := range ps {
			jobs = append(jobs, realJob{p: p, side: "baseline", n: n, pl: p.d.baseRuns[n], out: &p.base.Runs[n]})
		}
	}
	runs := 0
	if err := o.runJobs(b, s, jobs); err != nil {
		return famResult{}, runs, err
	}
	runs += len(jobs)
	fmt.Fprintf(stderr, "gate real: %s: baselines, %d runs\n", s.name, runs)
	for li, k := range s.sched.Looks() {
		var live []*realPair
		for _, p := range ps {
			if !p.newDone || !p.oldDone {
				live = append(live, p)
			}
		}
		if len(live) == 0 {
			break
		}
		jobs = jobs[:0]
		for n := live[0].have; n < k; n++ { // every live pair has the same runs: the last look's
			for _, p := range live {
				jobs = append(jobs, realJob{p: p, side: "current", n: n, pl: p.d.curRuns[n], out: &p.cur[n]})
			}
		}
		if err := o.runJobs(b, s, jobs); err != nil {
			return famResult{}, runs, err
		}
		runs += len(jobs)
		fmt.Fprintf(stderr, "gate real: %s: look %d (%d runs) of %d pairs\n", s.name, li+1, k, len(live))
		for _, p := range live {
			p.have = k
			if !p.newDone {
				if ch, _, ok := o.fam.gateLook(s, p.base, p.cur[:k], li); ok {
					p.res.change, p.res.runs, p.newDone = ch, k, true
				}
			}
			if !p.oldDone {
				if ch, ok := o.fam.oldLook(s, p.base, p.cur[:k], li); ok {
					p.res.old, p.res.oldRuns, p.oldDone = ch, k, true
				}
			}
		}
	}
	if o.verbose {
		p := ps[0]
		gr := gate.Compare(p.base, &gate.Series{Workload: p.base.Workload, Runs: p.cur[:p.res.runs]}, gate.Gate{Margin: s.margin}, s.sched.Alpha(o.fam.family, 0))
		fmt.Fprintf(stderr, "gate real: %s: pair 0 at %d current runs:\n", s.name, p.res.runs)
		for _, v := range gr.AllVerdicts() {
			fmt.Fprintf(stderr, "%s\n", v)
		}
	}
	res := famResult{s: s}
	for _, p := range ps {
		p.res.used = len(p.base.Runs) + p.have
		res.add(p.res)
	}
	return res, runs, nil
}

// runJobs runs jobs in their order, o.runOpt.workers at a time, each against a mock of its
// own with the job's latency factor, and labels each run with its session and number.
func (o realOptions) runJobs(b *bench, s famSetting, jobs []realJob) error {
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan realJob)
	for range o.runOpt.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				mu.Lock()
				failed := firstErr != nil
				mu.Unlock()
				if failed {
					continue
				}
				scale := math.Exp(j.pl.y)
				rs, _, err := b.oneRun(scale, false)
				if err != nil {
					// Once more at the same factor (the draw stands): a setting is
					// minutes of runs, not to be lost to one hiccup of the machine.
					fmt.Fprintf(stderr, "gate real: pair %d, %s run %d: %v; running it again\n", j.p.i, j.side, j.n+1, err)
					rs, _, err = b.oneRun(scale, false)
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("pair %d, %s run %d: %w", j.p.i, j.side, j.n+1, err)
				}
				if err == nil {
					rs.Session, rs.Run = j.pl.session, j.n+1
					*j.out = rs
					if o.onRun != nil {
						o.onRun(realRun{setting: s.name, pair: j.p.i, side: j.side, n: j.n, scale: scale, stats: rs})
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return firstErr
}
