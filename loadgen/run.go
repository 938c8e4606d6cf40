package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// Outcome is what a run produced.
type Outcome struct {
	// Records holds every finished request in completion order (warmup included,
	// flagged), unless Config.DiscardRecords.
	Records []record.Client
	// Metrics summarises the non-warmup records (see ComputeMetrics). When the
	// records went to Config.RecordFile and were discarded from RAM, per-request
	// percentiles come from sketches (within metric.SketchRelativeError; counts,
	// means, std, min and max exact), so memory does not grow with requests: the
	// exact values are in the file (ComputeMetrics over it, or scenario's pass).
	Metrics record.Metrics
	// Mode describes the load: the pacer ("Poisson{20 req/s}") or "Closed{8 workers}".
	Mode string
	// Start is the wall-clock start; Elapsed the run's length.
	Start   time.Time
	Elapsed time.Duration
	// Sent counts requests sent (warmup included); Inexact lists the indices of
	// requests whose synthetic prompt could not be made exactly the sampled length.
	Sent    int
	Inexact []int
	// Interrupted reports that the context was cancelled before the run finished.
	Interrupted bool
	// StartLate is how long after Config.StartAt the run could start (0 when it
	// waited for it, or had none): the shard's first requests went out that late.
	StartLate time.Duration
}

// errCancelFraction is the cause of requests cancelled by Config.CancelFraction.
var errCancelFraction = errors.New("loadgen: cancelled by cancel_fraction")

// sender performs one request; the real one is fasthttp, tests inject fakes.
type sender interface {
	send(ctx context.Context, c *call, rec *record.Client, res *result)
}

type httpSender struct {
	clock *runClock
	pool  sync.Pool // *worker
}

func (h *httpSender) send(ctx context.Context, c *call, rec *record.Client, res *result) {
	w, _ := h.pool.Get().(*worker)
	if w == nil {
		w = newWorker()
	}
	w.do(ctx, h.clock, c, rec, res)
	h.pool.Put(w)
}

// Run validates cfg (returning every problem, before anything is sent), builds the
// workload and drives it against cfg.URLs until a stop condition, then returns the
// records and their metrics. tok counts tokens (ISL, OSL) and builds synthetic
// prompts; nil loads the built-in "gpt2". sink, if not nil, is called with each
// record as its request finishes, from one goroutine at a time.
//
// When ctx is cancelled, requests in flight are cancelled (recorded with kind
// "cancelled"), and Run returns the Outcome of everything that finished, with
// Interrupted set, and ctx's error.
func Run(ctx context.Context, cfg Config, tok *tokenizer.Tokenizer, sink func(record.Client)) (*Outcome, error) {
	r, err := newRunner(ctx, cfg, tok, sink)
	if err != nil {
		return nil, err
	}
	return r.run(ctx)
}

type runner struct {
	cfg     Config
	tok     *tokenizer.Tokenizer
	sink    func(record.Client)
	src     dataset.Source
	convs   chan dataset.Conversation
	direct  *dataset.Slice // src when it is a slice: drawn under srcMu, no producer
	srcMu   sync.Mutex
	takeMu  sync.Mutex
	taken   int64
	targets []*target
	rr      atomic.Uint64
	bodies  *bodyBuilder
	clock   *runClock
	sender  sender
	pacer   Pacer // nil: closed loop
	spin    time.Duration
	memoMu  sync.RWMutex
	memo    map[string]int
	tmemo   map[string]templated // templateCount's results for short single-turn inputs, under memoMu
	apiKey  string
	headers [][2]string
	hdr     *headerBlock // headers rendered once
	scratch sync.Pool    // *scratch
	recs    sync.Pool    // *record.Client, returned by the collector
	// reuseChunks: records are neither kept nor given to a sink, so a recycled
	// record's Chunks array can be reused.
	reuseChunks bool

	issued   atomic.Int64 // requests claimed (warmup included)
	limit    int64        // total requests allowed; <= 0 = unlimited
	deadline time.Duration
	sem      chan struct{}
	prefill  chan struct{} // Config.PrefillConcurrency slots; nil = no cap

	cancelMu  sync.Mutex
	cancelRng *rand.Rand

	done      chan *record.Client
	collected chan struct{}
	out       Outcome
	acc       *metric.Accumulator
	enc       *record.Encoder
	file      *os.File
	wg        sync.WaitGroup
}

