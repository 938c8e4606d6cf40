// Command gate measures the regression gate's own error rates on real runs against the
// mock. bench/gate/run.sh drives it: pairs of sets of real runs against the in-process
// mock, whose speed is drawn per run (mockserver.Config.LatencyScale) with a given
// run-to-run CV, compared by the run-level gate (check.CompareFamily over the primary
// run statistics, sequential looks by check.Schedule) and, on the first run of each
// side, by the old pooled rule (check.NoRegression on TTFT, ITL and request latency, as
// AssertNoRegression did). It is a benchmark: it prints rates with Clopper–Pearson
// intervals beside the targets, and asserts nothing.
//
//	gate [-pairs 200] [-slow-pairs 100] [-cvs 0,0.02,0.03,0.05] [-workers 4] …
//	gate burn      # spins every CPU until killed: the CPU-burning neighbour
//	gate families  # the gate on constructed pairs from noise families (families.go)
//	gate real      # the same families' pairs, each run a real run (real.go)
//	gate noise     # the machine's noise floor: runs at a fixed speed (noise.go)
//
// Identical pairs (no change) measure false alarms, half of them with a CPU-burning
// process beside the current side; slowdown pairs (the current side's mock slower by a
// factor) measure power. Every run is a real run: a few dozen streamed requests through
// loadgen to a mock that sleeps its TTFT and ITL, scaled by that run's speed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/tokenizer"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "burn" {
		burn()
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "families" {
		stderr = os.Stderr
		if err := families(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "gate:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "real" {
		stderr = os.Stderr
		if err := realFamilies(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "gate:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "noise" {
		if err := noise(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "gate:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
		os.Exit(1)
	}
}

// burn spins BURN_CPUS goroutines (default 1) until the process is killed.
func burn() {
	n, err := strconv.Atoi(os.Getenv("BURN_CPUS"))
	if err != nil || n < 1 {
		n = 1
	}
	runtime.GOMAXPROCS(n)
	matchAutogroup()
	// The parent holds our stdin open: when it exits, however it exits, so do we.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	for i := range n {
		go func() {
			x := uint64(i)
			for {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}()
	}
	select {}
}

type options struct {
	pairs, slowPairs      int
	cvs                   []float64
	requests, conc, osl   int
	requestsWarmup        int
	ttftMs, itlMs         float64
	ttftSpread, itlSpread float64
	workers               int
	seed                  uint64
	family                float64
	start, cap            int
	burnCPUs              int
	only                  string
	verbose               bool
	simulate              bool
	ab                    bool
	burnShared            bool
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	var o options
	var cvs string
	fs.IntVar(&o.pairs, "pairs", 200, "identical-run pairs per run-to-run CV (half with a CPU burner beside the current side)")
	fs.IntVar(&o.slowPairs, "slow-pairs", 100, "pairs per slowdown setting")
	fs.StringVar(&cvs, "cvs", "0,0.02,0.03,0.05", "run-to-run CVs of the mock's speed for the identical pairs")
	fs.IntVar(&o.requests, "requests", 48, "measured requests per run")
	fs.IntVar(&o.requestsWarmup, "warmup", 2, "warm-up requests per run")
	fs.IntVar(&o.conc, "concurrency", 16, "concurrent streams per run")
	fs.IntVar(&o.osl, "osl", 4, "output tokens per request")
	fs.Float64Var(&o.ttftMs, "ttft-ms", 100, "the mock's mean TTFT (ms) at speed 1")
	fs.Float64Var(&o.itlMs, "itl-ms", 20, "the mock's mean ITL (ms) at speed 1")
	fs.Float64Var(&o.ttftSpread, "ttft-cv", 0, "the CV of the mock's per-request TTFT (lognormal; 0 = fixed)")
	fs.Float64Var(&o.itlSpread, "itl-cv", 0, "the CV of the mock's per-token ITL (lognormal; 0 = fixed)")
	fs.IntVar(&o.workers, "workers", 8, "runs in flight at once (different pairs of one setting), each against its own mock")
	fs.IntVar(&o.burnCPUs, "burn-cpus", 1, "CPUs the burner spins (0 = no burner: all identical pairs quiet)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the speed draws")
	fs.Float64Var(&o.family, "alpha", check.DefaultAlpha, "the gate's family alpha")
	fs.IntVar(&o.start, "start", 5, "runs per side at the first look")
	fs.IntVar(&o.cap, "cap", 20, "runs per side at the last look of the identical pairs (the slowdowns' caps, 10 and 20, are the targets')")
	fs.StringVar(&o.only, "only", "", "run only the settings whose name contains one of these \"|\"-separated strings (names contain commas), e.g. \"CV 0%|CV 2%, quiet\"")
	fs.BoolVar(&o.verbose, "v", false, "print the first pair's verdicts of each setting")
	fs.BoolVar(&o.ab, "ab", false, "add, per CV, identical pairs with the burner beside both sides (an A/B comparison: both builds share the neighbour), to set beside the burner-beside-current pairs")
	fs.BoolVar(&o.burnShared, "burn-shared", false, "start the burner in the benchmark's own session, sharing its CPU share (as a parallel build step in the same CI container shares the job's CPU quota), instead of as a neighbour of equal priority")
	fs.BoolVar(&o.simulate, "simulate", false, "no runs: draw each run's statistics as nominal × speed × a 0.5% log-normal floor, to show the design's own rates at exactly the stated CVs (the old rule needs requests and is not evaluated)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, s := range strings.Split(cvs, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || v < 0 {
			return fmt.Errorf("-cvs: %q is not a CV >= 0", s)
		}
		o.cvs = append(o.cvs, v)
	}
	if o.pairs < 1 || o.slowPairs < 0 || o.workers < 1 || o.requests < 2 || o.conc < 1 || o.osl < 2 {
		return fmt.Errorf("want -pairs >= 1, -slow-pairs >= 0, -workers >= 1, -requests >= 2, -concurrency >= 1, -osl >= 2")
	}
	b := &bench{o: o, sim: rand.New(rand.NewPCG(o.seed, 0x5eed))}
	if !o.simulate {
		var err error
		if b, err = newBench(o); err != nil {
			return err
		}
		defer b.close()
	}
	var settings []setting
	if o.slowPairs > 0 {
		settings = append(settings,
			setting{name: "10% slower, CV 3%, δ 5%, ≤ 10 runs/side", cv: 0.03, slowdown: 1.10, margin: 0.05,
				sched: check.Schedule{Start: o.start, Cap: 10}, pairs: o.slowPairs, target: "caught >= 95%", targetMin: 0.95},
			setting{name: "5% slower, CV 2%, δ 2%, ≤ 20 runs/side", cv: 0.02, slowdown: 1.05, margin: 0.02,
				sched: check.Schedule{Start: o.start, Cap: 20}, pairs: o.slowPairs, target: "caught >= 80%", targetMin: 0.80},
		)
	}
	for _, cv := range o.cvs {
		quiet := o.pairs
		if o.burnCPUs > 0 {
			quiet = o.pairs - o.pairs/2
			settings = append(settings, setting{name: fmt.Sprintf("identical, CV %s, CPU burner%s beside current", pct(cv), shareName(o.burnShared)), cv: cv, slowdown: 1, burn: true,
				margin: 0.05, sched: check.Schedule{Start: o.start, Cap: o.cap}, pairs: o.pairs / 2, group: fmt.Sprintf("identical, CV %s", pct(cv))})
		}
		if o.ab && o.burnCPUs > 0 {
			settings = append(settings, setting{name: fmt.Sprintf("identical, CV %s, CPU burner%s beside both sides (A/B)", pct(cv), shareName(o.burnShared)), cv: cv, slowdown: 1, burnBoth: true,
				margin: 0.05, sched: check.Schedule{Start: o.start, Cap: o.cap}, pairs: o.pairs / 2})
		}
		settings = append(settings, setting{name: fmt.Sprintf("identical, CV %s, quiet", pct(cv)), cv: cv, slowdown: 1,
			margin: 0.05, sched: check.Schedule{Start: o.start, Cap: o.cap}, pairs: quiet, group: fmt.Sprintf("identical, CV %s", pct(cv))})
	}
	fmt.Fprintf(w, "# bench/gate: the run-level regression gate vs the old pooled rule\n")
	fmt.Fprintf(w, "# runs: %d streamed requests (+%d warm-up) at concurrency %d, OSL %d, mock TTFT %gms ITL %gms (lognormal CV %g/%g) × the run's speed; family alpha %g; %d workers; seed %d; burner %d CPU\n",
		o.requests, o.requestsWarmup, o.conc, o.osl, o.ttftMs, o.itlMs, o.ttftSpread, o.itlSpread, o.family, o.workers, o.seed, o.burnCPUs)
	fmt.Fprintf(w, "# new gate: primary metrics %s; sequential looks (Bonferroni-spent); false alarm = a primary metric REGRESSED\n", strings.Join(primaryNames(), ", "))
	fmt.Fprintf(w, "# old rule: check.NoRegression (Mann-Whitney p < 0.01 and median worse by >= 5%%) on TTFT, ITL, latency of the first run of each side\n")
	start := time.Now()
	fmt.Fprintln(w)
	fmt.Fprintln(w, tableHead)
	var results []result
	for i, s := range settings {
		if !selected(s.name, o.only) {
			continue
		}
		s.index = i
		t0 := time.Now()
		r, err := b.setting(s)
		if err != nil {
			return err
		}
		r.elapsed = time.Since(t0)
		results = append(results, r)
		row(w, s.name, []result{r})
		fmt.Fprintf(os.Stderr, "gate: %s: %d pairs in %s (%d runs)\n", s.name, s.pairs, r.elapsed.Round(time.Second), r.runs)
	}
	report(w, results)
	fmt.Fprintf(w, "# total %s\n", time.Since(start).Round(time.Second))
	return nil
}

// selected reports whether a setting's name contains one of only's "|"-separated parts,
// or equals a part written "=NAME" (all are selected when only is empty).
func selected(name, only string) bool {
	if only == "" {
		return true
	}
	for _, part := range strings.Split(only, "|") {
		if exact, ok := strings.CutPrefix(part, "="); ok {
			if name == exact {
				return true
			}
			continue
		}
		if part != "" && strings.Contains(name, part) {
			return true
		}
	}
	return false
}

func primaryNames() []string {
	var ns []string
	for _, s := range gate.RunStatList() {
		if s.Primary {
			ns = append(ns, s.Name)
		}
	}
	return ns
}

type setting struct {
	name, group string
	index       int
	cv          float64 // run-to-run CV of the mock's speed
	slowdown    float64 // the current side's speed factor (1 = identical)
	burn        bool    // a CPU burner beside the current side
	burnBoth    bool    // a CPU burner beside both sides, as in an interleaved A/B comparison
	margin      float64 // δ
	sched       check.Schedule
	pairs       int
	target      string
	targetMin   float64
}

type result struct {
	s                     setting
	newFail, newInconcl   int
	oldFail               int
	runsPerSide           int // summed over pairs
	runs                  int
	elapsed               time.Duration
	lookCounts            []int // pairs decided at each look
	exampleFailingVerdict string
	oldEvaluated          bool // false with -simulate: no requests
}

type bench struct {
	o       options
	tok     *tokenizer.Tokenizer
	servers chan *mockserver.Server // one mock per worker, its speed set per run
	simMu   sync.Mutex
	sim     *rand.Rand // -simulate's draws
	diag    func(string)
}

// simulated returns run statistics drawn rather than measured: each primary statistic
// is its nominal value at speed 1 (as this benchmark's mock gives) times the run's speed
// (throughputs divided by it), times an independent 0.5% log-normal floor.
func (b *bench) simulated(scale float64) gate.RunStats {
	b.simMu.Lock()
	defer b.simMu.Unlock()
	nominal := map[string]float64{"ttft_p50": 0.1, "itl_p50": 0.02, "latency_p50": 0.16, "output_tps": 295}
	rs := gate.RunStats{Requests: b.o.requests, Stats: map[string]float64{}}
	for _, st := range gate.RunStatList() {
		v, ok := nominal[st.Name]
		if !ok {
			continue
		}
		f := scale
		if st.HigherIsBetter {
			f = 1 / scale
		}
		rs.Stats[st.Name] = v * f * math.Exp(0.005*b.sim.NormFloat64())
	}
	return rs
}

// newBench starts one mock server per worker: a run sets its server's speed
// (Server.SetLatencyScale) and drives it, so no run pays for starting a mock, and
// concurrent runs never share one.
func newBench(o options) (*bench, error) {
	tok, err := tokenizer.Load("gpt2")
	if err != nil {
		return nil, err
	}
	b := &bench{o: o, tok: tok, servers: make(chan *mockserver.Server, o.workers)}
	for range o.workers {
		srv, err := mockserver.New(mockserver.WithTokenizer(tok), mockserver.WithConfig(mockserver.Config{
			Host: "127.0.0.1", DiscardRecords: true, Seed: 7,
			TTFT: latencySpec(o.ttftMs, o.ttftSpread),
			ITL:  latencySpec(o.itlMs, o.itlSpread),
		}))
		if err != nil {
			return nil, err
		}
		if err := srv.Start(); err != nil {
			return nil, err
		}
		b.servers <- srv
	}
	return b, nil
}

// close stops the mock servers.
func (b *bench) close() {
	for range b.o.workers {
		_ = (<-b.servers).Close()
	}
}

// latencySpec is a fixed latency, or a lognormal one with that mean and CV.
func latencySpec(ms, cv float64) distribution.Spec {
	if cv == 0 {
		return distribution.MustSpec(fmt.Sprintf("fixed:%g", ms))
	}
	return distribution.MustSpec(fmt.Sprintf("lognormal:mean=%g,stddev=%g", ms, ms*cv))
}

// pair is one comparison in progress.
type pair struct {
	rng        *rand.Rand
	base, cur  []gate.RunStats
	oldB, oldC []check.Request
	done       bool
	fail       bool
	inconcl    bool
	look       int
	verdict    string
}

// setting runs every pair of s look by look: at each look the baseline runs the live
// pairs still need (no burner), then their current runs (burner on when s.burn), then
// each live pair is gated.
func (b *bench) setting(s setting) (result, error) {
	r := result{s: s, oldEvaluated: !b.o.simulate}
	looks := s.sched.Looks()
	r.lookCounts = make([]int, len(looks))
	ps := make([]*pair, s.pairs)
	for i := range ps {
		ps[i] = &pair{rng: rand.New(rand.NewPCG(b.o.seed, uint64(s.index)<<32|uint64(i)))}
	}
	for li, k := range looks {
		var live []*pair
		for _, p := range ps {
			if !p.done {
				live = append(live, p)
			}
		}
		if len(live) == 0 {
			break
		}
		var stopBoth func()
		if s.burnBoth && !b.o.simulate {
			var err error
			if stopBoth, err = startBurner(b.o.burnCPUs, b.o.burnShared); err != nil {
				return r, err
			}
		}
		for _, side := range []string{"baseline", "current"} {
			var stop func()
			if side == "current" && s.burn && !b.o.simulate {
				var err error
				if stop, err = startBurner(b.o.burnCPUs, b.o.burnShared); err != nil {
					return r, err
				}
			}
			err := b.runSide(s, live, side, k, &r)
			if stop != nil {
				stop()
			}
			if err != nil {
				if stopBoth != nil {
					stopBoth()
				}
				return r, err
			}
		}
		if stopBoth != nil {
			stopBoth()
		}
		alpha := s.sched.Alpha(b.o.family, li)
		for _, p := range live {
			cs := check.CompareFamily(alpha, series(p.base[:k], p.cur[:k], s.margin))
			settled := check.Settled(cs)
			if !settled && li < len(looks)-1 {
				continue
			}
			p.done, p.look = true, li
			r.lookCounts[li]++
			r.runsPerSide += k
			for _, c := range cs {
				if c.Change == check.ChangeRegressed {
					p.fail = true
					if p.verdict == "" {
						p.verdict = c.Verdict().String()
					}
				}
			}
			p.inconcl = !p.fail && !settled
			if b.o.verbose && p == ps[0] {
				for _, c := range cs {
					fmt.Fprintf(os.Stderr, "%s\n", c.Verdict())
				}
			}
		}
	}
	for _, p := range ps {
		if p.fail {
			r.newFail++
			if r.exampleFailingVerdict == "" {
				r.exampleFailingVerdict = p.verdict
			}
		}
		if p.inconcl {
			r.newInconcl++
		}
		if !b.o.simulate && oldRule(p.oldB, p.oldC) {
			r.oldFail++
		}
	}
	return r, nil
}

// series are the primary run statistics of a pair as the gate's input.
func series(base, cur []gate.RunStats, margin float64) []check.Series {
	var out []check.Series
	for _, st := range gate.RunStatList() {
		if !st.Primary {
			continue
		}
		// A pair's baseline and current runs run interleaved in one process, run n of
		// every pair before run n+1 of any: one session, as an A/B comparison's are.
		s := check.Series{Metric: st.Label, Unit: st.Unit, Primary: true,
			Gate: check.RunGate{Margin: margin, HigherIsBetter: st.HigherIsBetter, SameSession: true}}
		for _, rs := range base {
			s.Baseline = append(s.Baseline, stat(rs, st.Name))
		}
		for _, rs := range cur {
			s.Current = append(s.Current, stat(rs, st.Name))
		}
		out = append(out, s)
	}
	return out
}

func stat(rs gate.RunStats, name string) float64 {
	if v, ok := rs.Stats[name]; ok {
		return v
	}
	return math.NaN() // CompareRuns says which run lacks it
}

// oldRule is what AssertNoRegression did: NoRegression on the pooled requests of one
// baseline run and one current run, for TTFT, ITL and request latency; it fails when any does.
func oldRule(base, cur []check.Request) bool {
	fail := false
	for _, m := range []check.Metric{check.TTFT, check.ITL, check.Latency} {
		if !check.NoRegression(m.Sample(base), m.Sample(cur), check.Regression{}).Pass {
			fail = true
		}
	}
	return fail
}

type job struct {
	p     *pair
	side  string
	n     int // the run's number on its side (0-based)
	scale float64
}

// runSide brings every live pair's side up to k runs, workers at a time, run n of
// every pair before run n+1. Each pair's speeds are drawn in run order from its own
// generator, the baseline's before the current's at each look, so a seed reproduces
// them whatever the scheduling.
func (b *bench) runSide(s setting, live []*pair, side string, k int, r *result) error {
	var jobs []job
	for _, p := range live {
		have := len(p.base)
		if side == "current" {
			have = len(p.cur)
		}
		for n := have; n < k; n++ {
			f := 1.0
			if side == "current" {
				f = s.slowdown
			}
			jobs = append(jobs, job{p: p, side: side, n: n, scale: f * math.Exp(s.cv*p.rng.NormFloat64())})
		}
	}
	// Run n of every pair before run n+1 of any: a pair's runs are then spread over the
	// whole batch, as a side's runs are spread in time when they run one after another,
	// and not run at once by the workers, where one hiccup of the machine would shift
	// all of a side's runs together (and the gate, rightly, would call that a change).
	slices.SortStableFunc(jobs, func(a, b job) int { return a.n - b.n })
	type done struct {
		j    job
		rs   gate.RunStats
		reqs []check.Request
		err  error
	}
	in := make(chan job)
	out := make(chan done)
	var wg sync.WaitGroup
	for range b.o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range in {
				rs, reqs, err := b.oneRun(j.scale, j.n == 0)
				out <- done{j, rs, reqs, err}
			}
		}()
	}
	go func() {
		for _, j := range jobs {
			in <- j
		}
		close(in)
		wg.Wait()
		close(out)
	}()
	results := map[*pair][]done{}
	var firstErr error
	for d := range out {
		if d.err != nil && firstErr == nil {
			firstErr = d.err
		}
		results[d.j.p] = append(results[d.j.p], d)
		r.runs++
	}
	if firstErr != nil {
		return firstErr
	}
	for p, ds := range results {
		slices.SortFunc(ds, func(a, b done) int { return a.j.n - b.j.n })
		for _, d := range ds {
			if side == "baseline" {
				p.base = append(p.base, d.rs)
				if d.j.n == 0 {
					p.oldB = d.reqs
				}
			} else {
				p.cur = append(p.cur, d.rs)
				if d.j.n == 0 {
					p.oldC = d.reqs
				}
			}
		}
	}
	return nil
}

