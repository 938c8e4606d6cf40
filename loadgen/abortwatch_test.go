package loadgen

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// countWatch stops a run once it has observed stopAt requests (0 = never), as kind.
type countWatch struct {
	mu       sync.Mutex
	seen     int
	warmups  int
	stopAt   int
	kind     string
	lastSeen time.Duration
}

func (w *countWatch) Observe(rec *record.Client, now time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen++
	if rec.Warmup {
		w.warmups++
	}
	w.lastSeen = max(w.lastSeen, now)
}

func (w *countWatch) Check(time.Duration) (Abort, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopAt > 0 && w.seen >= w.stopAt {
		return Abort{Kind: w.kind, Reason: "seen enough"}, true
	}
	return Abort{}, false
}

// TestAbortWatchStopsRun: a watch that says stop ends a closed loop and an open loop of
// two minutes at its next look: nothing more is sent, what was in flight is cancelled
// with the reason, every record is kept, and Self says why and which kind. A watch
// that never says stop sees every measured request and no warm-up, and stops nothing.
func TestAbortWatchStopsRun(t *testing.T) {
	g := newGroundTruth(t)
	for _, load := range []Load{{Concurrency: 4}, {Rate: 300}} {
		w := &countWatch{stopAt: 40, kind: AbortObjective}
		out, err := Run(context.Background(), Config{
			Target:   Target{URLs: []string{g.URL}, Model: "ok"},
			Workload: Workload{ISL: fixed(16), OSL: fixed(4), Seed: 1},
			Load:     load,
			Stop:     Stop{Duration: 2 * time.Minute, Watch: w},
		}, gpt2(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if out.Self.Aborted != "seen enough" || out.Self.AbortedBy != AbortObjective {
			t.Errorf("%+v: Self.Aborted %q by %q", load, out.Self.Aborted, out.Self.AbortedBy)
		}
		if out.Elapsed >= 2*time.Minute || len(out.Records) < 40 {
			t.Errorf("%+v: ran %v, %d records", load, out.Elapsed, len(out.Records))
		}
		for _, r := range out.Records {
			if r.ErrorKind == record.ErrCancelled && !strings.Contains(r.Error, ErrAborted.Error()+": seen enough") {
				t.Errorf("%+v: a cancelled request does not say why: %s", load, r.Error)
			}
		}
	}
	w := &countWatch{}
	out, err := Run(context.Background(), Config{
		Target:   Target{URLs: []string{g.URL}, Model: "ok"},
		Workload: Workload{ISL: fixed(16), OSL: fixed(4), Seed: 1},
		Load:     Load{Concurrency: 2},
		Stop:     Stop{Requests: 30, WarmupRequests: 5, Watch: w},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	measured := 0
	for _, r := range out.Records {
		if !r.Warmup {
			measured++
		}
	}
	if out.Self.Aborted != "" || w.seen != measured || w.warmups != 0 || measured == 0 {
		t.Errorf("never stopping: aborted %q, saw %d (%d warm-ups) of %d measured", out.Self.Aborted, w.seen, w.warmups, measured)
	}
}

// TestCancelledSaysWhy: a request cancelled at any stage, before connecting, before
// sending or after, carries the cause of the cancellation (the abort's reason), and
// a deadline that passed says so; a plain cancel says "context canceled".
func TestCancelledSaysWhy(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(fmt.Errorf("%w: seen enough", ErrAborted))
	for _, when := range []string{"", "before connecting", "before sending", "waiting for a prefill slot"} {
		got := cancelled(ctx, when)
		if !strings.Contains(got, ErrAborted.Error()+": seen enough") || !strings.Contains(got, when) {
			t.Errorf("cancelled(%q) = %q, want the abort's reason", when, got)
		}
	}
	plain, stop := context.WithCancel(context.Background())
	stop()
	if got := cancelled(plain, "before sending"); got != "loadgen: cancelled before sending: context canceled" {
		t.Errorf("plain cancel: %q", got)
	}
	past, stop2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer stop2()
	if got := cancelled(past, ""); !strings.Contains(got, "deadline exceeded") {
		t.Errorf("deadline: %q", got)
	}
}
