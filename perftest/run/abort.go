package run

import (
	"fmt"
	"sync"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// newAbortWatch returns the load generator's abort watch for a, nil when a stops nothing. It
// must be valid.
func newAbortWatch(a scenario.Abort, opt metric.Options) loadgen.AbortWatch {
	if a.StopsNothing() {
		return nil
	}
	rs, _ := a.ParseRules()
	w := &abortWatch{
		rules: rs, delay: a.Delay, window: a.Window, min: a.MinRequests,
		threshold: a.FailedRequestThreshold, opt: opt,
	}
	if w.window == 0 {
		w.window = scenario.DefaultAbortWindow
	}
	if w.min == 0 {
		w.min = scenario.DefaultAbortMinRequests
	}
	if a.DetectsSaturation() {
		w.sat = loadgen.NewSaturationWatch(a.OverSaturation)
	}
	return w
}

// abortWatch is [scenario.Abort] as a loadgen.AbortWatch: a ring of the latest requests in
// check's form, with their end times, and the run's counts of ended and failed ones.
type abortWatch struct {
	rules     []check.AbortRule
	delay     time.Duration
	window    time.Duration
	min       int
	threshold float64
	opt       metric.Options
	sat       *loadgen.SaturationWatch // the over-saturation detector; nil = off

	mu     sync.Mutex
	q      metric.Request  // scratch for Observe
	ring   []check.Request // the window, oldest first from head
	at     []time.Duration // each one's end
	head   int
	n      int
	ended  int // requests that ended, over the run
	failed int // of them, failed
	reqs   []check.Request
}

var _ loadgen.InFlightWatch = (*abortWatch)(nil)

// ObserveInFlight gives the over-saturation detector its sample.
func (w *abortWatch) ObserveInFlight(n int, now time.Duration) {
	if w.sat != nil {
		w.sat.ObserveInFlight(n, now)
	}
}

// Observe keeps rec (in check's form) in the window.
func (w *abortWatch) Observe(rec *record.Client, now time.Duration) {
	if w.sat != nil {
		w.sat.Observe(rec, now)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended++
	if !rec.OK() {
		w.failed++
	}
	if len(w.rules) == 0 {
		return
	}
	w.q.Reset(rec, w.opt)
	r := check.NewRequest(rec, &w.q)
	if w.ring == nil {
		w.ring, w.at = make([]check.Request, scenario.MaxAbortWindowRequests), make([]time.Duration, scenario.MaxAbortWindowRequests)
	}
	i := (w.head + w.n) % len(w.ring)
	if w.n == len(w.ring) {
		w.head = (w.head + 1) % len(w.ring) // the oldest goes
	} else {
		w.n++
	}
	w.ring[i], w.at[i] = r, now
}

// Check stops the run when the failed-request threshold is passed (invalid), else
// when a rule's condition holds on the window (an objective failure), else when the
// over-saturation detector says so.
func (w *abortWatch) Check(now time.Duration) (loadgen.Abort, bool) {
	if a, stop := w.check(now); stop || w.sat == nil {
		return a, stop
	}
	return w.sat.Check(now)
}

func (w *abortWatch) check(now time.Duration) (loadgen.Abort, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.threshold > 0 && w.ended >= w.min && float64(w.failed) > w.threshold*float64(w.ended) {
		return loadgen.Abort{Kind: loadgen.AbortInvalid, Reason: fmt.Sprintf(
			"failed-request threshold: %d of %d requests failed (%.1f%%) > %g%% at %v: the server is failing, its numbers are not a measurement",
			w.failed, w.ended, 100*float64(w.failed)/float64(w.ended), 100*w.threshold, now.Round(time.Millisecond))}, true
	}
	if len(w.rules) == 0 || now < w.delay {
		return loadgen.Abort{}, false
	}
	for w.n > 0 && w.at[w.head] < now-w.window {
		w.ring[w.head] = check.Request{}
		w.head = (w.head + 1) % len(w.ring)
		w.n--
	}
	if w.n < w.min {
		return loadgen.Abort{}, false
	}
	w.reqs = w.reqs[:0]
	for i := range w.n {
		w.reqs = append(w.reqs, w.ring[(w.head+i)%len(w.ring)])
	}
	for _, r := range w.rules {
		if v, stop := r.Check(w.reqs); stop {
			return loadgen.Abort{Kind: loadgen.AbortObjective, Reason: fmt.Sprintf(
				"abort rule %s held at %v: %s, over the last %v (%d requests)",
				r, now.Round(time.Millisecond), v.Summary, w.window, w.n)}, true
		}
	}
	return loadgen.Abort{}, false
}

// CheckAborted names the verdict of a run an abort rule or the failed-request
// threshold stopped.
const CheckAborted = "aborted"

// AbortedBy says what stopped the run early: loadgen.AbortSchedule (its client fell
// behind), loadgen.AbortObjective (an abort rule held), loadgen.AbortSaturation (the
// over-saturation detector) or loadgen.AbortInvalid (the failed-request threshold);
// "" if nothing did.
func (o *Outcome) AbortedBy() string {
	if o.Self == nil {
		_, by := o.shardAborts()
		return by
	}
	switch {
	case o.Self.Aborted == "":
		return ""
	case o.Self.AbortedBy == "":
		return loadgen.AbortSchedule // recorded before AbortedBy existed
	}
	return o.Self.AbortedBy
}

// abortVerdict is the failing verdict of a run an abort watch stopped: an objective
// failure for an abort rule or over-saturation, an invalid measurement for the
// failed-request threshold; ok false for a run not stopped by one (the schedule watch's stop is the
// client-bound verdict's).
func (o *Outcome) abortVerdict() (v check.Verdict, ok bool) {
	by := o.AbortedBy()
	if by != loadgen.AbortObjective && by != loadgen.AbortSaturation && by != loadgen.AbortInvalid {
		return v, false
	}
	v = check.Verdict{Check: CheckAborted, Summary: "aborted: " + o.Aborted()}
	v.Evidence = []check.Line{{Label: "records", Text: "every request that ended before the stop is kept; those in flight were cancelled (the exports are marked was_cancelled)"}}
	if by == loadgen.AbortInvalid {
		v.Status = check.Invalid
	}
	return v, true
}
