package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// abortFlags are the abort rules' flags (docs/abort.md); each maps onto one field of
// scenario.Abort and overrides a scenario file's (--abort-on replaces its rules).
type abortFlags struct {
	on                          stringList
	delay, window, failedThresh float64
	minRequests                 int
}

func registerAbortFlags(fs *flag.FlagSet, a *abortFlags) {
	fs.Var(&a.on, "abort-on", "[stop] stop the run while it goes when this condition holds on the last --abort-window of requests (repeatable): a rule with > or <, e.g. error_rate>0.2 or ttft_p99>2s, or over_saturation (in flight and TTFT rising, throughput flat: guidellm's detector); exit 99, records kept")
	fs.Float64Var(&a.delay, "abort-delay", 0, "[stop] seconds into the run before --abort-on is evaluated (k6's delayAbortEval)")
	fs.Float64Var(&a.window, "abort-window", scenario.DefaultAbortWindow.Seconds(), "[stop] seconds of the sliding window --abort-on is evaluated on")
	fs.IntVar(&a.minRequests, "abort-min-requests", scenario.DefaultAbortMinRequests, "[stop] requests the window must hold before --abort-on is evaluated, and that must have ended before --failed-request-threshold is")
	fs.Float64Var(&a.failedThresh, "failed-request-threshold", 0, "[stop] stop the run when more than this fraction of its requests failed (AIPerf's flag); exit 1 (invalid), records kept; 0 = never")
}

// profileAbort applies the abort flags given.
func profileAbort(sc *scenario.Scenario, f *profileFlags, _ *profileOpts, has func(...string) bool) error {
	a, d := &f.abort, &sc.Abort
	seconds := func(name string, v float64, dst *time.Duration, positive bool) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || positive && v == 0 {
			want := "a number of seconds >= 0"
			if positive {
				want = "a positive number of seconds"
			}
			return invalidf("--%s %v: want %s", name, v, want)
		}
		*dst = time.Duration(v * float64(time.Second))
		return nil
	}
	if has("abort-on") {
		d.Rules = nil
		for _, text := range a.on {
			if scenario.IsOverSaturationRule(text) {
				d.Rules = append(d.Rules, scenario.OverSaturationRule)
				continue
			}
			if _, err := check.ParseAbortRule(text); err != nil {
				msg := err.Error()
				if re := (*check.RuleError)(nil); errors.As(err, &re) {
					msg = fmt.Sprintf("%q, column %d: %s", re.Rule, re.Column, re.Msg)
				}
				return invalidf("--abort-on %s", msg)
			}
			d.Rules = append(d.Rules, text)
		}
	}
	if has("abort-delay") {
		if err := seconds("abort-delay", a.delay, &d.Delay, false); err != nil {
			return err
		}
	}
	if has("abort-window") {
		if err := seconds("abort-window", a.window, &d.Window, true); err != nil {
			return err
		}
	}
	if has("abort-min-requests") {
		if a.minRequests < 1 {
			return invalidf("--abort-min-requests %d: want a number of requests >= 1", a.minRequests)
		}
		d.MinRequests = a.minRequests
	}
	if has("failed-request-threshold") {
		if t := a.failedThresh; !(t >= 0 && t < 1) {
			return invalidf("--failed-request-threshold %v: want a fraction in (0, 1), 0 = never", t)
		}
		d.FailedRequestThreshold = a.failedThresh
	}
	return nil
}

// abortedExit says how a run stopped early is judged, by what stopped it
// (perfrun.Outcome.AbortedBy): an abort rule or over-saturation is an objective
// failure (exit 99), the schedule watch and the failed-request threshold an invalid
// measurement (exit 1).
func abortedExit(by string) string {
	switch by {
	case loadgen.AbortObjective:
		return "an abort rule held: exit 99"
	case loadgen.AbortSaturation:
		return "the server is over-saturated: exit 99"
	}
	return "invalid measurement: exit 1"
}