// scenario is the calibration's scenario, against url.
func (b *bench) scenario(url string) scenario.Scenario {
	o := b.o
	return scenario.Scenario{
		Name: "gate-calibration",
		Config: loadgen.Config{
			Target: loadgen.Target{URLs: []string{url}},
			Workload: loadgen.Workload{
				ISL:  distribution.MustSpec("fixed:32"),
				OSL:  distribution.MustSpec(fmt.Sprintf("fixed:%d", o.osl)),
				Seed: 7,
			},
			Load: loadgen.Load{Concurrency: o.conc},
			Stop: loadgen.Stop{Requests: o.requests, WarmupRequests: o.requestsWarmup}, // warm-up on top
		},
	}
}

// workload describes the workload every run of the calibration sends (the same on
// both sides of every pair; where it was sent, each run's own mock, left out), as
// package run describes a series, so that the gate compares the two sides
// instead of refusing an unknown workload.
func (b *bench) workload() *gate.Workload {
	return perfrun.NewSeries("", b.scenario("")).Workload
}

// oneRun is one real run against a fresh in-process mock at the given speed.
func (b *bench) oneRun(scale float64, keepRequests bool) (gate.RunStats, []check.Request, error) {
	o := b.o
	if o.simulate {
		return b.simulated(scale), nil, nil
	}
	srv := <-b.servers
	defer func() { b.servers <- srv }()
	srv.SetLatencyScale(scale)
	srv.ResetLateness()
	sc := b.scenario(srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := perfrun.Run(ctx, sc, "", perfrun.WithTokenizer(b.tok))
	if err != nil {
		return gate.RunStats{}, nil, err
	}
	rs := out.RunStats()
	if rs.Errors > 0 || rs.Requests != o.requests || out.Interrupted {
		return rs, nil, fmt.Errorf("a run at speed %.4f measured %d requests with %d errors (interrupted %v), want %d clean", scale, rs.Requests, rs.Errors, out.Interrupted, o.requests)
	}
	if b.diag != nil {
		l := srv.Lateness(0.5, 0.99, 1)
		b.diag(fmt.Sprintf("mock late p50/p99/max %.0f/%.0f/%.0fµs client read delay p50/p99/max %v/%v/%v cpu %.2f", l[0], l[1], l[2], out.Self.ReadDelay.P50, out.Self.ReadDelay.P99, out.Self.ReadDelay.Max, out.Self.CPUFraction))
	}
	var reqs []check.Request
	if keepRequests {
		reqs = out.Requests()
	}
	return rs, reqs, nil
}

// startBurner starts `gate burn` spinning cpus CPUs as a child process and returns its stop.
func startBurner(cpus int, shared bool) (func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "burn")
	cmd.Env = append(os.Environ(), fmt.Sprintf("BURN_CPUS=%d", cpus))
	if !shared {
		cmd.Env = append(cmd.Env, "BURN_AUTOGROUP_NICE="+autogroupNice())
		newSession(cmd) // its own session: a neighbour, not a thread of ours (see autogroup.go)
	}
	stdin, err := cmd.StdinPipe() // closed when we exit: the burner then exits too
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("CPU burner: %w", err)
	}
	time.Sleep(50 * time.Millisecond) // let it get going
	return func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}, nil
}

