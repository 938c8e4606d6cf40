package loadgen

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// fakeSender answers every request after latency of virtual time, with one token
// chunk, and tracks how many requests are in flight.
type fakeSender struct {
	clock    *runClock
	latency  time.Duration
	inFlight atomic.Int64
	maxIn    atomic.Int64
	mu       sync.Mutex
	sent     []time.Duration
}

func (f *fakeSender) send(ctx context.Context, c *call, rec *record.Client, res *result) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxIn.Load()
		if n <= m || f.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	rec.Sent = f.clock.now()
	f.mu.Lock()
	f.sent = append(f.sent, rec.Sent)
	f.mu.Unlock()
	if !sleep(ctx, f.latency) {
		rec.Done, rec.ErrorKind = f.clock.now(), record.ErrCancelled
		return
	}
	rec.Done, rec.Status = f.clock.now(), 200
	res.text = append(res.text, " hello"...)
	res.ends = append(res.ends, len(res.text))
	rec.Chunks = append(rec.Chunks, record.Chunk{T: rec.Done, Choices: true})
}

// runFake runs cfg in a synctest bubble with a fake sender.
func runFake(t *testing.T, cfg Config, latency time.Duration) (*Outcome, *fakeSender) {
	t.Helper()
	tok := gpt2(t)
	if cfg.URLs == nil {
		cfg.URLs = []string{"http://127.0.0.1:9"}
	}
	if cfg.ISL.Distribution == nil {
		cfg.ISL = fixed(8)
	}
	var out *Outcome
	var fs *fakeSender
	synctest.Test(t, func(t *testing.T) {
		r, err := newRunner(context.Background(), cfg, tok, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.spin = 0 // a spin never blocks, so virtual time would never advance
		fs = &fakeSender{clock: r.clock, latency: latency}
		r.sender = fs
		out, err = r.run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
	})
	return out, fs
}

// TestPoissonArrivalsFitExponential: in virtual time the send times are exactly the
// pacer's; their gaps must fit Exponential(rate). KS alpha = 0.01, n = 3000.
func TestPoissonArrivalsFitExponential(t *testing.T) {
	out, fs := runFake(t, Config{Target: Target{NoStream: true}, Workload: Workload{Seed: 11}, Load: Load{Rate: 200}, Stop: Stop{Requests: 3000}}, 20*time.Millisecond)
	if len(out.Records) != 3000 {
		t.Fatalf("%d records; want 3000", len(out.Records))
	}
	sent := slices.Clone(fs.sent)
	slices.Sort(sent)
	gaps := make([]float64, len(sent)-1)
	for i := range gaps {
		gaps[i] = (sent[i+1] - sent[i]).Seconds()
	}
	ks := distribution.KS1(gaps, distribution.Exponential{Rate: 200})
	if ks.Reject(0.01) {
		t.Errorf("send gaps do not fit Exponential{200}: %v (alpha 0.01)", ks)
	}
	// The failure path: the same gaps against the wrong rate are rejected.
	if bad := distribution.KS1(gaps, distribution.Exponential{Rate: 150}); !bad.Reject(0.01) {
		t.Errorf("gaps fit Exponential{150} too: %v; the test cannot fail", bad)
	}
	rate := float64(len(sent)-1) / (sent[len(sent)-1] - sent[0]).Seconds()
	if rate < 190 || rate > 210 {
		t.Errorf("achieved rate %.1f req/s; want 200 ± 5%%", rate)
	}
}

func TestConcurrencyCeilingQueues(t *testing.T) {
	out, fs := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Rate: 100, Arrival: ArrivalConstant, Concurrency: 2}, Stop: Stop{Requests: 100}}, 100*time.Millisecond)
	if m := fs.maxIn.Load(); m != 2 {
		t.Errorf("max in flight = %d; want the ceiling 2", m)
	}
	q, ok := out.Metrics.Stat(record.MetricQueueTime)
	if !ok || q.Max < 1000 {
		t.Errorf("client queue time = %+v; want it to grow past 1s (100 req/s into 20 req/s of capacity)", q)
	}
	if tp := out.Metrics.Value(record.MetricRequestThroughput); tp < 19 || tp > 21 {
		t.Errorf("throughput %.2f req/s; want 20 (2 slots / 100 ms)", tp)
	}
}

func TestClosedLoopDurationAndWarmup(t *testing.T) {
	out, fs := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Concurrency: 4}, Stop: Stop{Duration: time.Second, WarmupRequests: 8}}, 10*time.Millisecond)
	if m := fs.maxIn.Load(); m != 4 {
		t.Errorf("max in flight = %d; want 4", m)
	}
	warm := 0
	for _, r := range out.Records {
		if r.Warmup {
			warm++
			if r.Index >= 8 {
				t.Errorf("request %d flagged warmup", r.Index)
			}
		}
	}
	if warm != 8 || out.Metrics.Warmup != 8 {
		t.Errorf("warmup records %d (metrics %d); want 8", warm, out.Metrics.Warmup)
	}
	// 4 workers × 100 req/s for 1 s (+ the warmup, which is inside the same second).
	if n := len(out.Records); n < 395 || n > 405 {
		t.Errorf("%d requests in 1 s; want 400", n)
	}
}

