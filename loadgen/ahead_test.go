package loadgen

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// TestOpenLoopPreparedSendsInOrder runs a Poisson open loop over real connections at
// 2,000 req/s (many gaps shorter than a request's preparation) and checks what the
// send gates promise, from the client's own records: every request is sent no earlier
// than its due time, and in schedule order — request k+1's send starts only after
// request k's write returned, so Sent grows with the index, which goroutines started
// at their due times would not guarantee. It also checks each request found its
// connection ready: none waited for a connection at its due time (Blocked, the wait
// for a connection after the send began, under 1 ms). The failure path: records out
// of order are caught by the same comparison (TestOrderCheckCatchesSwap).
func TestOpenLoopPreparedSendsInOrder(t *testing.T) {
	g := newGroundTruth(t)
	const n = 400
	out, err := Run(context.Background(), Config{Target: Target{URLs: []string{g.URL}, Model: "ok"}, Workload: Workload{Seed: 3, ISL: fixed(8)}, Load: Load{Rate: 2000}, Stop: Stop{Requests: n}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Records) != n {
		t.Fatalf("%d records; want %d", len(out.Records), n)
	}
	for _, r := range out.Records {
		if !r.OK() {
			t.Fatalf("request %s failed: %s", r.RequestID, r.Error)
		}
		if r.Sent < r.Scheduled {
			t.Errorf("request %s sent at %v, before its due time %v", r.RequestID, r.Sent, r.Scheduled)
		}
		if r.Blocked >= time.Millisecond {
			t.Errorf("request %s waited %v for a connection after its due time", r.RequestID, r.Blocked)
		}
	}
	if i := outOfOrder(out.Records); i >= 0 {
		t.Errorf("request index %d was sent before request %d", i+1, i)
	}
}

// outOfOrder returns the first index i whose request's send began after request
// i+1's, or -1.
func outOfOrder(recs []record.Client) int {
	byIdx := slices.Clone(recs)
	slices.SortFunc(byIdx, func(a, b record.Client) int { return a.Index - b.Index })
	for i := 1; i < len(byIdx); i++ {
		if byIdx[i].Sent < byIdx[i-1].Sent {
			return byIdx[i-1].Index
		}
	}
	return -1
}

func TestOrderCheckCatchesSwap(t *testing.T) {
	recs := []record.Client{{Index: 1, Sent: 10}, {Index: 0, Sent: 11}}
	if outOfOrder(recs) != 0 {
		t.Error("request 1 sent before request 0 was not caught")
	}
	recs[0].Sent = 12
	if outOfOrder(recs) != -1 {
		t.Error("sends in order were reported out of order")
	}
}

// TestOpenLoopGatesSurviveFailures: requests that fail before any write (nothing
// listens on the port) must still hand their turn on, or every later request would
// wait at its gate for ever. 40 requests at 1,000 req/s to a closed port: the run ends
// with 40 connect failures. (The bound on the run is only there to fail fast instead
// of hanging; a working run takes 40 ms of schedule.)
func TestOpenLoopGatesSurviveFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := Run(ctx, Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:1"}}, Workload: Workload{ISL: fixed(8)}, Load: Load{Rate: 1000}, Stop: Stop{Requests: 40}}, gpt2(t), nil)
	if err != nil {
		t.Fatalf("the run did not end by itself: %v", err)
	}
	if len(out.Records) != 40 {
		t.Fatalf("%d records; want 40", len(out.Records))
	}
	for _, r := range out.Records {
		if r.ErrorKind != record.ErrConnect {
			t.Errorf("request %s: %q (%s); want a connect failure", r.RequestID, r.ErrorKind, r.Error)
		}
	}
}
