package loadgen

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// TestOpenLoopPreparedSends runs a Poisson open loop over real connections at 2,000
// req/s (many gaps shorter than a request's preparation) and checks from the client's
// own records that every request is sent, and none before its due time. (Order is not
// promised: a request not prepared by its due time is overtaken by those that are, see
// TestSendLoopLateRequestOvertaken.)
func TestOpenLoopPreparedSends(t *testing.T) {
	g := newGroundTruth(t)
	runOnTime(t, Config{Target: Target{URLs: []string{g.URL}, Model: "ok"}, Workload: Workload{Seed: 3, ISL: fixed(8)}, Load: Load{Rate: 2000}, Stop: Stop{Requests: 400}}, "")
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

// TestOpenLoopWholeAnswersOverlap: a non-streaming open-loop request hands its turn on
// when it is written, not when its answer comes (a plain-TCP write can wait for the
// answer, see sendWaiter). 100 requests at 2,000 req/s to a server that answers after
// 20 ms must be in flight together; handed on at the answer they would go one at a
// time, each after the previous one's answer.
func TestOpenLoopWholeAnswersOverlap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":" hello"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	defer srv.Close()
	out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{srv.URL}}, Workload: Workload{Seed: 4, ISL: fixed(8)}, Load: Load{Rate: 2000}, Stop: Stop{Requests: 100}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Records) != 100 {
		t.Fatalf("%d records; want 100", len(out.Records))
	}
	if m := maxInFlight(out.Records); m < 2 {
		t.Errorf("at most %d request in flight at once; want several (each sent only after the previous answer?)", m)
	}
}

