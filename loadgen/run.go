package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

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
	// With Config.TotalsOnly it holds the run-level metrics and error counts only.
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
	// Fingerprint is the dataset fingerprint: the hex SHA-256 over the SHA-256 of each
	// request body sent, in request index order (a Config.PromptSalt replaced by a fixed
	// placeholder): equal for equal seeded workloads. Fingerprinted is the number of
	// bodies it covers, warm-up included.
	Fingerprint   string
	Fingerprinted int
	// Self is the load generator's measurement of itself: send lag, CPU, GC pauses and
	// the socket read delay (see [Self]).
	Self Self
	// Warnings are the problems the run met that lost no record, one line each: a
	// usage field of the wrong type, ignored for its requests.
	Warnings []string
	// PrefixCache is the run's ideal prefix-cache hit rate (also in Metrics as
	// prefix_cache_ideal_hit_rate), counted when its prompts share prefixes by design, it
	// has several turns a conversation, it replays an agent trace, or Prefixes.KVCacheBlocks is set; nil otherwise,
	// or when a prompt's token ids could not be rendered.
	PrefixCache *PrefixCacheIdeal
	// StartLate is how long after Config.StartAt the run could start (0 when it
	// waited for it, or had none): the shard's first requests went out that late.
	StartLate time.Duration
	// Jobs are the run's agent jobs (an agent trace's; docs/agents.md), whose
	// run statistics are in Metrics (job_latency_p50, jobs_per_hour, …), with the
	// per-job samples and TTFT by turn index; nil when the run had none.
	Jobs *metric.JobTotals
}

// badField names a request whose answer had a field of the wrong type, and the field
// when the warning names it.
type badField struct{ id, field string }

// badAnswers counts the answers that carried a field of the wrong type, ignored for
// them (Outcome.Warnings). Safe for concurrent use.
type badAnswers struct {
	// cached is the first request whose usage carried a cached_tokens of the wrong
	// type, nCached how many did.
	cached  atomic.Pointer[badField]
	nCached atomic.Int64
	// server is the first request whose server data (vLLM's metrics, llama.cpp's
	// timings, SGLang's meta_info) had a field of the wrong type, nServer how many did.
	server  atomic.Pointer[badField]
	nServer atomic.Int64
}

// add counts request id's answer res.
func (b *badAnswers) add(id string, res *result) {
	if res.badCached {
		b.cached.CompareAndSwap(nil, &badField{id: id})
		b.nCached.Add(1)
	}
	if res.badServer != "" {
		b.server.CompareAndSwap(nil, &badField{id: id, field: res.badServer})
		b.nServer.Add(1)
	}
}

// warnings appends a line to ws for each kind of field that was wrong.
func (b *badAnswers) warnings(ws []string) []string {
	if f := b.cached.Load(); f != nil {
		ws = append(ws, fmt.Sprintf("loadgen: %d answer(s) carried usage.prompt_tokens_details.cached_tokens that is not a whole number >= 0 (first: %s); it was ignored for them, so their prefix-cache hits are unknown", b.nCached.Load(), f.id))
	}
	if f := b.server.Load(); f != nil {
		ws = append(ws, fmt.Sprintf("loadgen: %d answer(s) carried server timings with a field of the wrong type (first: %s in %s); the field was ignored for them, their other fields and records kept", b.nServer.Load(), f.field, f.id))
	}
	return ws
}

// errCancelFraction is the cause of requests cancelled by Config.CancelFraction.
var errCancelFraction = errors.New("loadgen: cancelled by cancel_fraction")

// sender performs one request; the real one is fasthttp, tests inject fakes.
type sender interface {
	send(ctx context.Context, c *call, rec *record.Client, res *result)
}

// A driver is one transport: it sends a run's requests from the run's start until the
// run ends (the workload runs out, the pacer stops, ctx ends) and returns once every
// request it sent has finished. The runner chooses one by configuration (see
// runner.driver): the open loop (schedule.go, ahead.go), user-centric timing's users
// (usercentric.go), the closed loop's goroutine workers (workers.go), the reference,
// or its event loops (evloop*.go).
type driver interface {
	drive(ctx context.Context)
}