// newRunner checks cfg and builds the workload source; reading an input file stops
// when ctx is cancelled (Ctrl-C during the dataset build).
func newRunner(ctx context.Context, cfg Config, tok *tokenizer.Tokenizer, sink func(record.Client)) (*runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if tok == nil {
		var err error
		if tok, err = tokenizer.Load("gpt2"); err != nil {
			return nil, fmt.Errorf("loadgen: default tokenizer: %w", err)
		}
	}
	r := &runner{cfg: cfg, tok: tok, sink: sink, clock: &runClock{}, spin: DefaultSpin, memo: map[string]int{}, tmemo: map[string]templated{}}
	if cfg.CoarseTimer {
		r.spin = 0
	}
	var err error
	if r.src, err = newSource(ctx, &r.cfg, tok); err != nil {
		return nil, err
	}
	if r.bodies, err = newBodyBuilder(&r.cfg); err != nil {
		return nil, err
	}
	d := &dialer{timeout: cfg.ConnectTimeout}
	if d.timeout == 0 {
		d.timeout = DefaultConnectTime
	}
	for _, a := range cfg.SourceAddrs {
		d.local = append(d.local, &net.TCPAddr{IP: net.ParseIP(a)})
	}
	for _, u := range cfg.URLs {
		t, err := newTarget(endpointURL(u, r.cfg.endpoint()), d)
		if err != nil {
			return nil, err
		}
		t.kernelTS = !cfg.AppTimestamps
		r.targets = append(r.targets, t)
	}
	r.sender = &httpSender{clock: r.clock}
	r.apiKey = string(cfg.APIKey)
	if r.apiKey == "" && cfg.APIKeyEnv != "" {
		r.apiKey = os.Getenv(cfg.APIKeyEnv)
	}
	for k, v := range cfg.Headers {
		r.headers = append(r.headers, [2]string{k, v})
	}
	if r.cfg.endpoint() == EndpointMessages {
		// Anthropic's authentication and version headers instead of a bearer token.
		if r.apiKey != "" {
			r.headers = append(r.headers, [2]string{"X-Api-Key", r.apiKey})
		}
		if !hasHeader(cfg.Headers, "anthropic-version") {
			r.headers = append(r.headers, [2]string{"Anthropic-Version", AnthropicVersion})
		}
	} else if r.apiKey != "" {
		r.headers = append(r.headers, [2]string{"Authorization", "Bearer " + r.apiKey})
	}
	r.hdr = newHeaderBlock(r.headers)
	r.reuseChunks = cfg.DiscardRecords && sink == nil
	r.pacer, err = r.makePacer()
	if err != nil {
		return nil, err
	}
	r.shard()
	if cfg.Requests > 0 {
		r.limit = int64(cfg.Requests + cfg.WarmupRequests)
	}
	if cfg.Duration > 0 {
		r.deadline = cfg.WarmupDuration + cfg.Duration
	}
	if r.pacer != nil && cfg.Concurrency > 0 {
		r.sem = make(chan struct{}, cfg.Concurrency)
	}
	if cfg.PrefillConcurrency > 0 {
		r.prefill = make(chan struct{}, cfg.PrefillConcurrency)
	}
	r.cancelRng = rand.New(rand.NewPCG(cfg.Seed, 0xca9ce1))
	r.acc = newAccumulator(MetricsOptions{UsageOSL: cfg.UsageOSL, UsageISL: cfg.UsageISL, SLO: cfg.SLO})
	if cfg.DiscardRecords && cfg.RecordFile != "" {
		// The exact values are in the file; keep RAM flat however long the run.
		r.acc.Approximate()
	}
	return r, nil
}

