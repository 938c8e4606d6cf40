package loadgen

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/record"
)

// hashSender is fakeSender that also keeps a hash of each request's body by index.
type hashSender struct {
	fakeSender
	hmu    sync.Mutex
	hashes map[int][32]byte
}

func (h *hashSender) send(ctx context.Context, c *call, rec *record.Client, res *result) {
	sum := sha256.Sum256(c.body)
	h.hmu.Lock()
	h.hashes[rec.Index] = sum
	h.hmu.Unlock()
	h.fakeSender.send(ctx, c, rec, res)
}

// sentRequest is what parity compares: what was sent, as the single run sent it.
type sentRequest struct {
	Index, ISL, OSL int
	Hash            [32]byte
	Scheduled       time.Duration
	Warmup          bool
}

// runShards runs cfg as shards processes in virtual time (one bubble each; every
// clock starts at the bubble's epoch, as shards synchronised by StartAt do) and
// returns the union of their requests sorted by index, and every send time.
func runShards(t *testing.T, cfg Config, shards int) ([]sentRequest, []time.Duration) {
	t.Helper()
	tok := gpt2(t)
	if cfg.URLs == nil {
		cfg.URLs = []string{"http://127.0.0.1:9"}
	}
	var all []sentRequest
	var sent []time.Duration
	for i := range shards {
		c := cfg
		if shards > 1 {
			c.Shards, c.ShardIndex = shards, i
		}
		synctest.Test(t, func(t *testing.T) {
			r, err := newRunner(context.Background(), c, tok, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.spin = 0
			hs := &hashSender{fakeSender: fakeSender{clock: r.clock, latency: 30 * time.Millisecond}, hashes: map[int][32]byte{}}
			r.sender = hs
			out, err := r.run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range out.Records {
				all = append(all, sentRequest{rec.Index, rec.ISL, rec.RequestedOSL, hs.hashes[rec.Index], rec.Scheduled, rec.Warmup})
			}
			sent = append(sent, hs.sent...)
		})
	}
	slices.SortFunc(all, func(a, b sentRequest) int { return a.Index - b.Index })
	slices.Sort(sent)
	return all, sent
}

func gapsOf(ts []time.Duration) []float64 {
	g := make([]float64, 0, len(ts))
	for i := 1; i < len(ts); i++ {
		g = append(g, (ts[i] - ts[i-1]).Seconds())
	}
	return g
}

// TestShardParity: one process and four shards of the same seeded Poisson workload
// send the same requests — the same multiset of (global index, ISL, requested OSL,
// body hash, scheduled time, warmup) — and the merged send times are the single
// process's, so their gaps pass the KS test it passes (alpha 0.01, n = 2,000, seed 5).
func TestShardParity(t *testing.T) {
	const alpha = 0.01
	cfg := Config{Target: Target{NoStream: true}, Workload: Workload{Seed: 5, ISL: spec(t, "normal:64,16"), OSL: spec(t, "uniform:4,40")}, Load: Load{Rate: 400}, Stop: Stop{Requests: 2000, WarmupRequests: 10}}
	one, sentOne := runShards(t, cfg, 1)
	four, sentFour := runShards(t, cfg, 4)
	if len(one) != 2010 {
		t.Fatalf("one process sent %d requests; want 2010", len(one))
	}
	if len(four) != len(one) {
		t.Fatalf("four shards sent %d requests; one process %d", len(four), len(one))
	}
	for i := range one {
		if one[i] != four[i] {
			t.Fatalf("request %d differs:\n  one process: %+v\n  four shards: %+v", i, one[i], four[i])
		}
	}
	if !slices.Equal(sentOne, sentFour) {
		t.Errorf("merged send times differ from one process's")
	}
	model := distribution.Exponential{Rate: 400}
	k1, k4 := distribution.KS1(gapsOf(sentOne), model), distribution.KS1(gapsOf(sentFour), model)
	if k1.Reject(alpha) || k4.Reject(alpha) {
		t.Errorf("arrival gaps rejected at alpha %v: one process %v; four shards merged %v", alpha, k1, k4)
	}
	t.Logf("one process: %v; four shards merged: %v", k1, k4)
}

// TestShardWrongPartitionDetected is the failure path of TestShardParity's KS check:
// four shards that each run the whole Poisson schedule at Rate/4 from the same seed
// (the naive split: each shard "its own Poisson process" but seeded alike) arrive in
// lockstep, and the merged gaps fail KS at alpha 0.01. Four independently seeded
// processes at Rate/4 pass KS (a superposition of independent Poisson processes is
// Poisson), but they are not the single run's workload: their per-index schedule
// differs, which the parity comparison detects.
func TestShardWrongPartitionDetected(t *testing.T) {
	const alpha, rate, n = 0.01, 400.0, 2000
	model := distribution.Exponential{Rate: rate}
	merged := func(seed func(i int) uint64) ([]time.Duration, [][]float64) {
		var ts []time.Duration
		var dues [][]float64
		for i := range 4 {
			p := &PoissonPacer{Freq: rate / 4, Src: rand.NewPCG(seed(i), 0xa441)}
			var d []float64
			for k := range uint64(n / 4) {
				w, _ := p.Pace(0, k)
				ts = append(ts, w)
				d = append(d, w.Seconds())
			}
			dues = append(dues, d)
		}
		slices.Sort(ts)
		return ts, dues
	}
	same, _ := merged(func(int) uint64 { return 5 })
	if ks := distribution.KS1(gapsOf(same), model); !ks.Reject(alpha) {
		t.Errorf("four same-seeded Poisson processes at rate/4 pass KS (%v); the check cannot see a wrong split", ks)
	}
	indep, _ := merged(func(i int) uint64 { return uint64(100 + i) })
	ks := distribution.KS1(gapsOf(indep), model)
	t.Logf("independent seeds at rate/4: %v (passes, as superposition predicts)", ks)
	global := &PoissonPacer{Freq: rate, Src: rand.NewPCG(5, 0xa441)}
	var want []time.Duration
	for k := range uint64(n) {
		w, _ := global.Pace(0, k)
		want = append(want, w)
	}
	if slices.Equal(indep, want) {
		t.Errorf("independent processes reproduced the global schedule; the parity check cannot tell them apart")
	}
}

// TestShardClosedLoopSplit: closed-loop concurrency 10 over 4 shards runs 3, 3, 2, 2
// workers (10/4, plus one for shards below 10 mod 4), and the union of their requests
// is the single run's set of (index, ISL, OSL, body hash).
func TestShardClosedLoopSplit(t *testing.T) {
	for i, want := range []int{3, 3, 2, 2} {
		if got := ShardWorkers(10, 4, i); got != want {
			t.Errorf("ShardWorkers(10, 4, %d) = %d, want %d", i, got, want)
		}
	}
	cfg := Config{Target: Target{NoStream: true}, Workload: Workload{Seed: 9, ISL: spec(t, "normal:64,16"), OSL: spec(t, "uniform:4,40")}, Load: Load{Concurrency: 10}, Stop: Stop{Requests: 200}}
	one, _ := runShards(t, cfg, 1)
	four, _ := runShards(t, cfg, 4)
	strip := func(rs []sentRequest) []sentRequest {
		out := slices.Clone(rs)
		for i := range out {
			out[i].Scheduled = 0 // closed loop: when is up to the server
		}
		return out
	}
	if !slices.Equal(strip(one), strip(four)) || len(one) != 200 {
		t.Errorf("closed loop: four shards sent a different workload (%d vs %d requests)", len(four), len(one))
	}
	out, fs := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Concurrency: 10, Shards: 4, ShardIndex: 2}, Stop: Stop{Requests: 200}}, 10*time.Millisecond)
	if got := fs.maxIn.Load(); got != 2 {
		t.Errorf("shard 2/4 of concurrency 10 held %d requests in flight; want 2", got)
	}
	if !strings.Contains(out.Mode, "2 of 10 workers") {
		t.Errorf("Mode = %q; want it to say 2 of 10 workers", out.Mode)
	}
	for _, r := range out.Records {
		if r.Index%4 != 2 {
			t.Fatalf("shard 2/4 sent global index %d", r.Index)
		}
	}
}

