package loadgen

// The abort watch: rules evaluated while the run goes (an error storm, a latency past
// any objective) stop it early, as k6's thresholds with abortOnFail do, and AIPerf's
// --failed-request-threshold. The load generator only carries the records to the
// watch and stops the run when it says so; what the rules are and how they are
// judged is the caller's (package perftest/run's), which keeps the metric catalogue out
// of loadgen.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/record"
)

// How a run was stopped early (Self.AbortedBy).
const (
	// AbortSchedule: the open loop's client fell behind its schedule
	// (Stop.MaxScheduleLag): the run is invalid, its numbers measure the client.
	AbortSchedule = "schedule"
	// AbortObjective: an abort rule failed (a regression or an objective failure:
	// `perfgate profile` exits 99).
	AbortObjective = "objective"
	// AbortInvalid: the run can no longer be a valid measurement (AIPerf's failed
	// request threshold: `perfgate profile` exits 1).
	AbortInvalid = "invalid"
	// AbortSaturation (saturation.go): the over-saturation detector stopped it.
)

// ErrAborted is the cause of the cancellation of a run an [AbortWatch] stopped; the
// requests it cancelled carry the reason in their error.
var ErrAborted = errors.New("loadgen: the run was aborted")

// An Abort is an [AbortWatch]'s decision to stop a run.
type Abort struct {
	// Kind is AbortObjective, AbortInvalid or AbortSaturation.
	Kind string
	// Reason says which rule fired and on what, e.g. "abort rule error_rate>0.2:
	// error rate = 45% (9 of 20) over the last 10s".
	Reason string
}

// An AbortWatch decides, while a run goes, whether to stop it (Stop.Watch). The load
// generator gives it each measured request as the request ends and asks it, every
// [AbortTick] of the run clock, whether to stop; when it says so the run stops as the
// schedule watch stops one: no request is sent after, those in flight are cancelled,
// every record is kept, and the reason is in Self.Aborted (its kind in
// Self.AbortedBy). Observe and Check may be called concurrently. A watch that is
// also an [InFlightWatch] is given the requests in flight before each Check.
type AbortWatch interface {
	// Observe is given each request that is not a warm-up as it ends, at now on the
	// run clock (time since the run's start). rec is recycled after Observe returns:
	// keep what is needed, not rec.
	Observe(rec *record.Client, now time.Duration)
	// Check is asked at now whether to stop; ok = stop, with why.
	Check(now time.Duration) (why Abort, ok bool)
}

// AbortTick is how often the load generator asks an [AbortWatch] whether to stop.
const AbortTick = 100 * time.Millisecond

// watchAbort asks w every AbortTick whether to stop the run (giving it the requests
// in flight first, when it is an InFlightWatch), until the returned function is called
// (it waits for the watch to end). When w says stop, it keeps the reason in stopped
// and calls abort with [ErrAborted] wrapping it.
func watchAbort(w AbortWatch, clock *runClock, inFlight *atomic.Int64, stopped *stopCause, abort context.CancelCauseFunc) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(AbortTick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			now := clock.now()
			if iw, ok := w.(InFlightWatch); ok {
				iw.ObserveInFlight(int(inFlight.Load()), now)
			}
			why, ok := w.Check(now)
			if !ok {
				continue
			}
			if stopped.stopWith(why.Kind, why.Reason) {
				abort(fmt.Errorf("%w: %s", ErrAborted, why.Reason))
			}
			return
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// stopCause is why a run was stopped early: the first reason the schedule watch or
// the abort watch gave (see stopWith); nil while none did.
type stopCause struct{ atomic.Pointer[abortInfo] }

// stopWith keeps the first reason the run was stopped for (the schedule watch's or
// the abort watch's) and reports whether it was the first.
func (s *stopCause) stopWith(kind, why string) bool {
	a := &abortInfo{kind: kind, why: why}
	return s.CompareAndSwap(nil, a)
}

// abortInfo is why and how a run was stopped early.
type abortInfo struct{ kind, why string }