// makePacer returns the open-loop pacer, or nil for closed loop.
func (r *runner) makePacer() (Pacer, error) {
	cfg := &r.cfg
	if cfg.Schedule {
		sl, ok := r.src.(dataset.Offsets)
		if !ok {
			return nil, errors.New("loadgen: schedule needs a finite input")
		}
		return TracePacer{Offsets: sl.Offsets(), Speedup: cfg.Speedup}, nil
	}
	if cfg.Pacer != nil {
		return cfg.Pacer, nil
	}
	if cfg.Rate <= 0 {
		return nil, nil
	}
	if cfg.Ramp > 0 {
		return RampPacer{From: cfg.RampFrom, To: cfg.Rate, Over: cfg.Ramp}, nil
	}
	src := rand.NewPCG(cfg.Seed, 0xa441)
	switch cfg.Arrival {
	case ArrivalConstant:
		return ConstantPacer{Freq: cfg.Rate}, nil
	case ArrivalGamma:
		return &GammaPacer{Freq: cfg.Rate, Burstiness: cfg.Burstiness, Src: src}, nil
	}
	return &PoissonPacer{Freq: cfg.Rate, Src: src}, nil
}

// claim reserves the next request index, or returns -1 when the run must stop.
func (r *runner) claim(ctx context.Context) int {
	if ctx.Err() != nil {
		return -1
	}
	if r.deadline > 0 && r.clock.now() >= r.deadline {
		return -1
	}
	i := r.cfg.globalIndex(r.issued.Add(1) - 1)
	if r.limit > 0 && i >= r.limit {
		return -1
	}
	return int(i)
}

// next returns the next conversation: from a slice directly (cheap), else from the
// producer goroutine (see produce).
// take claims the next request index and the conversation it starts; ok is false when
// the run is over (count reached, context ended or the workload ran out).
func (r *runner) take(ctx context.Context) (idx int, conv dataset.Conversation, ok bool) {
	// Index and conversation are paired under one lock, so request g always carries
	// the source's g-th conversation (a shard's parity with one process relies on it).
	r.takeMu.Lock()
	defer r.takeMu.Unlock()
	if idx = r.claim(ctx); idx < 0 {
		return -1, conv, false
	}
	conv, ok = r.next()
	return idx, conv, ok
}

func (r *runner) next() (dataset.Conversation, bool) {
	if r.direct != nil {
		r.srcMu.Lock()
		defer r.srcMu.Unlock()
		if r.limit > 0 && r.taken >= r.limit {
			return dataset.Conversation{}, false
		}
		r.taken++
		return r.direct.Next()
	}
	c, ok := <-r.convs
	return c, ok
}

// produce draws conversations from the source in order into r.convs, ahead of the
// senders, so building prompts (tokenizer work) is off the send path and senders do
// not contend on the source. It stops at the source's end, after the request limit,
// or when stop closes.
func (r *runner) produce(stop <-chan struct{}) {
	defer close(r.convs)
	for n := int64(0); r.limit <= 0 || n < r.limit; n++ {
		c, ok := r.src.Next()
		if !ok {
			return
		}
		select {
		case r.convs <- c:
		case <-stop:
			return
		}
	}
}

func (r *runner) run(ctx context.Context) (*Outcome, error) {
	if r.cfg.RecordFile != "" {
		f, err := os.Create(r.cfg.RecordFile)
		if err != nil {
			return nil, fmt.Errorf("loadgen: record file: %w", err)
		}
		r.file, r.enc = f, record.NewEncoder(f)
	}
	r.done, r.collected = make(chan *record.Client, 4096), make(chan struct{})
	go r.collect()
	if sl, ok := r.src.(*dataset.Slice); ok {
		r.direct = sl // cheap to draw: no producer goroutine to wake per request
	} else {
		r.convs = make(chan dataset.Conversation, 256)
		stop := make(chan struct{})
		defer close(stop)
		go r.produce(stop)
	}
	for _, t := range r.targets {
		t.runCtx = ctx
	}
	if err := r.startClock(ctx); err != nil {
		close(r.done)
		<-r.collected
		if r.file != nil {
			r.file.Close()
		}
		out := r.out
		out.Interrupted = true
		return &out, err
	}
	r.out.Start = r.clock.start
	// Requests run under sendCtx: the run's context, and with a duration, the end of
	// the grace period after it, which cancels whatever is still in flight then.
	sendCtx := ctx
	if r.deadline > 0 {
		c, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		grace := time.AfterFunc(r.deadline+r.cfg.gracePeriod(), func() { cancel(errGraceOver) })
		defer grace.Stop()
		sendCtx = c
	}
	if r.pacer != nil {
		r.out.Mode = r.pacer.String()
		if r.sem != nil {
			r.out.Mode += fmt.Sprintf(" ≤%d in flight", cap(r.sem))
		}
		r.openLoop(sendCtx)
	} else {
		n := max(r.cfg.Concurrency, DefaultConcurrency)
		if r.limit > 0 && int64(n) > r.limit {
			n = int(r.limit) // more workers than requests would only wait
		}
		r.out.Mode = fmt.Sprintf("Closed{%d workers}", n)
		if r.cfg.shards() > 1 {
			r.out.Mode = fmt.Sprintf("Closed{%d of %d workers, shard %d/%d}", ShardWorkers(n, r.cfg.shards(), r.cfg.ShardIndex), n, r.cfg.ShardIndex, r.cfg.shards())
		}
		r.closedLoop(sendCtx, n)
	}
	r.wg.Wait()
	close(r.done)
	<-r.collected
	for _, t := range r.targets {
		t.closeIdle()
	}
	r.out.Elapsed = r.clock.now()
	r.out.Metrics = r.acc.Metrics()
	var ferr error
	if r.enc != nil {
		ferr = r.enc.Flush()
		if err := r.file.Close(); ferr == nil && err != nil {
			ferr = fmt.Errorf("loadgen: record file: %w", err)
		}
	}
	out := r.out
	if ctx.Err() != nil {
		out.Interrupted = true
		return &out, errors.Join(ctx.Err(), ferr)
	}
	return &out, ferr
}

