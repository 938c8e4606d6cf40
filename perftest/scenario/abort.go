package scenario

// Abort rules: conditions evaluated on a sliding window while the run goes, which stop
// it early and keep what it measured (k6's thresholds with abortOnFail and
// delayAbortEval; AIPerf's --failed-request-threshold). docs/abort.md.

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
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

// DetectsSaturation reports whether a's rules turn on the over-saturation detector
// ([OverSaturationRule]).
func (a Abort) DetectsSaturation() bool {
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

// StopsNothing reports whether a has neither a rule nor a threshold (its delay,
// window and floor alone stop nothing): a run then watches nothing. Not IsZero: a
// scenario file keeps them.
func (a Abort) StopsNothing() bool { return len(a.Rules) == 0 && a.FailedRequestThreshold == 0 }

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
