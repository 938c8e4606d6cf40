package run

import (
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/record"
)

// OnInFlight returns an option that calls f with the number of requests in flight
// (sent, or being sent, and not yet finished; warm-up requests included) every
// loadgen.AbortTick of the run, e.g. for a live display. It is the load generator's
// own count, sampled on the path its abort watch is told it (loadgen.InFlightWatch).
// f is called from one goroutine and must return quickly. A nil f does nothing.
func OnInFlight(f func(n int)) RunOption { return onInFlight{f} }

type onInFlight struct{ f func(int) }

func (o onInFlight) apply(c *runConfig) { c.onInFlight = o.f }
func (o onInFlight) String() string     { return "run.OnInFlight(func)" }

// inFlightWatch is the run's abort watch (inner, nil = none) with f told the requests
// in flight before each of its checks: the load generator samples the count for any
// watch that is a loadgen.InFlightWatch.
type inFlightWatch struct {
	inner loadgen.AbortWatch
	f     func(int)
}

var _ loadgen.InFlightWatch = inFlightWatch{}

// withInFlight returns w with f told the requests in flight; w itself when f is nil.
func withInFlight(w loadgen.AbortWatch, f func(int)) loadgen.AbortWatch {
	if f == nil {
		return w
	}
	return inFlightWatch{inner: w, f: f}
}

func (w inFlightWatch) Observe(rec *record.Client, now time.Duration) {
	if w.inner != nil {
		w.inner.Observe(rec, now)
	}
}

func (w inFlightWatch) Check(now time.Duration) (loadgen.Abort, bool) {
	if w.inner == nil {
		return loadgen.Abort{}, false
	}
	return w.inner.Check(now)
}

func (w inFlightWatch) ObserveInFlight(n int, now time.Duration) {
	w.f(n)
	if iw, ok := w.inner.(loadgen.InFlightWatch); ok {
		iw.ObserveInFlight(n, now)
	}
}