// errGraceOver is the cause of the cancellation of requests still in flight when the
// grace period after the benchmark duration ends.
var errGraceOver = errors.New("the grace period after the benchmark duration ended")

// DefaultSpin is how long before a request's due time the open-loop sender stops
// using Go timers (which on Linux wake up to ~1 ms late, bunching Poisson arrivals at
// high rates) and sleeps in one nanosleep system call until busyWait before it, then
// waits out the rest yielding the processor (see sleepUntil).
const DefaultSpin = 1500 * time.Microsecond

// busyWait is the last stretch before a due time that the pacer waits by yielding
// (runtime.Gosched) in a loop instead of sleeping. nanosleep wakes late by an amount
// that varies with the sleep's length (measured on the 2-core dev machine: median
// 45 µs late for 200 µs, 119 µs for 1.4 ms), so a pacer that sleeps to the due time
// is late by an amount that depends on the gap it slept through: gaps are distorted
// and a Poisson stream's inter-arrival times fail a KS test (D ≈ 0.05–0.06 at
// 1,000 req/s, n = 2,000, against a critical 0.036 at alpha 0.01). Waking busyWait
// early and yielding until due makes the lag ~10 µs and independent of the gap. The
// cost is at most busyWait of CPU per request (~20% of a core at 1,000 req/s), given
// to any runnable goroutine first.
const busyWait = 300 * time.Microsecond

// sleepUntil waits until the run clock reaches due: a timer sleep until r.spin before
// it, a precise sleep until busyWait before it, then a yielding wait. It reports
// false if ctx ended first.
func (r *runner) sleepUntil(ctx context.Context, due time.Duration) bool {
	for {
		d := due - r.clock.now()
		if d <= 0 {
			return ctx.Err() == nil
		}
		if d > r.spin {
			if !sleep(ctx, d-r.spin) {
				return false
			}
			continue
		}
		if d > busyWait {
			preciseSleep(d - busyWait)
		}
		for r.clock.now() < due {
			runtime.Gosched()
		}
		return ctx.Err() == nil
	}
}

// sleep waits d or until ctx is done; it reports whether the full wait elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (r *runner) openLoop(ctx context.Context) {
	for sent := uint64(0); ; sent++ {
		// Pace is pure, so Pace(0, sent) is request sent's due time on the schedule
		// (0 for an unlimited pacer): queueing behind the concurrency ceiling then
		// shows as Sent − Scheduled instead of silently shifting the schedule.
		due, _ := r.pacer.Pace(0, sent)
		for {
			now := r.clock.now()
			wait, stop := r.pacer.Pace(now, sent)
			if stop {
				return
			}
			if wait <= 0 {
				if due == 0 {
					due = now
				}
				break
			}
			if r.deadline > 0 && now+wait >= r.deadline {
				return
			}
			if !r.sleepUntil(ctx, now+wait) {
				return
			}
		}
		idx, conv, ok := r.take(ctx)
		if !ok {
			return
		}
		if r.sem != nil {
			select {
			case r.sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.conversation(ctx, conv, idx, due, r.sem != nil)
		}()
		// Let the new goroutine run now. Otherwise it may wait in this processor's run
		// queue while the pacer holds the processor in the nanosleep system call until
		// the next due time (the runtime takes a processor back from a blocking call
		// only after 20 µs–10 ms), and go out together with the next request: late
		// sends bunched against on-time ones, an excess of short server-side gaps.
		runtime.Gosched()
	}
}