// maxInFlight is the most records whose [Sent, Done) spans overlap at one instant.
func maxInFlight(recs []record.Client) int {
	type ev struct {
		t time.Duration
		d int
	}
	var evs []ev
	for _, r := range recs {
		evs = append(evs, ev{r.Sent, 1}, ev{r.Done, -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.d - b.d // an end before a start at the same instant
	})
	n, m := 0, 0
	for _, e := range evs {
		n += e.d
		m = max(m, n)
	}
	return m
}

func TestMaxInFlight(t *testing.T) {
	seq := []record.Client{{Sent: 0, Done: 10}, {Sent: 10, Done: 20}}
	if m := maxInFlight(seq); m != 1 {
		t.Errorf("back-to-back requests: %d in flight; want 1", m)
	}
	seq[1].Sent = 5
	if m := maxInFlight(seq); m != 2 {
		t.Errorf("overlapping requests: %d in flight; want 2", m)
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// TestOpenLoopKeepsSpareConnections: requests one at a time (200 req/s against an
// instant server) need one connection, but the open loop keeps spareConns more dialed
// ahead, so a burst does not wait for a dial: the server accepts at least
// 1 + spareConns. Without the warmer it would accept one.
func TestOpenLoopKeepsSpareConnections(t *testing.T) {
	ln, url := countingServer(t, func(*countingListener) {})
	out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{url}}, Workload: Workload{ISL: fixed(8)}, Load: Load{Rate: 200, Arrival: ArrivalConstant}, Stop: Stop{Requests: 40}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Records {
		if !r.OK() {
			t.Fatalf("request %s failed: %s", r.RequestID, r.Error)
		}
	}
	if n := ln.n.Load(); n < 1+spareConns {
		t.Errorf("the server accepted %d connections; want at least %d (one in use, %d spare)", n, 1+spareConns, spareConns)
	}
}

// TestOpenLoopStaleKeepAliveIsRetried: in the open loop a request's connection is taken
// before its due time and its answer awaited while the send loop has yet to write it.
// A server that closes every connection after one answer (without saying so) makes
// the pooled connections stale: the reader then sees the end of the stream before the
// write, or the write fails, and the request must be retried on a fresh connection —
// not before its due time, and without an error recorded.
func TestOpenLoopStaleKeepAliveIsRetried(t *testing.T) {
	var conns atomic.Int64
	addr := serveRaw(t, func(c net.Conn) {
		conns.Add(1)
		answerHello(c)
	})
	const n = 30
	runOnTime(t, Config{Target: Target{NoStream: true, URLs: []string{"http://" + addr}}, Workload: Workload{ISL: fixed(8)}, Load: Load{Rate: 500, Arrival: ArrivalConstant}, Stop: Stop{Requests: n}}, "; want the stale connection retried")
	if c := conns.Load(); c < n {
		t.Errorf("the server saw %d connections; want one per request (%d)", c, n)
	}
}

// TestOpenLoopCancelEndsWaits: a run cancelled while requests wait prepared for the
// send loop ends by itself, its waiting requests recorded as cancelled, none sent
// before its due time. 2,000 req/s of answers that take 50 ms, cancelled when the
// first answer is in: then about 100 requests are in flight and more wait prepared.
// (A cancellation at a fixed wall time could come before the first request on a
// loaded machine, and the run would end with nothing to judge.)
func TestOpenLoopCancelEndsWaits(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.TTFT = 50 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	sink := func(record.Client) { once.Do(cancel) }
	out, err := Run(ctx, Config{Target: Target{URLs: []string{g.URL}, Model: "ok"}, Workload: Workload{Seed: 5, ISL: fixed(8)}, Load: Load{Rate: 2000}, Stop: Stop{Requests: 100000}}, gpt2(t), sink)
	if err == nil {
		t.Fatal("a cancelled run reported no error")
	}
	if len(out.Records) == 0 {
		t.Fatal("no records")
	}
	cancelled := 0
	for _, r := range out.Records {
		if r.ErrorKind == record.ErrCancelled {
			cancelled++
		}
		if r.OK() {
			checkNotEarly(t, r)
		}
	}
	if cancelled == 0 {
		t.Errorf("none of %d records was cancelled; want the requests in flight at the cancellation", len(out.Records))
	}
}

// TestOpenLoopPrewarms: an open loop over HTTP dials the connections its start needs
// before its clock starts (about the rate times twice its lead), so its first
// requests do not each dial in their preparation. At 5,000 req/s that is 200 (the
// 20 ms lead); under a concurrency ceiling, whose slots prepared requests hold, the
// lead is 2 ms and the prewarm 20, fewer than 200. The server must have accepted
// them all by the time the first request reaches it; without the prewarm it had
// accepted 8 in a trial (the first requests' own dials).
func TestOpenLoopPrewarms(t *testing.T) {
	const rate = 5000
	for _, tc := range []struct {
		name        string
		concurrency int
		lead        time.Duration
	}{{"no ceiling", 0, prepareLead}, {"ceiling", 64, ceilingLead}} {
		t.Run(tc.name, func(t *testing.T) {
			want := int64(min(math.Ceil(rate*2*tc.lead.Seconds()), maxAhead))
			// A connection dialed before the start has completed its handshake in the
			// kernel, but this process's accept loop may not have taken it yet when the
			// first request's handler runs (it lags on a busy machine). So the first
			// request waits, bounded, for the accept loop to reach want: connections
			// dialed before the start all get there, while a run that did not prewarm
			// dials only about its 10 requests' connections and stays far below it.
			var atFirst atomic.Int64
			var first atomic.Bool
			ln, url := countingServer(t, func(ln *countingListener) {
				if !first.CompareAndSwap(false, true) {
					return
				}
				for end := time.Now().Add(10 * time.Second); ln.n.Load() < want && time.Now().Before(end); {
					time.Sleep(time.Millisecond)
				}
				atFirst.Store(ln.n.Load())
			})
			load := Load{Rate: rate, Arrival: ArrivalConstant, Concurrency: tc.concurrency}
			runOnTime(t, Config{Target: Target{NoStream: true, URLs: []string{url}}, Workload: Workload{ISL: fixed(8)}, Load: load, Stop: Stop{Requests: 10}}, "")
			if n := atFirst.Load(); n < want {
				t.Errorf("the server had accepted %d connections when the first request came (after waiting for the accept loop); want the %d dialed before the start", n, want)
			}
			// Under a ceiling the run dials the shorter lead's connections, and its 10
			// requests reuse them: all it ever dialed stays under the longer lead's.
			if all := ln.n.Load(); tc.concurrency > 0 && all >= int64(math.Ceil(rate*2*prepareLead.Seconds())) {
				t.Errorf("under a ceiling the server accepted %d connections in all; want about the shorter lead's %d", all, want)
			}
		})
	}
}

// runOnTime runs cfg, which must end without error after cfg.Stop.Requests requests,
// each of them answered (else it fails, adding why to the message) and none sent
// before its due time.
func runOnTime(t *testing.T, cfg Config, why string) *Outcome {
	t.Helper()
	out, err := Run(context.Background(), cfg, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := cfg.Stop.Requests; len(out.Records) != n {
		t.Fatalf("%d records; want %d", len(out.Records), n)
	}
	for _, r := range out.Records {
		if !r.OK() {
			t.Fatalf("request %s: %s %s%s", r.RequestID, r.ErrorKind, r.Error, why)
		}
		checkNotEarly(t, r)
	}
	return out
}

// checkNotEarly fails t if r was sent before its due time.
func checkNotEarly(t *testing.T, r record.Client) {
	t.Helper()
	if r.Sent < r.Scheduled {
		t.Errorf("request %s sent at %v, before its due time %v", r.RequestID, r.Sent, r.Scheduled)
	}
}

// countingServer starts an HTTP server on loopback, closed with t, that answers every
// request with a one-token chat completion after calling onRequest, and counts the
// connections it accepts; it returns the counting listener and the server's URL.
func countingServer(t *testing.T, onRequest func(*countingListener)) (*countingListener, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: l}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		onRequest(ln)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":" hello"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return ln, srv.URL
}

// TestSendLoopLateRequestOvertaken: a request whose sender has not handed it to the
// send loop by its due time holds back only itself. Three requests due at 0, 20 and
// 40 ms are handed over in the order 1, 2, and request 0 only once request 1 is
// written: request 1 must be written without waiting for request 0 (a loop that passed
// strictly in schedule order never writes it: the test would fail at its bound), and
// request 0 as soon as it is in, every one no earlier than its due time.
func TestSendLoopLateRequestOvertaken(t *testing.T) {
	r := &openLoop{clock: &runClock{start: time.Now(), self: &selfMeter{}}, spin: DefaultSpin, pacer: ConstantPacer{Freq: 50}}
	loop := newSendLoop(r)
	writes := make(chan uint64, 3)
	gates := make([]*sendGate, 3)
	for i := range gates {
		due, _ := r.pacer.Pace(0, uint64(i))
		g := &sendGate{seq: uint64(i), due: due, loop: loop, ctx: context.Background(), buf: []byte{byte(i)}, done: make(chan struct{}, 1)}
		g.cn = &conn{Conn: writeLog{seq: g.seq, writes: writes}}
		gates[i] = g
		loop.ahead <- struct{}{}
	}
	ended := make(chan struct{})
	go func() { loop.run(context.Background()); close(ended) }()
	gates[1].submit()
	gates[2].submit()
	select {
	case s := <-writes:
		if s != 1 {
			t.Fatalf("request %d written first; want request 1 (request 0 was not handed over)", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("request 1 was not written in 10 s: held back behind request 0, whose sender had not handed it over")
	}
	gates[0].submit()
	loop.finish(3)
	<-ended
	close(writes)
	got := []uint64{1}
	for s := range writes {
		got = append(got, s)
	}
	if slices.Sort(got); !slices.Equal(got, []uint64{0, 1, 2}) {
		t.Fatalf("requests written: %v; want each of 0, 1, 2 once", got)
	}
	for _, g := range gates {
		if g.state.Load() != gateWritten || g.err != nil {
			t.Errorf("request %d: state %d, error %v; want written", g.seq, g.state.Load(), g.err)
		}
		if g.sent < g.due {
			t.Errorf("request %d written at %v, before its due time %v", g.seq, g.sent, g.due)
		}
	}
}

// writeLog is a connection that reports each write's request on writes.
type writeLog struct {
	net.Conn
	seq    uint64
	writes chan<- uint64
}

func (w writeLog) Write(b []byte) (int, error) {
	w.writes <- w.seq
	return len(b), nil
}

// TestOpenLoopHeadStart: the open loop's pacer starts one lead before the run clock's
// zero, so the requests due first are prepared ahead like the rest. A pacer that notes
// the earliest time it is asked about must see about minus the lead (the loop before
// the head start asked at 0 or later), and every request still goes out at or after
// its due time.
//
// How early the loop first asks depends on the scheduler too: a loop that gets the CPU
// a lead after the clock was set (seen once in four loaded runs of the suite) asks at 0
// or later, head start or not. So the head start must show in one of up to five runs
// (a loop without it never shows it), and no run may ask earlier than twice the lead.
func TestOpenLoopHeadStart(t *testing.T) {
	g := newGroundTruth(t)
	var seen []time.Duration
	for range 5 {
		p := &earliestPace{Pacer: ConstantPacer{Freq: 1000}}
		p.earliest.Store(math.MaxInt64)
		runOnTime(t, Config{Target: Target{URLs: []string{g.URL}, Model: "ok"}, Workload: Workload{ISL: fixed(8)}, Load: Load{Pacer: p}, Stop: Stop{Requests: 20}}, "")
		e := time.Duration(p.earliest.Load())
		if e < -2*prepareLead {
			t.Fatalf("the pacer was first asked at %v of the run clock; want no earlier than -%v (twice its lead)", e, 2*prepareLead)
		}
		seen = append(seen, e)
		if e <= -prepareLead/2 {
			return
		}
	}
	t.Errorf("in 5 runs the pacer was first asked at %v of the run clock; want about -%v (its lead before zero) in one of them", seen, prepareLead)
}

// earliestPace is a Pacer that remembers the earliest elapsed time it was asked about.
type earliestPace struct {
	Pacer
	earliest atomic.Int64
}

func (p *earliestPace) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	for {
		e := p.earliest.Load()
		if int64(elapsed) >= e || p.earliest.CompareAndSwap(e, int64(elapsed)) {
			break
		}
	}
	return p.Pacer.Pace(elapsed, sent)
}