func TestWarmupDurationExcluded(t *testing.T) {
	out, _ := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Rate: 100, Arrival: ArrivalConstant}, Stop: Stop{WarmupDuration: 500 * time.Millisecond, Duration: time.Second}}, time.Millisecond)
	if out.Metrics.Warmup != 50 {
		t.Errorf("warmup = %d; want the 50 requests of the first 0.5 s", out.Metrics.Warmup)
	}
	if n := out.Metrics.Value(record.MetricRequestCount); n != 100 {
		t.Errorf("measured requests = %v; want 100", n)
	}
}

func TestRampPacesRate(t *testing.T) {
	out, fs := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Rate: 100, RampFrom: 0, Ramp: 2 * time.Second}, Stop: Stop{Duration: 2 * time.Second}}, time.Millisecond)
	// ∫ 0→100 over 2 s = 100 requests.
	if n := len(out.Records); n < 99 || n > 101 {
		t.Errorf("%d requests during a 0→100 req/s ramp over 2 s; want 100", n)
	}
	first := 0
	for _, s := range fs.sent {
		if s < time.Second {
			first++
		}
	}
	if first < 24 || first > 26 {
		t.Errorf("%d requests in the first second; want 25 (a quarter of the ramp's area)", first)
	}
}

func TestClosedLoopRampStartsWorkers(t *testing.T) {
	_, fs := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Concurrency: 4, Ramp: 400 * time.Millisecond}, Stop: Stop{Requests: 4}}, time.Second)
	want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}
	got := slices.Clone(fs.sent)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("worker start times = %v; want %v", got, want)
	}
}

func TestMultiTurnDelays(t *testing.T) {
	out, fs := runFake(t, Config{Target: Target{NoStream: true}, Workload: Workload{Turns: fixed(3), TurnDelay: fixed(0.25)}, Load: Load{Concurrency: 1}, Stop: Stop{Requests: 6}}, 100*time.Millisecond)
	got := slices.Clone(fs.sent)
	slices.Sort(got)
	// turn 0 at 0, done 100 ms, +250 ms → 350, done 450 → 700; next conversation at 800.
	want := []time.Duration{0, 350 * time.Millisecond, 700 * time.Millisecond, 800 * time.Millisecond, 1150 * time.Millisecond, 1500 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Errorf("send times = %v; want %v", got, want)
	}
	for _, r := range out.Records {
		if r.Conversation == "" {
			t.Errorf("record %d has no conversation id", r.Index)
		}
		if r.Turn > 0 && r.ISL <= 8 {
			t.Errorf("turn %d ISL %d; want history counted", r.Turn, r.ISL)
		}
	}
}

// TestScheduleReplaysTrace runs a mooncake trace on its own timestamps at speed-up 2.
func TestScheduleReplaysTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	trace := `{"timestamp": 1000, "input_length": 20, "output_length": 4, "hash_ids": [1]}
{"timestamp": 1400, "input_length": 30, "output_length": 4, "hash_ids": [1, 2]}
{"timestamp": 3000, "input_length": 25, "output_length": 4, "hash_ids": [3]}
`
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	out, fs := runFake(t, Config{Target: Target{NoStream: true}, Workload: Workload{InputFile: path, InputFormat: FormatMooncake, BlockTokens: 16}, Load: Load{Schedule: true, Speedup: 2}}, 10*time.Millisecond)
	got := slices.Clone(fs.sent)
	slices.Sort(got)
	want := []time.Duration{0, 200 * time.Millisecond, 1000 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Errorf("send times = %v; want %v (trace offsets / 2)", got, want)
	}
	for _, r := range out.Records {
		if !r.ISLExact || r.RequestedOSL != 4 {
			t.Errorf("record %d: exact %v, requested OSL %d", r.Index, r.ISLExact, r.RequestedOSL)
		}
	}
	if !strings.HasPrefix(out.Mode, "Trace{3 requests") {
		t.Errorf("mode = %q", out.Mode)
	}
}

