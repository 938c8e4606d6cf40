package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"time"
)

// noise runs -runs runs at speed 1 (no drawn noise), sequentially, and prints each
// primary run statistic's between-run CV: the floor the machine adds to the drawn CV.
//
//	gate noise [-runs 20] [-burn-cpus 0] [run flags as for gate]
func noise(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("gate noise", flag.ContinueOnError)
	var o options
	runs := fs.Int("runs", 20, "runs")
	fs.IntVar(&o.requests, "requests", 48, "measured requests per run")
	fs.IntVar(&o.requestsWarmup, "warmup", 2, "warm-up requests per run")
	fs.IntVar(&o.conc, "concurrency", 16, "concurrent streams per run")
	fs.IntVar(&o.osl, "osl", 4, "output tokens per request")
	fs.Float64Var(&o.ttftMs, "ttft-ms", 100, "the mock's mean TTFT (ms)")
	fs.Float64Var(&o.itlMs, "itl-ms", 20, "the mock's mean ITL (ms)")
	fs.Float64Var(&o.ttftSpread, "ttft-cv", 0, "per-request TTFT CV")
	fs.Float64Var(&o.itlSpread, "itl-cv", 0, "per-token ITL CV")
	fs.IntVar(&o.burnCPUs, "burn-cpus", 0, "CPUs a burner spins during the runs (0 = none)")
	fs.IntVar(&o.workers, "workers", 1, "runs in flight at once")
	fs.BoolVar(&o.burnShared, "burn-shared", false, "the burner shares the benchmark's session (its CPU share)")
	diag := fs.Bool("diag", false, "print each run's mock lateness and client read delay")
	prof := fs.String("cpuprofile", "", "write a CPU profile here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	b, err := newBench(o)
	if err != nil {
		return err
	}
	defer b.close()
	if *diag {
		b.diag = func(s string) { fmt.Fprintln(w, s) }
	}
	if o.burnCPUs > 0 {
		stop, err := startBurner(o.burnCPUs, o.burnShared)
		if err != nil {
			return err
		}
		defer stop()
	}
	vals := map[string][]float64{}
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, o.workers)
	var wg sync.WaitGroup
	start := time.Now()
	for range *runs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			rs, _, err := b.oneRun(1, false)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = err
				return
			}
			for _, n := range primaryNames() {
				vals[n] = append(vals[n], rs.Stats[n])
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	fmt.Fprintf(w, "%d runs, %d at a time, in %s\n", *runs, o.workers, time.Since(start).Round(time.Millisecond))
	for _, n := range primaryNames() {
		var ls []float64
		for _, v := range vals[n] {
			ls = append(ls, math.Log(v))
		}
		m, sd := meanSD(ls)
		var parts []string
		for _, v := range vals[n] {
			parts = append(parts, fmt.Sprintf("%.4g", v))
		}
		fmt.Fprintf(w, "%-12s between-run CV %.2f%%  geo-mean %.4g  runs: %s\n", n, 100*sd, math.Exp(m), strings.Join(parts, " "))
	}
	return nil
}

func meanSD(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}