// TestShardRefused: modes a partition cannot reproduce are invalid configuration,
// with the reason.
func TestShardRefused(t *testing.T) {
	base := Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:9"}}, Stop: Stop{Requests: 10}}
	for _, tc := range []struct {
		name string
		mod  func(c *Config)
		want string
	}{
		{"fewer workers than shards", func(c *Config) { c.Shards, c.Concurrency = 4, 3 }, "leaves shards without a worker"},
		{"open-loop ceiling", func(c *Config) { c.Shards, c.Rate, c.Concurrency = 4, 10, 8 }, "cannot be split"},
		{"index out of range", func(c *Config) { c.Shards, c.ShardIndex, c.Concurrency = 4, 4, 4 }, "shard_index 4"},
		{"negative shards", func(c *Config) { c.Shards = -1 }, "shards -1"},
	} {
		c := base
		tc.mod(&c)
		err := c.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Errorf("%s: Validate() = %v; want ErrInvalidConfig saying %q", tc.name, err, tc.want)
		}
	}
	ok := base
	ok.Shards, ok.ShardIndex, ok.Rate = 4, 3, 10
	if err := ok.Validate(); err != nil {
		t.Errorf("open loop over 4 shards: %v", err)
	}
}

// TestShardTracePartition: a fixed schedule is partitioned by index — shard I replays
// offsets I, I+N, … at their own times and stops after the last.
func TestShardTracePartition(t *testing.T) {
	tp := TracePacer{Offsets: []time.Duration{0, 10, 20, 30, 40, 50, 60}}
	p := ShardPacer{Global: tp, Shards: 3, Index: 1}
	var got []time.Duration
	for k := uint64(0); ; k++ {
		w, stop := p.Pace(0, k)
		if stop {
			break
		}
		got = append(got, w)
	}
	if want := []time.Duration{10, 40}; !slices.Equal(got, want) {
		t.Errorf("shard 1/3 of a 7-offset trace: due %v, want %v", got, want)
	}
}