// shareName marks the settings of a burner that shares the benchmark's CPU share.
func shareName(shared bool) string {
	if shared {
		return " (sharing the bench's CPU share)"
	}
	return ""
}

func pct(x float64) string { return strconv.FormatFloat(x*100, 'g', 3, 64) + "%" }

// rate prints k/n as a percentage with its 95% Clopper–Pearson interval.
func rate(k, n int) string {
	if n == 0 {
		return "–"
	}
	iv := distribution.ClopperPearson(k, n, 0.95)
	return fmt.Sprintf("%d/%d = %s [%s, %s]", k, n, pct1(float64(k)/float64(n)), pct1(iv.Lo), pct1(iv.Hi))
}

func pct1(x float64) string { return strconv.FormatFloat(x*100, 'f', 1, 64) + "%" }

// report ends the markdown table whose rows run printed as the settings finished: each
// identical-CV group's quiet and burner halves together, then how many pairs each look
// decided and an example false alarm.
const tableHead = "| setting | pairs | new gate: failed (95% CP) | new gate: inconclusive at cap | mean runs/side | old pooled rule: failed (95% CP) | target |\n|---|---|---|---|---|---|---|"

func report(w io.Writer, rs []result) {
	groups := map[string][]result{}
	var order []string
	for _, r := range rs {
		if r.s.group != "" {
			if _, ok := groups[r.s.group]; !ok {
				order = append(order, r.s.group)
			}
			groups[r.s.group] = append(groups[r.s.group], r)
		}
	}
	for _, g := range order {
		if len(groups[g]) > 1 {
			row(w, "**"+g+", all**", groups[g])
		}
	}
	fmt.Fprintln(w)
	for _, r := range rs {
		fmt.Fprintf(w, "# %s: pairs decided at each look %v (looks %v runs/side)\n", r.s.name, r.lookCounts, r.s.sched.Looks())
		if r.exampleFailingVerdict != "" && r.s.slowdown == 1 {
			fmt.Fprintf(w, "# an example false alarm:\n#   %s\n", strings.ReplaceAll(r.exampleFailingVerdict, "\n", "\n#   "))
		}
	}
}

func row(w io.Writer, name string, rs []result) {
	var n, nf, ni, of, runs int
	target := ""
	old := true
	for _, r := range rs {
		old = old && r.oldEvaluated
		n += r.s.pairs
		nf += r.newFail
		ni += r.newInconcl
		of += r.oldFail
		runs += r.runsPerSide
		target = r.s.target
	}
	if target == "" {
		target = "false alarms <= 1%"
		if n > 0 {
			if float64(nf)/float64(n) <= 0.01 {
				target += ": met"
			} else {
				target += ": NOT met"
			}
		}
	} else if n > 0 {
		if float64(nf)/float64(n) >= rs[0].s.targetMin {
			target += ": met"
		} else {
			target += ": NOT met"
		}
	}
	oldText := rate(of, n)
	if !old {
		oldText = "not evaluated (simulated)"
	}
	fmt.Fprintf(w, "| %s | %d | %s | %s | %.1f | %s | %s |\n", name, n, rate(nf, n), rate(ni, n), float64(runs)/float64(max(n, 1)), oldText, target)
}
