package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/perfgate/perfgate/liveout"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// liveFlags are --out and --out-interval as given.
type liveFlags struct {
	outs     stringList
	interval float64
}

// liveOpts are the live outputs each run streams to, checked: the --out values, one
// a line (profileOpts stays comparable), and the interval (0 = the default).
type liveOpts struct {
	outs  string
	every time.Duration
}

// outputs returns the checked outputs.
func (l liveOpts) outputs() []liveout.Output {
	var out []liveout.Output
	for _, spec := range strings.Split(l.outs, "\n") {
		if o, err := liveout.ParseOutput(spec); err == nil {
			out = append(out, o)
		}
	}
	return out
}

func registerLiveFlags(fs *flag.FlagSet, l *liveFlags) {
	fs.Var(&l.outs, "out", "[output] stream live metrics while the run goes (repeatable): prometheus-rw=URL (Prometheus remote-write, e.g. http://HOST:9090/api/v1/write) or otlp=URL (OTLP/HTTP metrics, e.g. http://HOST:4318/v1/metrics)")
	fs.Float64Var(&l.interval, "out-interval", liveout.DefaultInterval.Seconds(), "[output] seconds between two pushes of the live metrics (--out)")
}

// applyLiveFlags checks --out and --out-interval before anything runs.
func applyLiveFlags(l *liveFlags, o *liveOpts, has func(...string) bool) error {
	for _, spec := range l.outs {
		if _, err := liveout.ParseOutput(spec); err != nil {
			return invalidf("--out: %s", strings.TrimPrefix(err.Error(), liveout.ErrInvalid.Error()+": "))
		}
	}
	o.outs = strings.Join(l.outs, "\n")
	if has("out-interval") {
		if !(l.interval > 0) || math.IsInf(l.interval, 0) {
			return invalidf("--out-interval %v: want a positive number of seconds", l.interval)
		}
		if len(l.outs) == 0 {
			return invalidf("--out-interval needs --out KIND=URL")
		}
		o.every = time.Duration(l.interval * float64(time.Second))
	}
	return nil
}

// startLive starts the live outputs of one run, labelled with the scenario and a new
// run id it prints, and returns the sink to give the load generator; nil when there
// are none. A receiver that refuses the first push is invalid configuration (exit 2,
// before any request); one that is down is a warning line on stderr.
func startLive(ctx context.Context, e *env, l liveOpts, sc scenario.Scenario, label string) (*liveout.Live, error) {
	outputs := l.outputs()
	if len(outputs) == 0 {
		return nil, nil
	}
	run := liveout.NewRunID(time.Now())
	warn := func(msg string) { fmt.Fprintf(e.stderr, "WARN %s\n", msg) }
	lv, err := liveout.Start(ctx, liveout.Config{Outputs: outputs, Interval: l.every,
		Labels: liveout.Labels{Scenario: cmpOr(label, sc.NameOrDefault()), Run: run}}, warn)
	if err != nil {
		if errors.Is(err, liveout.ErrInvalid) {
			return nil, invalidf("--out: %s", strings.ReplaceAll(err.Error(), liveout.ErrInvalid.Error()+": ", ""))
		}
		return nil, runtimef("--out: %v", err)
	}
	var outs []string
	for _, o := range outputs {
		outs = append(outs, o.String())
	}
	fmt.Fprintf(e.stderr, "live metrics: run=%s → %s\n", run, strings.Join(outs, ", "))
	return lv, nil
}