func (r *runner) closedLoop(ctx context.Context, n int) {
	local, global := r.workers(n)
	for i := range local {
		if ctx.Err() != nil {
			return // interrupted while starting workers
		}
		var start time.Duration
		if r.cfg.Ramp > 0 && n > 1 {
			start = time.Duration(int64(r.cfg.Ramp) * int64(global(i)) / int64(n))
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if !sleep(ctx, start-r.clock.now()) {
				return
			}
			for {
				idx, conv, ok := r.take(ctx)
				if !ok {
					return
				}
				if !r.conversation(ctx, conv, idx, 0, false) {
					return
				}
			}
		}()
	}
}

// conversation sends conv's turns in order; the first turn already holds index idx
// (and a semaphore slot when held is true). It reports whether the run may go on.
func (r *runner) conversation(ctx context.Context, conv dataset.Conversation, idx int, due time.Duration, held bool) bool {
	tc := turnCtx{system: r.cfg.SystemPrompt}
	for ti := range conv.Turns {
		t := &conv.Turns[ti]
		if ti > 0 {
			if !sleep(ctx, t.Delay) {
				return false
			}
			if idx = r.claim(ctx); idx < 0 {
				return false
			}
			due = r.clock.now()
			if r.sem != nil {
				select {
				case r.sem <- struct{}{}:
				case <-ctx.Done():
					return false
				}
				held = true
			}
		}
		last := ti == len(conv.Turns)-1
		text := r.request(ctx, &turnReq{convID: conv.ID, nTurns: len(conv.Turns), turn: ti, idx: idx, due: due, t: t, tc: &tc, wantText: !last})
		if held {
			<-r.sem
			held = false
		}
		if !last {
			tc.history = append(tc.history, message{Role: "user", Content: t.Prompt}, message{Role: "assistant", Content: text})
		}
	}
	return ctx.Err() == nil
}

// scratch is one request's reusable working state.
type scratch struct {
	call call
	res  result
	key  []byte // memo key
	// The last memo entries this scratch saw: payloads and mock responses repeat,
	// and a hit here needs no lock (the shared memos' read locks are atomic writes
	// to one cache line that every processor contends for).
	lastKey   []byte
	lastTmpl  templated
	lastText  []byte
	lastCount int
	lastOK    [2]bool // lastKey, lastText valid
}

// turnReq is one turn of a conversation to send: turn of nTurns, request index idx,
// scheduled at due; its text is returned when wantText (a later turn carries it in its
// history).
type turnReq struct {
	convID    string
	nTurns    int
	turn, idx int
	due       time.Duration
	t         *dataset.Turn
	tc        *turnCtx
	wantText  bool
	endpoint  Endpoint
	stream    bool
}

// request sends one turn and records it; it returns the generated text when
// q.wantText is true.
func (r *runner) request(ctx context.Context, q *turnReq) string {
	q.endpoint, q.stream = r.shape(q.t)
	tg := r.pick()
	if r.cfg.Routing == RouteLeastOutstanding && len(r.targets) > 1 {
		tg.pending.Add(1) // only this routing reads it: spare the shared counter
		defer tg.pending.Add(-1)
	}
	rec := r.newRecord(q, tg)
	sc, _ := r.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	defer r.scratch.Put(sc)
	c := &sc.call
	*c = call{
		target: tg, body: r.bodies.build(q.endpoint, q.t, q.tc, q.stream), requestID: rec.RequestID, stream: q.stream,
		endpoint: q.endpoint, hdr: r.hdr, timeout: r.cfg.timeout(), idle: r.cfg.idleTimeout(),
	}
	rctx, stop := r.maybeCancel(ctx)
	defer stop()
	res := &sc.res
	res.text, res.ends, res.reasoning, res.content = res.text[:0], res.ends[:0], res.reasoning[:0], res.content[:0]
	if r.prefill == nil {
		r.sender.send(rctx, c, rec, res)
	} else {
		r.sendPrefill(rctx, c, rec, res)
	}
	// Counted after the send, so rendering never delays a request; tc and t are
	// unchanged until this function returns, so these are the messages sent.
	r.templateCount(q.endpoint, q.t, q.tc, rec, sc)
	r.count(rec, res, sc)
	checkEmptyOutput(rec, res, q)
	c.body = nil
	r.done <- rec
	if q.wantText {
		return string(res.text)
	}
	return ""
}