// TestVLLMCorpusThroughRun checks that corpus "vllm" sends vLLM's lengths.
func TestVLLMCorpusThroughRun(t *testing.T) {
	var cfg Config
	if err := json.Unmarshal([]byte(`{"corpus":"vllm","isl":"vllm-range:64,0.5","osl":"vllm-range:16,0.5","requests":20,"concurrency":2,"seed":3}`), &cfg); err != nil {
		t.Fatal(err)
	}
	out, _ := runFake(t, cfg, time.Millisecond)
	items, err := dataset.VLLMRandomRequests(dataset.VLLMRandom{Tok: gpt2(t), NumRequests: 20, InputLen: 64, OutputLen: 16, RangeRatio: 0.5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{}
	for _, c := range items {
		want[c.Turns[0].RequestedISL*1000+c.Turns[0].OSL] = true
	}
	for _, r := range out.Records {
		if !want[r.RequestedISL*1000+r.RequestedOSL] || r.RequestedISL < 32 || r.RequestedISL > 96 {
			t.Errorf("record %d: ISL %d OSL %d not among vLLM's requests", r.Index, r.RequestedISL, r.RequestedOSL)
		}
	}
}

// TestGracePeriodCancelsInFlight: a duration run against a server that never answers
// (every request takes 10 s) ends at duration + grace: the requests still in flight are
// cancelled then and recorded as cancelled, saying why; without a grace they are
// cancelled at the duration's end. In virtual time (synctest), so the bound is exact.
func TestGracePeriodCancelsInFlight(t *testing.T) {
	for _, tc := range []struct {
		grace, want time.Duration
	}{
		{2 * time.Second, 3 * time.Second},
		{-1, time.Second},
		{0, time.Second + DefaultGracePeriod},
	} {
		out, _ := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Concurrency: 4}, Stop: Stop{Duration: time.Second, GracePeriod: tc.grace}}, 10*time.Minute)
		if len(out.Records) != 4 {
			t.Fatalf("grace %v: %d records; want 4 (one per worker)", tc.grace, len(out.Records))
		}
		if out.Elapsed != tc.want {
			t.Errorf("grace %v: run took %v; want %v (duration + grace)", tc.grace, out.Elapsed, tc.want)
		}
		for _, r := range out.Records {
			if r.ErrorKind != record.ErrCancelled || r.Done != tc.want {
				t.Errorf("grace %v: record %d: %s at %v; want cancelled at %v", tc.grace, r.Index, r.ErrorKind, r.Done, tc.want)
			}
		}
	}
}

// TestConcurrencyCappedToRequests: more workers than requests start only as many
// workers as requests (a --concurrency 100000000 --request-count 5 run does not spawn
// workers for minutes).
func TestConcurrencyCappedToRequests(t *testing.T) {
	out, fs := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Concurrency: MaxConcurrency}, Stop: Stop{Requests: 5}}, time.Millisecond)
	if len(out.Records) != 5 || out.Mode != "Closed{5 workers}" || fs.maxIn.Load() > 5 {
		t.Errorf("%d records, mode %q, %d in flight at most; want 5, Closed{5 workers}, <= 5", len(out.Records), out.Mode, fs.maxIn.Load())
	}
	if err := (&Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:1"}}, Load: Load{Concurrency: MaxConcurrency + 1}, Stop: Stop{Requests: 1}}).Validate(); err == nil {
		t.Errorf("concurrency %d validated; want an error", MaxConcurrency+1)
	}
}

// TestLengthsBounded: an ISL or OSL no server accepts is invalid before anything runs.
func TestLengthsBounded(t *testing.T) {
	for _, spec := range []string{"fixed:1e12", "normal:2e7,10", "lognormal:mean=1e9,stddev=10"} {
		c := Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:1"}}, Workload: Workload{ISL: distribution.Spec{Distribution: distribution.MustParse(spec)}}, Stop: Stop{Requests: 1}}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "no server takes") {
			t.Errorf("isl %s: Validate = %v; want a length error", spec, err)
		}
		c.ISL, c.OSL = fixed(128), distribution.Spec{Distribution: distribution.MustParse(spec)}
		if err := c.Validate(); err == nil {
			t.Errorf("osl %s validated; want an error", spec)
		}
	}
	ok := Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:1"}}, Workload: Workload{ISL: fixed(MaxTokens)}, Stop: Stop{Requests: 1}}
	if err := ok.Validate(); err != nil {
		t.Errorf("isl fixed:%d: %v; want valid (the bound itself)", MaxTokens, err)
	}
}

// TestConfigPacer: any Pacer given in Config.Pacer paces the open loop (here a
// constant 50 req/s: sends 20 ms apart in virtual time), and it cannot be combined
// with a rate.
func TestConfigPacer(t *testing.T) {
	out, fs := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Pacer: ConstantPacer{Freq: 50}}, Stop: Stop{Requests: 20}}, time.Millisecond)
	if len(out.Records) != 20 || out.Mode != (ConstantPacer{Freq: 50}).String() {
		t.Fatalf("%d records in mode %q; want 20 paced by %v", len(out.Records), out.Mode, ConstantPacer{Freq: 50})
	}
	sent := slices.Clone(fs.sent)
	slices.Sort(sent)
	for i := 1; i < len(sent); i++ {
		if d := sent[i] - sent[i-1]; d != 20*time.Millisecond {
			t.Fatalf("send %d came %v after the previous; want 20ms", i, d)
		}
	}
	bad := Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:1"}}, Load: Load{Pacer: ConstantPacer{Freq: 50}, Rate: 10}, Stop: Stop{Requests: 1}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("a pacer with a rate: Validate = %v; want a conflict", err)
	}
}