// sendPath is what a transport asks of the run for each conversation it draws: the
// runner's send path, which every transport shares.
type sendPath interface {
	// conversation sends conv's turns in order (see runner.conversation).
	conversation(ctx context.Context, conv dataset.Conversation, idx int, due time.Duration, held bool, g *sendGate) bool
	// conversationAs is conversation with a session's options.
	conversationAs(ctx context.Context, conv dataset.Conversation, idx int, due time.Duration, held bool, g *sendGate, o sessionOpts) bool
}

var _ loopPath = (*runner)(nil)

type httpSender struct {
	clock *runClock
}

// send performs c with its conversation's worker (c.w, see scratch).
func (h *httpSender) send(ctx context.Context, c *call, rec *record.Client, res *result) {
	c.w.do(ctx, h.clock, c, rec, res)
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
	p, err := Prepare(ctx, cfg, tok, sink)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx)
}

// runner is one run: its configuration, its pacing (pacer, clock, the concurrency
// ceiling sem), its workload (wl), the send path every transport shares (runsend.go)
// and the collection of its records (collector). It chooses the transport that drives
// the run (driver) and holds none of a transport's state.
type runner struct {
	cfg     Config
	tok     *tokenizer.Tokenizer
	sink    func(record.Client)
	wl      *workload
	targets []*target
	rr      atomic.Uint64
	bodies  *bodyBuilder
	clock   *runClock
	fp      *fingerprinter
	sender  sender
	pacer   Pacer         // nil: closed loop
	spin    time.Duration // the open loop's send loop's (see openLoop.sleepUntil)
	counts  *counter
	salt    salter
	apiKey  string
	headers [][2]string
	hdr     *headerBlock // headers rendered once
	api     adapter      // the run's API kind (a turn may name another)
	models  *modelPicker // the model mix; nil = one model
	scratch sync.Pool    // *scratch
	recs    sync.Pool    // *record.Client, returned by the collector

	// primed are the priming phase's records (Prefixes.PrimePrefixes), collected
	// before the run's own; idPrefix, when set, replaces "req-" in request ids.
	primed   []record.Client
	idPrefix string
	// classPrefix is "CLASS-" in a traffic class's run (Recording.Class), "" otherwise:
	// it starts the run's request, job and session ids, so that several classes' runs
	// feeding one recording keep them unique.
	classPrefix string
	// ideal counts the run's ideal prefix-cache hit rate (nil: not counted); a
	// priming runner shares its run's, and priming marks it one.
	ideal   *idealFeed
	priming bool
	bad     badAnswers // Outcome.Warnings

	evServed atomic.Int64 // requests the event loops sent and finished themselves (see eventLoops)
	sem      chan struct{}
	prefill  chan struct{} // Config.PrefillConcurrency slots; nil = no cap

	aborted  stopCause    // why the schedule or the abort watch stopped the run
	inFlight atomic.Int64 // requests sent (or being sent) and not yet finished (InFlightWatch)

	cancelMu  sync.Mutex
	cancelRng *rand.Rand

	done      chan *record.Client
	collected chan struct{}
	out       Outcome
	acc       *metric.Accumulator
	enc       *record.Encoder
	file      *os.File
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
	r := &runner{cfg: cfg, tok: tok, sink: sink, clock: &runClock{self: &selfMeter{}}, spin: DefaultSpin}
	if cfg.CoarseTimer {
		r.spin = 0
	}
	r.counts = newCounter(tok, cfg.ExtraBody)
	r.salt = salter{salt: cfg.PromptSalt, shared: r.cfg.sharesPrefixes(), tok: tok}
	r.wl = &workload{cfg: &r.cfg, clock: r.clock}
	r.fp = newFingerprinter(cfg.PromptSalt, cfg.ShardIndex, cfg.shards())
	r.ideal = newIdealFeed(&r.cfg, tok)
	var err error
	if r.wl.src, err = newSource(ctx, &r.cfg, tok); err != nil {
		return nil, err
	}
	if r.bodies, err = newBodyBuilder(&r.cfg); err != nil {
		return nil, err
	}
	if r.bodies.media, err = newMediaDrawer(&r.cfg, tok.Name(), tok.Source()); err != nil {
		return nil, err
	}
	d := &dialer{timeout: cfg.ConnectTimeout}
	if d.timeout == 0 {
		d.timeout = DefaultConnectTime
	}
	if d.tls, err = cfg.tlsConfig(); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
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
	r.api = adapterOf(r.cfg.endpoint())
	r.models = newModelPicker(&r.cfg.Target, cfg.Seed)
	r.headers = r.api.auth(r.headers, r.apiKey, cfg.Headers)
	r.hdr = newHeaderBlock(r.headers)
	r.hdr.session = cfg.SessionHeader
	if cfg.Class != "" {
		r.classPrefix = cfg.Class + "-"
		r.idPrefix = r.classPrefix + "req-"
	}
	r.pacer, err = newPacer(&r.cfg, r.wl.src)
	if err != nil {
		return nil, err
	}
	r.wl.src, r.pacer = r.cfg.narrow(r.wl.src, r.pacer)
	if cfg.Requests > 0 {
		r.wl.limit = int64(cfg.Requests + cfg.WarmupRequests)
	}
	if cfg.Duration > 0 {
		r.wl.deadline = cfg.WarmupDuration + cfg.Duration
	} else if len(cfg.RateSeries) > 0 && cfg.Requests == 0 && cfg.InputFile == "" {
		r.wl.deadline = cfg.RateSeries.End() // the series' end is the run's
	}
	if r.pacer != nil && cfg.Concurrency > 0 {
		r.sem = make(chan struct{}, cfg.Concurrency)
	}
	if cfg.PrefillConcurrency > 0 {
		r.prefill = make(chan struct{}, cfg.PrefillConcurrency)
	}
	r.cancelRng = rand.New(rand.NewPCG(cfg.Seed, 0xca9ce1))
	r.acc = runAccumulator(&cfg)
	return r, nil
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
	col := &collector{
		in: r.done, collected: r.collected, enc: r.enc, sink: r.sink, acc: r.acc, watch: r.cfg.Watch, clock: r.clock,
		out: &r.out, discard: r.cfg.DiscardRecords, reuseChunks: r.cfg.DiscardRecords && r.sink == nil, recs: &r.recs,
	}
	go col.collect()
	for i := range r.primed {
		r.done <- &r.primed[i] // the priming phase's records first (Prefixes.PrimePrefixes)
	}
	defer r.wl.start()()
	d := r.driver()
	open, _ := d.(*openLoop) // nil: a closed loop or users, which start with the clock
	var head time.Duration
	if open != nil {
		open.prewarm(ctx) // its first connections, before its clock starts
		head = open.headStart()
	}
	if err := r.startClock(ctx, head); err != nil {
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
	r.clock.self.begin()
	// Requests run under sendCtx: the run's context, and with a duration, the end of
	// the grace period after it, which cancels whatever is still in flight then.
	// An open loop the schedule watch stops ends the same way (see watchSchedule), and
	// so does a run the abort watch stops (see watchAbort).
	sendCtx := ctx
	var abort context.CancelCauseFunc
	if r.wl.deadline > 0 || (open != nil && open.watchesSchedule()) || r.cfg.Watch != nil {
		c, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		if r.wl.deadline > 0 {
			grace := time.AfterFunc(r.wl.deadline+r.cfg.gracePeriod()-r.clock.now(), func() { cancel(errGraceOver) })
			defer grace.Stop()
		}
		sendCtx, abort = c, cancel
	}
	stopWatch := func() {}
	if r.cfg.Watch != nil {
		stopWatch = watchAbort(r.cfg.Watch, r.clock, &r.inFlight, &r.aborted, abort)
	}
	// Each connection watches the context requests run under once, for its life; a
	// request under that same context then registers nothing of its own (readHead).
	for _, t := range r.targets {
		t.runCtx = sendCtx
	}
	if open != nil {
		open.abort = abort // the schedule watch's
	}
	r.out.Mode = r.mode()
	d.drive(sendCtx)
	stopWatch() // a run that ended is not stopped after the fact
	close(r.done)
	<-r.collected
	for _, t := range r.targets {
		t.closeIdle()
	}
	r.out.Elapsed = r.clock.now()
	r.out.Self = r.clock.self.end()
	if a := r.aborted.Load(); a != nil {
		r.out.Self.Aborted, r.out.Self.AbortedBy = a.why, a.kind
	}
	r.out.Fingerprint, r.out.Fingerprinted = r.fp.sum()
	closeSource(r.wl.src)
	r.out.Metrics = r.acc.Metrics()
	r.out.Jobs = r.acc.Jobs()
	r.out.Warnings = r.bad.warnings(r.out.Warnings)
	if r.ideal != nil && !r.priming {
		if res, ok := r.ideal.result(); ok {
			r.out.PrefixCache = &res
			metric.CompletePrefixCache(&r.out.Metrics, &res.Rate, nil)
		}
	}
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

// driver chooses the run's transport by its configuration: under a pacer the open
// loop; with user-centric timing its users; else the closed loop of n workers (see
// closedWorkers), through the event loops when the run allows them (Target.Transport,
// Target.EventLoops; see loopable), else over goroutines.
func (r *runner) driver() driver {
	if r.pacer != nil {
		_, http := r.sender.(*httpSender)
		return &openLoop{
			pacer: r.pacer, clock: r.clock, wl: r.wl, send: r, sem: r.sem, spin: r.spin,
			targets: r.targets, http: http, timeout: r.cfg.timeout(),
			maxLag: r.cfg.maxScheduleLag(), stopped: &r.aborted,
		}
	}
	if p, ok := r.cfg.userCentric(); ok {
		return &users{p: p, turns: r.cfg.sessionTurns(), wl: r.wl, send: r, clock: r.clock}
	}
	n := r.closedWorkers()
	w := newWorkers(&r.cfg, n, r.wl, r, r.clock)
	if !loopable(&r.cfg, r.pacer, r.sender, r.targets) {
		return w
	}
	return &eventLoops{wl: r.wl, send: r, sender: r.sender, clock: r.clock, targets: r.targets, most: r.cfg.EventLoops, n: w.local, served: &r.evServed, fallback: w}
}

// closedWorkers is the closed loop's worker count over all shards.
func (r *runner) closedWorkers() int {
	n := max(r.cfg.Concurrency, DefaultConcurrency)
	if r.wl.limit > 0 && int64(n) > r.wl.limit {
		n = int(r.wl.limit) // more workers than requests would only wait
	}
	return n
}

// mode describes the run's load (Outcome.Mode).
func (r *runner) mode() string {
	if r.pacer != nil {
		m := r.pacer.String()
		if r.sem != nil {
			m += fmt.Sprintf(" ≤%d in flight", cap(r.sem))
		}
		return m
	}
	if p, ok := r.cfg.userCentric(); ok {
		return p.String()
	}
	n := r.closedWorkers()
	if r.cfg.shards() > 1 {
		return fmt.Sprintf("Closed{%d of %d workers, shard %d/%d}", ShardWorkers(n, r.cfg.shards(), r.cfg.ShardIndex), n, r.cfg.ShardIndex, r.cfg.shards())
	}
	return fmt.Sprintf("Closed{%d workers}", n)
}

// startClock starts the run clock: head from now, or at cfg.StartAt (waiting until
// head before it). A process that reaches StartAt late still starts its clock at
// StartAt, so its schedule stays aligned with the other shards' (requests already due
// go out at once), and Outcome.StartLate says by how much. head is the open loop's
// head start (see openLoop.headStart): the time before the clock's zero in which it
// prepares the requests due first.
func (r *runner) startClock(ctx context.Context, head time.Duration) error {
	now := time.Now()
	if r.cfg.StartAt.IsZero() {
		r.clock.start = now.Add(head)
		return nil
	}
	wait := r.cfg.StartAt.Sub(now) - head
	if wait > 0 {
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
		// A timer wakes a little late; start the clock at StartAt itself.
		now = time.Now()
	}
	r.clock.start = now.Add(r.cfg.StartAt.Sub(now)) // StartAt, keeping the monotonic reading
	if late := now.Sub(r.cfg.StartAt); wait <= 0 && late > 0 {
		r.out.StartLate = late
	}
	return nil
}

// errGraceOver is the cause of the cancellation of requests still in flight when the
// grace period after the benchmark duration ends.
var errGraceOver = errors.New("the grace period after the benchmark duration ended")