// shape is the endpoint turn t goes to and whether it streams.
func (r *runner) shape(t *dataset.Turn) (Endpoint, bool) {
	e := r.cfg.endpoint()
	if t.Endpoint != "" {
		e = Endpoint(t.Endpoint)
	}
	stream := r.cfg.Stream
	if t.Stream != nil {
		stream = *t.Stream
	}
	return e, stream && e.generates()
}

// newRecord starts q's record (from the pool) with what is known before the send.
func (r *runner) newRecord(q *turnReq, tg *target) *record.Client {
	cfg, t := &r.cfg, q.t
	rec, _ := r.recs.Get().(*record.Client)
	if rec == nil {
		rec = &record.Client{}
	}
	*rec = record.Client{
		Index: q.idx, RequestID: "req-" + strconv.Itoa(q.idx), Turn: q.turn, URL: tg.url, Endpoint: string(q.endpoint),
		Model: cfg.Model, Stream: q.stream, RunStartUnixNano: r.clock.start.UnixNano(), Scheduled: q.due,
		ISL: t.ISL, RequestedISL: t.RequestedISL, ISLExact: t.Exact, RequestedOSL: t.OSL,
		Chunks: rec.Chunks[:0],
	}
	if q.nTurns > 1 {
		rec.Conversation = q.convID
	}
	if t.Model != "" {
		rec.Model = t.Model
	}
	if rec.Model == "" {
		rec.Model = DefaultModel
	}
	if t.Body != nil {
		rec.ISLExact = true
	}
	if len(q.tc.history) > 0 {
		n := t.ISL
		for _, m := range q.tc.history {
			n += r.tok.Count(m.Content, false)
		}
		rec.ISL = n
	}
	due := q.due
	if due == 0 && r.pacer == nil {
		due = r.clock.now() // closed loop: no schedule, no client queueing
		rec.Scheduled = due
	}
	rec.Warmup = (cfg.WarmupRequests > 0 && q.idx < cfg.WarmupRequests) || (cfg.WarmupDuration > 0 && due < cfg.WarmupDuration)
	return rec
}

// maybeCancel returns the context to send under: ctx, or, for the Config.CancelFraction
// of requests drawn, one cancelled after Config.CancelAfter.
func (r *runner) maybeCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	cfg := &r.cfg
	if cfg.CancelFraction <= 0 {
		return ctx, func() {}
	}
	r.cancelMu.Lock()
	cancel := r.cancelRng.Float64() < cfg.CancelFraction
	r.cancelMu.Unlock()
	if !cancel {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, cfg.CancelAfter, errCancelFraction)
}

// checkEmptyOutput fails a 200 stream that carried no output token: it has no TTFT,
// ITL or OSL to measure; the server failed the request without saying so.
func checkEmptyOutput(rec *record.Client, res *result, q *turnReq) {
	if rec.OK() && q.stream && q.endpoint.generates() && len(res.text) == 0 {
		rec.ErrorKind, rec.Error = record.ErrEmptyOutput, "loadgen: the stream carried no output"
		if rec.RequestedOSL > 0 {
			rec.Error += fmt.Sprintf(" (%d tokens asked for)", rec.RequestedOSL)
		}
	}
}

// sendPrefill sends c holding a prefill slot (Config.PrefillConcurrency) from
// before the send until its first output chunk, or until it ends without one.
func (r *runner) sendPrefill(ctx context.Context, c *call, rec *record.Client, res *result) {
	select {
	case r.prefill <- struct{}{}:
	case <-ctx.Done():
		rec.Sent = r.clock.now()
		rec.Done = rec.Sent
		rec.ErrorKind, rec.Error = record.ErrCancelled, "loadgen: cancelled waiting for a prefill slot"
		return
	}
	held := true
	release := func() {
		if held {
			held = false
			<-r.prefill
		}
	}
	c.firstOutput = release
	r.sender.send(ctx, c, rec, res)
	c.firstOutput = nil
	release()
}

