package run

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/record"
)

// TestOnInFlight: a closed loop of 4 streams of 13 ms requests for 250 ms tells OnInFlight the requests
// in flight every loadgen.AbortTick: a few samples, none above 4, the loop's 4 among
// them.
func TestOnInFlight(t *testing.T) {
	sc := quickScenario(1, 0)
	sc.Mock = mockserver.Config{TTFT: fixed(10), ITL: fixed(1)} // a request takes 13 ms or more
	sc.Stop = loadgen.Stop{Duration: 250 * time.Millisecond}
	var mu sync.Mutex
	var got []int
	_, err := Run(context.Background(), sc, "", OnInFlight(func(n int) {
		mu.Lock()
		got = append(got, n)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	top := 0
	for _, n := range got {
		top = max(top, n)
	}
	if len(got) < 2 || top != 4 {
		t.Errorf("in-flight samples %v: want at least 2, at most 4, a 4 among them (concurrency 4)", got)
	}
}

// fakeWatch records what an abort watch is told and stops when told so.
type fakeWatch struct {
	observed, inFlight []int
	stop               bool
}

func (w *fakeWatch) Observe(rec *record.Client, _ time.Duration) {
	w.observed = append(w.observed, rec.Index)
}
func (w *fakeWatch) Check(time.Duration) (loadgen.Abort, bool) {
	return loadgen.Abort{Kind: loadgen.AbortObjective, Reason: "told to"}, w.stop
}
func (w *fakeWatch) ObserveInFlight(n int, _ time.Duration) { w.inFlight = append(w.inFlight, n) }

// TestInFlightWatchKeepsTheAbortWatch: with OnInFlight the run's own abort watch is
// still told every request and every in-flight sample, and its decision to stop
// stands; without an abort watch nothing stops the run; without OnInFlight the watch
// is the run's own.
func TestInFlightWatchKeepsTheAbortWatch(t *testing.T) {
	inner := &fakeWatch{stop: true}
	var told []int
	w := withInFlight(inner, func(n int) { told = append(told, n) })
	w.Observe(&record.Client{Index: 7}, 0)
	w.(loadgen.InFlightWatch).ObserveInFlight(3, time.Second)
	why, stop := w.Check(time.Second)
	if len(inner.observed) != 1 || inner.observed[0] != 7 || len(inner.inFlight) != 1 || inner.inFlight[0] != 3 || len(told) != 1 || told[0] != 3 || !stop || why.Reason != "told to" {
		t.Errorf("inner observed %v, in flight %v; told %v; check %v %v: want 7, 3, 3 and the inner's stop", inner.observed, inner.inFlight, told, why, stop)
	}
	alone := withInFlight(nil, func(int) {})
	alone.Observe(&record.Client{}, 0)
	if _, stop := alone.Check(0); stop {
		t.Error("an in-flight watch without an abort watch stops the run")
	}
	if withInFlight(inner, nil) != loadgen.AbortWatch(inner) || withInFlight(nil, nil) != nil {
		t.Error("without OnInFlight the abort watch is not the run's own")
	}
}
