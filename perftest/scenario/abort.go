package scenario

// Abort rules: conditions evaluated on a sliding window while the run goes, which stop
// it early and keep what it measured (k6's thresholds with abortOnFail and
// delayAbortEval; AIPerf's --failed-request-threshold). docs/abort.md.

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
)

// Abort stops a run while it goes when a condition holds, keeping every record up to
// then; the run is marked aborted in its manifest and its exports (was_cancelled).
// The zero value stops nothing (the schedule watch, loadgen.Stop.MaxScheduleLag, is
// separate and on by default). docs/abort.md.
type Abort struct {
	// Rules are conditions written as check rules with > or < (check.ParseAbortRule):
	// "error_rate>0.2", "ttft_p99>2s". Each is evaluated every loadgen.AbortTick on the
	// requests that ended in the last Window, once Delay has passed and the window holds
	// MinRequests; when one holds the run stops, and fails as an objective would
	// (`perfgate profile` exits 99). The rule OverSaturationRule ("over_saturation")
	// turns on the over-saturation detector instead, configured by OverSaturation.
	Rules []string `json:"rules,omitempty" yaml:"rules,omitempty"`
	// Delay is how long into the run no rule is evaluated (k6's delayAbortEval): the
	// server's warm-up errors and first slow requests stop nothing. 0 = none.
	Delay time.Duration `json:"delay,omitempty" yaml:"delay,omitempty"`
	// Window is how far back the rules look: the requests that ended in the last
	// Window of the run clock, at most the latest MaxAbortWindowRequests of them. 0 =
	// DefaultAbortWindow.
	Window time.Duration `json:"window,omitempty" yaml:"window,omitempty"`
	// MinRequests is the grace floor: no rule is evaluated on a window of fewer
	// requests, and the failed-request threshold waits for as many to have ended. 0 =
	// DefaultAbortMinRequests.
	MinRequests int `json:"min_requests,omitempty" yaml:"min_requests,omitempty"`
	// FailedRequestThreshold is AIPerf's --failed-request-threshold: the run stops
	// when more than this fraction of the requests that ended so far failed (once
	// MinRequests have ended; Delay does not apply). Such a run is invalid (`perfgate
	// profile` exits 1): its numbers are those of a failing server. 0 = off; else in
	// (0, 1).
	FailedRequestThreshold float64 `json:"failed_request_threshold,omitempty" yaml:"failed_request_threshold,omitempty"`
	// OverSaturation tunes the over-saturation detector, which the rule
	// "over_saturation" turns on: the run stops when the requests in flight and the
	// TTFT rise while the throughput stays flat (guidellm's method,
	// loadgen.SaturationWatch), and fails as an objective would (exit 99). Its own
	// MinDuration and Window apply, not Delay and Window. The zero value is
	// guidellm's defaults.
	OverSaturation loadgen.OverSaturation `json:"over_saturation,omitzero" yaml:"over_saturation,omitempty"`
}

// OverSaturationRule is the abort rule that turns on the over-saturation detector
// (Abort.OverSaturation; `--abort-on over_saturation`).
const OverSaturationRule = "over_saturation"

// IsOverSaturationRule reports whether an abort rule's text is [OverSaturationRule]
// (spaces around it allowed), which check.ParseAbortRule does not parse.
func IsOverSaturationRule(text string) bool { return strings.TrimSpace(text) == OverSaturationRule }

// detectsSaturation reports whether a's rules turn on the over-saturation detector.
func (a Abort) detectsSaturation() bool {
	for _, r := range a.Rules {
		if IsOverSaturationRule(r) {
			return true
		}
	}
	return false
}

// Abort defaults.
const (
	// DefaultAbortWindow is Abort.Window's default: the last 10 s, as k6 evaluates
	// thresholds every 2 s over the whole run but a run going bad should be seen going
	// bad, not diluted by its good minutes.
	DefaultAbortWindow = 10 * time.Second
	// DefaultAbortMinRequests is Abort.MinRequests's default.
	DefaultAbortMinRequests = 20
	// MaxAbortWindowRequests bounds the window whatever its duration, so that the
	// watch's memory and each evaluation's time stay bounded at any rate.
	MaxAbortWindowRequests = 10_000
)

// stopsNothing reports whether a has neither a rule nor a threshold (its delay,
// window and floor alone stop nothing). Not IsZero: a scenario file keeps them.
func (a Abort) stopsNothing() bool { return len(a.Rules) == 0 && a.FailedRequestThreshold == 0 }

// ParseRules parses a.Rules, reporting every bad one at once (errors.Join) as
// "abort.rules[i]: " followed by the [check.RuleError]. OverSaturationRule is not
// among them: it is no condition on the window's requests.
func (a Abort) ParseRules() ([]check.AbortRule, error) {
	var rs []check.AbortRule
	var errs []error
	for i, text := range a.Rules {
		if IsOverSaturationRule(text) {
			continue
		}
		r, err := check.ParseAbortRule(text)
		if err != nil {
			errs = append(errs, fmt.Errorf("abort.rules[%d]: %w", i, err))
			continue
		}
		rs = append(rs, r)
	}
	return rs, errors.Join(errs...)
}

// validate reports a's problems through bad.
func (a Abort) validate(bad func(string, ...any)) {
	if _, err := a.ParseRules(); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			bad("%v", e)
		}
	}
	if a.Delay < 0 {
		bad("abort.delay %v: want a duration >= 0", a.Delay)
	}
	if a.Window < 0 {
		bad("abort.window %v: want a duration >= 0", a.Window)
	}
	if a.MinRequests < 0 {
		bad("abort.min_requests %d: want a number of requests >= 0", a.MinRequests)
	}
	if t := a.FailedRequestThreshold; !(t >= 0 && t < 1) {
		bad("abort.failed_request_threshold %v: want a fraction in (0, 1), 0 = off", t)
	}
	if err := a.OverSaturation.Validate(); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			bad("abort.over_saturation.%v", e)
		}
	}
}

// watch returns the load generator's abort watch for a, nil when a stops nothing. It
// must be valid.
func (a Abort) watch(opt metric.Options) loadgen.AbortWatch {
	if a.stopsNothing() {
		return nil
	}
	rs, _ := a.ParseRules()
	w := &abortWatch{
		rules: rs, delay: a.Delay, window: a.Window, min: a.MinRequests,
		threshold: a.FailedRequestThreshold, opt: opt,
	}
	if w.window == 0 {
		w.window = DefaultAbortWindow
	}
	if w.min == 0 {
		w.min = DefaultAbortMinRequests
	}
	if a.detectsSaturation() {
		w.sat = loadgen.NewSaturationWatch(a.OverSaturation)
	}
	return w
}

// abortWatch is [Abort] as a loadgen.AbortWatch: a ring of the latest requests in
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
		w.ring, w.at = make([]check.Request, MaxAbortWindowRequests), make([]time.Duration, MaxAbortWindowRequests)
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