// templated is what templateCount found for one input.
type templated struct {
	isl, tmpl int // contents (payloads only) and rendered counts
	mode      string
}

// templateCount fills rec.ISLTemplate and rec.TokenizationMode for a request whose
// input is a list of messages (chat, or Responses with a system prompt or history):
// the messages as sent, rendered with the tokenizer's chat template (the ChatML
// fallback without one) and the generation prompt unless the body turns it off
// (add_generation_prompt, a vLLM extension), and encoded without special tokens, as
// the mock server and vLLM count a chat prompt. A chat payload sent as it is (an
// input file) is parsed for its messages, and its ISL becomes their contents' count.
// A render error or an unreadable payload leaves both unset. Results for short
// single-turn inputs are memoised: payload files and small prompts repeat, and at
// tens of thousands of requests per second the render is a visible CPU cost.
func (r *runner) templateCount(e Endpoint, t *dataset.Turn, tc *turnCtx, rec *record.Client, sc *scratch) {
	addGen := true
	if v, ok := r.cfg.ExtraBody["add_generation_prompt"].(bool); ok && e == EndpointChat && t.Body == nil {
		addGen = v
	}
	key := sc.key[:0]
	switch {
	case t.Body != nil && e == EndpointChat:
		key = append(append(key, 'b'), t.Body...)
	case t.Body != nil && e == EndpointMessages:
		return // a payload's top-level system prompt is not parsed
	case e.chatLike() && len(tc.history) == 0:
		key = fmt.Appendf(key, "p%t%d:%s%s", addGen, len(tc.system), tc.system, t.Prompt)
	case e.chatLike(), e == EndpointResponses && (len(tc.history) > 0 || tc.system != ""):
	default:
		return
	}
	if len(key) <= 1024 {
		sc.key = key
	} else {
		key = nil
	}
	if len(key) > 0 {
		if sc.lastOK[0] && bytes.Equal(sc.lastKey, key) {
			r.setTemplated(rec, sc.lastTmpl)
			return
		}
		r.memoMu.RLock()
		v, ok := r.tmemo[string(key)] // no copy: the conversion only indexes
		r.memoMu.RUnlock()
		if ok {
			sc.lastKey, sc.lastTmpl, sc.lastOK[0] = append(sc.lastKey[:0], key...), v, true
			r.setTemplated(rec, v)
			return
		}
	}
	v, ok := r.render(t, tc, addGen)
	if !ok {
		return
	}
	if len(key) > 0 {
		r.memoMu.Lock()
		if len(r.tmemo) < 8192 {
			r.tmemo[string(key)] = v
		}
		r.memoMu.Unlock()
		sc.lastKey, sc.lastTmpl, sc.lastOK[0] = append(sc.lastKey[:0], key...), v, true
	}
	r.setTemplated(rec, v)
}

func (r *runner) setTemplated(rec *record.Client, v templated) {
	rec.ISLTemplate, rec.TokenizationMode = v.tmpl, v.mode
	if rec.ISL == 0 {
		rec.ISL = v.isl
	}
}

// render counts t's messages (its payload's, or the system prompt, history and
// prompt) rendered as templateCount describes; ok is false if it could not.
func (r *runner) render(t *dataset.Turn, tc *turnCtx, addGen bool) (v templated, ok bool) {
	var msgs []tokenizer.Message
	if t.Body != nil {
		var req openai.ChatRequest
		if json.Unmarshal(t.Body, &req) != nil || req.PromptTokenIDs != nil || len(req.Messages) == 0 {
			return v, false
		}
		for _, m := range req.Messages {
			msgs = append(msgs, tokenizer.Message{Role: m.Role, Content: m.Content.Text})
			v.isl += r.tok.Count(m.Content.Text, false)
		}
		if req.AddGenerationPrompt != nil {
			addGen = *req.AddGenerationPrompt
		}
	} else {
		msgs = make([]tokenizer.Message, 0, len(tc.history)+2)
		if tc.system != "" {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: tc.system})
		}
		for _, m := range tc.history {
			msgs = append(msgs, tokenizer.Message{Role: m.Role, Content: m.Content})
		}
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: t.Prompt})
	}
	n, fallback, err := r.tok.CountChatInput(msgs, tokenizer.ChatOptions{AddGenerationPrompt: addGen})
	if err != nil {
		return v, false
	}
	v.tmpl, v.mode = n, record.ModeChatTemplate
	if fallback {
		v.mode = record.ModeChatTemplateFallback
	}
	return v, true
}