// TestStartAt: with StartAt in the future the run clock starts then (virtual time);
// with StartAt in the past it still starts there and StartLate says how late. With a
// head start (the open loop's), startClock returns that long before the clock's zero:
// StartAt's, or its own; a head start that reaches back before the call is not late.
func TestStartAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := newRunner(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:9"}}, Load: Load{StartAt: time.Now().Add(3 * time.Second)}, Stop: Stop{Requests: 1}}, gpt2(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if err := r.startClock(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		if d := r.clock.start.Sub(t0); d != 3*time.Second || r.out.StartLate != 0 {
			t.Errorf("clock started %v after StartAt was set, late %v; want 3s, 0", d, r.out.StartLate)
		}
		r2, _ := newRunner(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:9"}}, Load: Load{StartAt: time.Now().Add(-2 * time.Second)}, Stop: Stop{Requests: 1}}, gpt2(t), nil)
		if err := r2.startClock(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		if r2.out.StartLate != 2*time.Second {
			t.Errorf("StartLate = %v; want 2s", r2.out.StartLate)
		}
		const head = 5 * time.Millisecond
		for _, c := range []struct {
			name    string
			startAt time.Duration // from now; 0: none
			wantRet time.Duration // when startClock returns, from now
		}{{"StartAt ahead", 3 * time.Second, 3*time.Second - head}, {"StartAt within the head start", time.Millisecond, 0}, {"no StartAt", 0, 0}} {
			cfg := Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:9"}}, Stop: Stop{Requests: 1}}
			t0 := time.Now()
			if c.startAt != 0 {
				cfg.StartAt = t0.Add(c.startAt)
			}
			r3, _ := newRunner(context.Background(), cfg, gpt2(t), nil)
			if err := r3.startClock(context.Background(), head); err != nil {
				t.Fatal(err)
			}
			zero := c.startAt
			if zero == 0 {
				zero = head
			}
			if ret, start := time.Since(t0), r3.clock.start.Sub(t0); ret != c.wantRet || start != zero || r3.out.StartLate != 0 {
				t.Errorf("%s: returned after %v, clock zero %v after the call, late %v; want %v, %v, 0", c.name, ret, start, r3.out.StartLate, c.wantRet, zero)
			}
		}
	})
}

func spec(t *testing.T, s string) distribution.Spec {
	t.Helper()
	var sp distribution.Spec
	if err := sp.UnmarshalText([]byte(s)); err != nil {
		t.Fatal(err)
	}
	return sp
}
