package loadgen

// The schedule watch: an open loop whose client cannot keep its schedule (starved of
// CPU, or asked for a rate beyond it) is stopped, rather than running on for minutes
// ever further behind and measuring the client. k6 (abortOnFail), AIPerf and guidellm
// stop such a run early too, and keep what they measured.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/perfgate/perfgate/metric"
)

// ErrScheduleBehind is the cause of the cancellation of an open-loop run stopped
// because its client fell behind its schedule (Config.MaxScheduleLag); the requests it
// cancelled carry the reason in their error.
var ErrScheduleBehind = errors.New("loadgen: the client fell behind its schedule")

// scheduleWatch decides, from the schedule lag observed now and then, when an open
// loop is to stop: once the lag has been over max at every observation for max. It
// is pure (times are the run clock's, given by the caller), so tests feed it recorded
// lags.
type scheduleWatch struct {
	max    time.Duration
	over   bool          // the lag was over max at the last observation
	since  time.Duration // when it went over
	sentAt uint64        // requests sent then
}

// observe takes the lag of the schedule at now (how long the oldest request not
// yet sent has been due; <= 0: none is due) and the requests sent so far. It
// reports whether the run is to stop.
func (w *scheduleWatch) observe(now, lag time.Duration, sent uint64) bool {
	if lag <= w.max {
		w.over = false
		return false
	}
	if !w.over {
		w.over, w.since, w.sentAt = true, now, sent
		return false
	}
	return now-w.since >= w.max
}

// reason says by how much and why the run stopped, at now with lag and sent, the
// schedule offering offered req/s: the rate the client achieved is over the time
// it has been behind.
func (w *scheduleWatch) reason(now, lag time.Duration, sent uint64, offered float64) string {
	achieved := 0.0
	if d := now - w.since; d > 0 && sent >= w.sentAt {
		achieved = float64(sent-w.sentAt) / d.Seconds()
	}
	return fmt.Sprintf("schedule %v behind for %v at %s req/s offered, %s achieved: the client cannot keep up",
		roundDur(lag), roundDur(now-w.since), metric.GroupDigits(offered), metric.GroupDigits(achieved))
}

// roundDur rounds d for a message: to 0.1 s from a second up, to 1 ms below.
func roundDur(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// watchesSchedule reports whether the run's open loop is watched: a pacer with a
// finite rate, no concurrency ceiling, and MaxScheduleLag not switched off.
func (o *openLoop) watchesSchedule() bool {
	return o.sem == nil && o.maxLag > 0 && !math.IsInf(o.pacer.Rate(0), 1)
}

// watchTick is how often the watch looks at the schedule: a twentieth of the
// threshold, within [5 ms, 250 ms].
func watchTick(limit time.Duration) time.Duration {
	return min(max(limit/20, 5*time.Millisecond), 250*time.Millisecond)
}

// watchSchedule watches loop's schedule until the returned function is called (it
// waits for the watch to end). When the client has been more than MaxScheduleLag
// behind for as long, it keeps the reason in o.stopped and calls abort with
// [ErrScheduleBehind] wrapping it.
func (o *openLoop) watchSchedule(loop *sendLoop, abort context.CancelCauseFunc) (stop func()) {
	w := &scheduleWatch{max: o.maxLag}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(watchTick(w.max))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			next := loop.passed.Load()
			due, end := o.pacer.Pace(0, next)
			if end {
				continue
			}
			now, sent := o.clock.now(), loop.sends.Load()
			if w.observe(now, now-due, sent) {
				why := w.reason(now, now-due, sent, o.pacer.Rate(due))
				if o.stopped.stopWith(AbortSchedule, why) {
					abort(fmt.Errorf("%w: %s", ErrScheduleBehind, why))
				}
				return
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}