// pick chooses a target by the routing policy.
func (r *runner) pick() *target {
	if len(r.targets) == 1 {
		return r.targets[0]
	}
	if r.cfg.Routing == RouteLeastOutstanding {
		best := r.targets[0]
		for _, t := range r.targets[1:] {
			if t.pending.Load() < best.pending.Load() {
				best = t
			}
		}
		return best
	}
	return r.targets[(r.rr.Add(1)-1)%uint64(len(r.targets))]
}

// countText is tok.Count(text, false), memoised for short texts: responses of mock
// servers repeat, and counting is the largest CPU cost per request after I/O.
func (r *runner) countText(b []byte, sc *scratch) int {
	if len(b) > 512 {
		return r.tok.Count(string(b), false)
	}
	if sc.lastOK[1] && bytes.Equal(sc.lastText, b) {
		return sc.lastCount
	}
	r.memoMu.RLock()
	n, ok := r.memo[string(b)]
	r.memoMu.RUnlock()
	if !ok {
		s := string(b)
		n = r.tok.Count(s, false)
		r.memoMu.Lock()
		if len(r.memo) < 8192 {
			r.memo[s] = n
		}
		r.memoMu.Unlock()
	}
	sc.lastText, sc.lastCount, sc.lastOK[1] = append(sc.lastText[:0], b...), n, true
	return n
}

// count fills token counts from the received text: per chunk, and OSL over all text.
func (r *runner) count(rec *record.Client, res *result, sc *scratch) {
	if len(rec.Chunks) == 1 && len(res.ends) == 1 && len(res.reasoning) == 0 {
		if len(res.text) > 0 {
			rec.OSL = r.countText(res.text, sc)
		}
		rec.Chunks[0].Tokens = rec.OSL
		return
	}
	prev := 0
	for i := range rec.Chunks {
		if i >= len(res.ends) {
			break
		}
		end := res.ends[i]
		if end > prev {
			n := r.countText(res.text[prev:end], sc)
			rec.Chunks[i].Tokens = n
		}
		prev = end
	}
	switch {
	case len(res.reasoning) > 0:
		// AIPerf's OSL: output_token_count + reasoning_token_count, each text counted
		// on its own.
		rec.ReasoningTokens = r.countText(res.reasoning, sc)
		rec.OSL = rec.ReasoningTokens
		if len(res.content) > 0 {
			rec.OSL += r.countText(res.content, sc)
		}
	case len(res.text) > 0:
		rec.OSL = r.countText(res.text, sc)
	}
}

// collect is the single goroutine that writes, sinks and summarises records, in
// completion order: senders never contend on a lock for it.
func (r *runner) collect() {
	defer close(r.collected)
	// Push buffered records out at least once a second, whether or not requests are
	// finishing, so a long run's file can be followed and a killed process loses at
	// most the last second. Run flushes the rest when it returns.
	var tick <-chan time.Time
	if r.enc != nil {
		t := time.NewTicker(RecordFlushInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		var rec *record.Client
		select {
		case <-tick:
			_ = r.enc.Flush()
			continue
		case c, ok := <-r.done:
			if !ok {
				return
			}
			rec = c
		}
		if r.enc != nil {
			_ = r.enc.Encode(rec)
		}
		r.out.Sent++
		if !rec.ISLExact && rec.RequestedISL > 0 {
			r.out.Inexact = append(r.out.Inexact, rec.Index)
		}
		if r.sink != nil {
			r.sink(*rec)
		}
		r.acc.Add(rec)
		if !r.cfg.DiscardRecords {
			r.out.Records = append(r.out.Records, *rec)
		}
		// Recycle the record; its Chunks array only when nobody else holds it.
		var chunks []record.Chunk
		if r.reuseChunks {
			chunks = rec.Chunks[:0]
		}
		*rec = record.Client{Chunks: chunks}
		r.recs.Put(rec)
	}
}
