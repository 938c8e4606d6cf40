package loadgen

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfgate/perfgate/record"
)

// prefillSender answers after ttft with a first output chunk (calling the call's
// firstOutput hook as the HTTP worker does), then decodes for decode more; it tracks
// the requests in each phase.
type prefillSender struct {
	clock              *runClock
	ttft, decode       time.Duration
	prefilling, inside atomic.Int64
	maxPrefill, maxIn  atomic.Int64
}

func raise(m *atomic.Int64, n int64) {
	for {
		v := m.Load()
		if n <= v || m.CompareAndSwap(v, n) {
			return
		}
	}
}

func (f *prefillSender) send(ctx context.Context, c *call, rec *record.Client, res *result) {
	raise(&f.maxPrefill, f.prefilling.Add(1))
	raise(&f.maxIn, f.inside.Add(1))
	defer f.inside.Add(-1)
	rec.Sent = f.clock.now()
	ok := sleep(ctx, f.ttft)
	f.prefilling.Add(-1)
	if !ok {
		rec.Done, rec.ErrorKind = f.clock.now(), record.ErrCancelled
		return
	}
	res.text = append(res.text, " hello"...)
	res.ends = append(res.ends, len(res.text))
	rec.Chunks = append(rec.Chunks, record.Chunk{T: f.clock.now(), Choices: true})
	if c.firstOutput != nil {
		c.firstOutput()
		c.firstOutput = nil
	}
	sleep(ctx, f.decode)
	rec.Done, rec.Status = f.clock.now(), 200
}

// TestPrefillConcurrency: in virtual time, with 8 closed-loop workers and 2 prefill
// slots, never more than 2 requests wait for their first token, while more than 2
// are in flight (a slot is given back at the first token, not at the end); without
// the cap all 8 prefill at once.
func TestPrefillConcurrency(t *testing.T) {
	for _, tc := range []struct {
		prefill            int
		wantPrefill, minIn int64
		wantQueued         bool
	}{
		{prefill: 2, wantPrefill: 2, minIn: 3, wantQueued: true},
		{prefill: 0, wantPrefill: 8, minIn: 8},
	} {
		cfg := Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:9"}}, Workload: Workload{ISL: fixed(8)}, Load: Load{Concurrency: 8, PrefillConcurrency: tc.prefill}, Stop: Stop{Requests: 40}}
		var fs *prefillSender
		var out *Outcome
		synctest.Test(t, func(t *testing.T) {
			r, err := newRunner(context.Background(), cfg, gpt2(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			r.spin = 0
			fs = &prefillSender{clock: r.clock, ttft: 50 * time.Millisecond, decode: 200 * time.Millisecond}
			r.sender = fs
			if out, err = r.run(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
		if got := fs.maxPrefill.Load(); got != tc.wantPrefill {
			t.Errorf("prefill %d: at most %d requests waited for a first token, want %d", tc.prefill, got, tc.wantPrefill)
		}
		if got := fs.maxIn.Load(); got < tc.minIn {
			t.Errorf("prefill %d: at most %d requests in flight, want >= %d (slots are released at the first token)", tc.prefill, got, tc.minIn)
		}
		queued := slices.ContainsFunc(out.Records, func(r record.Client) bool { return r.Sent > r.Scheduled })
		if queued != tc.wantQueued || len(out.Records) != 40 {
			t.Errorf("prefill %d: %d records, some waited for a slot = %v; want 40, %v", tc.prefill, len(out.Records), queued, tc.wantQueued)
		}
	}
}

// TestPrefillConcurrencyOnTheWire: against the ground-truth server (a role chunk at
// once, content after TTFT), the server never has more than K requests between
// arrival and its first content chunk. The role chunk carries no output, so it must
// not release the slot. Causal, not timed: a request arrives only after the client
// saw a first content chunk, which the server wrote after the time it noted.
func TestPrefillConcurrencyOnTheWire(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens, c.TTFT, c.ITL = 4, 20*time.Millisecond, 10*time.Millisecond })
	const k = 2
	cfg := Config{
		Target: Target{
			URLs:  []string{g.URL},
			Model: "ok",
		},
		Workload: Workload{
			ISL: fixed(16),
			OSL: fixed(4),
		},
		Load: Load{
			Concurrency:        6,
			PrefillConcurrency: k,
		},
		Stop: Stop{
			Requests: 24,
		},
	}
	out, err := Run(context.Background(), cfg, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, emits, _ := g.snapshot()
	type ev struct {
		t     time.Time
		delta int
	}
	var evs []ev
	g.mu.Lock()
	for id, at := range g.arrived {
		if e := emits[id]; len(e) > 0 {
			evs = append(evs, ev{at, +1}, ev{e[0].Before, -1})
		}
	}
	g.mu.Unlock()
	if len(evs) != 2*24 {
		t.Fatalf("%d requests with a first content chunk, want 24", len(evs)/2)
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.delta - b.delta // an end before a start at the same instant
	})
	n, peak := 0, 0
	for _, e := range evs {
		n += e.delta
		peak = max(peak, n)
	}
	if peak > k || peak == 0 {
		t.Errorf("the server saw %d requests at once waiting for a first token, want 1..%d", peak, k)
	}
	for _, r := range out.Records {
		if !r.OK() {
			t.Errorf("record %d: %s %s", r.Index, r.ErrorKind, r.Error)
		}
	}
}
