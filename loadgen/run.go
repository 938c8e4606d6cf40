package loadgen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
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
	// badCached is the first request whose usage carried a cached_tokens of the wrong
	// type, nBadCached how many did (Outcome.Warnings).
	badCached  atomic.Pointer[badField]
	nBadCached atomic.Int64
	// badServer is the first request whose server data (vLLM's metrics, llama.cpp's
	// timings, SGLang's meta_info) had a field of the wrong type, nBadServer how many
	// did (Outcome.Warnings).
	badServer  atomic.Pointer[badField]
	nBadServer atomic.Int64

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
	c := &collector{
		in: r.done, collected: r.collected, enc: r.enc, sink: r.sink, acc: r.acc, watch: r.cfg.Watch, clock: r.clock,
		out: &r.out, discard: r.cfg.DiscardRecords, reuseChunks: r.cfg.DiscardRecords && r.sink == nil, recs: &r.recs,
	}
	go c.collect()
	for i := range r.primed {
		r.done <- &r.primed[i] // the priming phase's records first (Prefixes.PrimePrefixes)
	}
	defer r.wl.start()()
	d := r.driver()
	var head time.Duration
	if open, ok := d.(*openLoop); ok {
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
	open, _ := d.(*openLoop)
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
		open.abort = abort
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
	if b := r.badCached.Load(); b != nil {
		r.out.Warnings = append(r.out.Warnings, fmt.Sprintf("loadgen: %d answer(s) carried usage.prompt_tokens_details.cached_tokens that is not a whole number >= 0 (first: %s); it was ignored for them, so their prefix-cache hits are unknown", r.nBadCached.Load(), b.id))
	}
	if b := r.badServer.Load(); b != nil {
		r.out.Warnings = append(r.out.Warnings, fmt.Sprintf("loadgen: %d answer(s) carried server timings with a field of the wrong type (first: %s in %s); the field was ignored for them, their other fields and records kept", r.nBadServer.Load(), b.field, b.id))
	}
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
// head start (see runner.headStart): the time before the clock's zero in which it
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

// conversation sends conv's turns in order; the first turn already holds index idx
// (and a semaphore slot when held is true). It reports whether the run may go on.
// An open-loop first turn waits at gate g before it is sent (nil: no wait).
func (r *runner) conversation(ctx context.Context, conv dataset.Conversation, idx int, due time.Duration, held bool, g *sendGate) bool {
	return r.conversationAs(ctx, conv, idx, due, held, g, sessionOpts{})
}

// conversationAs is conversation with a session's options (a user's schedule).
func (r *runner) conversationAs(ctx context.Context, conv dataset.Conversation, idx int, due time.Duration, held bool, g *sendGate, o sessionOpts) bool {
	conv = r.salt.salted(conv, idx)
	if r.cfg.PromptSalt != "" && !conv.Whole {
		for ti := range conv.Turns { // a synthetic job's sub-agents: made for this job alone
			for ai := range conv.Turns[ti].Agents {
				conv.Turns[ti].Agents[ai] = r.salt.salted(conv.Turns[ti].Agents[ai], idx)
			}
		}
	}
	job := ""
	if conv.Job != "" {
		job = r.classPrefix + jobID(idx) // the job's first request names it: unique in the run
	}
	ok := r.session(ctx, &conv, job, idx, due, held, g, o)
	if job != "" {
		// Every record of the job is on its way to the collector (its sub-agents were
		// joined): the metrics may drop the job's running tally.
		r.done <- &record.Client{Index: jobEndIndex, Job: job}
	}
	return ok
}

// jobEndIndex marks the record that tells the collector a job ended (see
// conversationAs); no request has it.
const jobEndIndex = math.MinInt

// jobID is the record's job id of the job whose first request is idx.
func jobID(idx int) string { return "job-" + strconv.Itoa(idx) }

// session sends conv's turns in order (see conversation); job names its agent job
// ("" for none). idx < 0: the first turn too waits for its delay and claims its index
// (a sub-agent session). After a turn with sub-agents, they run in parallel and the
// next turn waits for them all; in a session that carries its history, the next
// turn's context then holds their answers. With o.user, a later turn is due when the
// user's schedule says instead of after its delay; with o.answer, the last turn's
// answer is kept there.
func (r *runner) session(ctx context.Context, conv *dataset.Conversation, job string, idx int, due time.Duration, held bool, g *sendGate, o sessionOpts) bool {
	// The conversation's working state (its turns' context, their requests' scratch,
	// the exchange's worker) is recycled whole: one pool round trip a conversation.
	sc, _ := r.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{w: newWorker()}
	}
	tc := &sc.tc
	*tc = turnCtx{system: r.cfg.SystemPrompt, history: tc.history[:0]}
	sc.own, sc.ownTarget = nil, nil
	defer func() {
		clear(tc.history)
		if sc.own != nil { // the session's own connection (ReuseSticky) goes back to the pool
			sc.ownTarget.put(sc.own)
			sc.own, sc.ownTarget = nil, nil
		}
		r.scratch.Put(sc)
	}()
	session := ""
	if r.cfg.SessionHeader != "" {
		session = sessionValue(job, conv.ID, idx)
		if job == "" {
			session = r.classPrefix + session // a class's sessions are its own
		}
	}
	for ti := range conv.Turns {
		t := &conv.Turns[ti]
		if ti > 0 || idx < 0 {
			wait := t.ToolWait + t.Delay
			if o.user != nil {
				due = o.user.Next(r.clock.now())
				wait = due - r.clock.now()
			}
			if !sleep(ctx, wait) {
				return false
			}
			if idx = r.wl.claim(ctx); idx < 0 {
				return false
			}
			if o.user == nil {
				due = r.clock.now()
			}
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
		q := turnReq{convID: conv.ID, job: job, session: session, nTurns: len(conv.Turns), turn: ti, idx: idx, due: due, t: t, tc: tc, wantText: (!last || o.answer != nil) && !conv.Whole}
		if ti == 0 {
			q.gate = g
		}
		text := r.request(ctx, &q, sc)
		if held {
			<-r.sem
			held = false
		}
		var answers []string
		if len(t.Agents) > 0 {
			var ok bool
			if answers, ok = r.fanOut(ctx, t.Agents, job, !last && !conv.Whole); !ok {
				return false
			}
		}
		if last && o.answer != nil {
			*o.answer = text
		}
		if !last && !conv.Whole {
			tc.history = chatMessages(tc.history, t, &turnCtx{toolReply: tc.toolReply}) // the turn's own input
			tc.toolReply = nil
			reply := message{Role: "assistant", Content: text}
			if r.cfg.ToolResults && len(q.calls) > 0 {
				// The calls go back, and the next turn's prompt is their result.
				reply = message{Role: "assistant", ToolCalls: q.calls}
				for _, c := range q.calls {
					tc.toolReply = append(tc.toolReply, c.ID)
				}
			}
			tc.history = append(tc.history, reply)
			for _, a := range answers { // the joining turn's context: the sub-agents' answers
				tc.history = append(tc.history, message{Role: "user", Content: a})
			}
		}
	}
	return ctx.Err() == nil
}

// fanOut runs the sub-agent sessions of job in parallel and waits for them all (the
// join). It reports whether the run may go on, and, when keep is set, returns each
// sub-agent's last answer, in the order of agents.
func (r *runner) fanOut(ctx context.Context, agents []dataset.Conversation, job string, keep bool) ([]string, bool) {
	var wg sync.WaitGroup
	var stopped atomic.Bool
	var answers []string
	if keep {
		answers = make([]string, len(agents))
	}
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var o sessionOpts
			if keep {
				o.answer = &answers[i]
			}
			if !r.session(ctx, &agents[i], job, -1, 0, false, nil, o) {
				stopped.Store(true)
			}
		}()
	}
	wg.Wait()
	return answers, !stopped.Load() && ctx.Err() == nil
}

// scratch is one conversation's reusable working state, used by one request at a time.
type scratch struct {
	tc   turnCtx // the conversation's
	w    *worker // performs its requests (see httpSender)
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
	// The last body fingerprinted and its digest (bodies of a payload file repeat).
	lastBody   []byte
	lastDigest [sha256.Size]byte
	// own is the session's own connection and ownTarget its target (ReuseSticky).
	own       *conn
	ownTarget *target
}

// sessionValue is the session header's value of a session: "JOB/SESSION" in an agent
// job, else "session-N" for the conversation whose first request is N; bytes a header
// value cannot carry (controls, spaces, non-ASCII) become '_'.
func sessionValue(job, conv string, idx int) string {
	if job == "" {
		return "session-" + strconv.Itoa(idx)
	}
	b := []byte(job + "/" + conv)
	for i, c := range b {
		if c <= ' ' || c > '~' {
			b[i] = '_'
		}
	}
	return string(b)
}

// memoBody is the largest body whose digest a scratch remembers.
const memoBody = 4 << 10

// digest is r.fp's digest of body, remembered for the next body when short.
func (sc *scratch) digest(fp *fingerprinter, body []byte) [sha256.Size]byte {
	if sc.lastBody != nil && bytes.Equal(sc.lastBody, body) {
		return sc.lastDigest
	}
	d := fp.digest(body)
	if len(body) <= memoBody {
		sc.lastBody, sc.lastDigest = append(sc.lastBody[:0], body...), d
	} else {
		sc.lastBody = nil
	}
	return d
}

// turnReq is one turn of a conversation to send: turn of nTurns, request index idx,
// scheduled at due; its text is returned when wantText (a later turn carries it in its
// history).
type turnReq struct {
	convID    string
	job       string // the agent job's record id; "" = none
	session   string // the session header's value; "" = none
	nTurns    int
	turn, idx int
	due       time.Duration
	gate      *sendGate // the open loop's: wait here, prepared, until due
	t         *dataset.Turn
	tc        *turnCtx
	wantText  bool
	endpoint  Endpoint
	api       adapter // endpoint's
	stream    bool
	calls     []openai.ToolCall // the answer's tool calls, when wantText
	seq       uint64            // its place in the send order of the ideal hit rate's feed
}

// request sends one turn and records it; it returns the generated text when
// q.wantText is true.
func (r *runner) request(ctx context.Context, q *turnReq, sc *scratch) string {
	tg := r.pick()
	if r.cfg.ConnectionReuse == ReuseSticky {
		if sc.ownTarget != nil {
			tg = sc.ownTarget // a session sticks to one URL
		}
		sc.ownTarget = tg
	}
	if r.cfg.Routing == RouteLeastOutstanding && len(r.targets) > 1 {
		tg.pending.Add(1) // only this routing reads it: spare the shared counter
		defer tg.pending.Add(-1)
	}
	defer q.gate.leave()
	rec, ok := r.prepare(q, sc, tg)
	if !ok {
		return "" // recorded as failed: its body could not be built
	}
	c := &sc.call
	if q.gate != nil {
		// Everything is ready before the due time: only the write happens at it.
		q.gate.prepareSend(ctx, c)
		defer c.dropPrepared()
	}
	rctx, stop := r.maybeCancel(ctx, q.due)
	defer stop()
	if r.pacer != nil && r.sem == nil && q.turn == 0 && !rec.Warmup {
		// The client's own lateness: measured by the send loop at its write when it writes.
		if c.gate != nil {
			c.gate.self = r.clock.self
		} else {
			r.clock.self.sent(q.due, r.clock.now())
		}
	}
	res := sc.result()
	r.inFlight.Add(1) // ended in finish
	if r.prefill == nil {
		r.sender.send(rctx, c, rec, res)
	} else {
		r.sendPrefill(rctx, c, rec, res)
	}
	return r.finish(q, sc, rec)
}

// begin readies request idx, the one turn of conv, in sc and q for a transport that
// sends it itself (the event loops; the goroutine way is request): conv salted, its
// target picked, its record and call prepared, and the request counted in flight. ok
// is false when its body could not be built (it is then recorded as failed, and done).
func (r *runner) begin(conv dataset.Conversation, idx int, sc *scratch, q *turnReq) (tg *target, rec *record.Client, ok bool) {
	conv = r.salt.salted(conv, idx)
	sc.tc = turnCtx{system: r.cfg.SystemPrompt, history: sc.tc.history[:0]}
	*q = turnReq{convID: conv.ID, nTurns: 1, idx: idx, t: &conv.Turns[0], tc: &sc.tc}
	tg = r.pick()
	r.pend(tg, 1)
	if rec, ok = r.prepare(q, sc, tg); !ok {
		r.pend(tg, -1)
		return nil, nil, false
	}
	r.inFlight.Add(1) // ended in finish (see end)
	return tg, rec, true
}

// end finishes a request begin readied, once sent (see finish).
func (r *runner) end(q *turnReq, sc *scratch, rec *record.Client, tg *target) {
	r.finish(q, sc, rec)
	r.pend(tg, -1)
}

// pend counts a request to tg in (d = 1) or out (-1) for least-outstanding routing,
// the only reader.
func (r *runner) pend(tg *target, d int64) {
	if r.cfg.Routing == RouteLeastOutstanding && len(r.targets) > 1 {
		tg.pending.Add(d)
	}
}

// prepare readies q's request to target tg before its send: its record (rec) and
// sc.call with the body built. ok is false when the body could not be built (the
// request is then recorded as failed, and done).
func (r *runner) prepare(q *turnReq, sc *scratch, tg *target) (rec *record.Client, ok bool) {
	q.endpoint, q.api, q.stream = r.shape(q.t)
	if r.models != nil && q.t.Model == "" && q.t.Body == nil {
		// The model mix's choice, on a copy: the source may hand the turn out again.
		t := *q.t
		t.Model = r.models.pick(q.idx)
		q.t = &t
	}
	q.tc.toolChoice = nil
	if ts := r.bodies.tools; ts != nil && q.t.Body == nil {
		if q.api.tools() {
			q.tc.toolChoice = ts.choice(q.idx)
		}
	}
	rec = r.newRecord(q, tg)
	c := &sc.call
	*c = call{
		w: sc.w, target: tg, requestID: rec.RequestID, stream: q.stream, api: q.api, hdr: r.hdr, timeout: r.cfg.timeout(), idle: r.cfg.idleTimeout(),
		session: q.session,
	}
	switch r.cfg.ConnectionReuse {
	case ReuseNever:
		c.noReuse = true
	case ReuseSticky:
		c.own = &sc.own
	}
	if err := r.bodies.media.attach(q); err != nil { // recorded as failed, not sent: the server could not read a path
		rec.Sent = r.clock.now()
		rec.Done, rec.ErrorKind, rec.Error = rec.Sent, record.ErrInvalidBody, err.Error()
		r.done <- rec
		return nil, false
	}
	c.body, c.ctype = r.bodies.build(q.api, q.t, q.tc, q.stream)
	if r.ideal != nil {
		q.seq = r.ideal.take()
	}
	return rec, true
}

// result is sc's result, emptied for the next send.
func (sc *scratch) result() *result {
	res := &sc.res
	res.text, res.ends, res.reasoning, res.content = res.text[:0], res.ends[:0], res.reasoning[:0], res.content[:0]
	res.tool, res.calls = res.tool[:0], res.calls[:0]
	res.badCached, res.badServer = false, ""
	return res
}

// finish completes the record of q's request once it was sent (sc.call, sc.res):
// counts, checks and fingerprints it and hands it to the collector; it returns the
// generated text when q.wantText is true.
func (r *runner) finish(q *turnReq, sc *scratch, rec *record.Client) string {
	r.inFlight.Add(-1)
	c, res := &sc.call, &sc.res
	// Counted after the send, so rendering never delays a request; tc and t are
	// unchanged until this function returns, so these are the messages sent.
	r.counts.templateCount(q.api, q.t, q.tc, rec, sc)
	r.ideal.addRequest(q, rec, r.priming, r.counts)
	if res.badCached {
		r.badCached.CompareAndSwap(nil, &badField{id: rec.RequestID})
		r.nBadCached.Add(1)
	}
	if res.badServer != "" {
		r.badServer.CompareAndSwap(nil, &badField{id: rec.RequestID, field: res.badServer})
		r.nBadServer.Add(1)
	}
	if q.tc.media != nil {
		rec.ImageTokens, rec.AudioTokens = mediaTokens(q.tc.media)
		if rec.ISLTemplate > 0 {
			rec.ISLTemplate += rec.ImageTokens + rec.AudioTokens // a server's prompt_tokens counts them
		}
	}
	recordClip(q.api, q.tc.media, rec)
	r.counts.count(rec, res, sc)
	checkEmptyOutput(rec, res, q)
	r.fp.addDigest(q.idx, r.fp.bodyDigest(q.t, sc, c.body)) // after the send: hashing never delays a request
	c.body = nil
	r.done <- rec
	if q.wantText {
		q.calls = nil
		if len(res.calls) > 0 {
			q.calls = res.wireCalls()
		}
		return string(res.text)
	}
	return ""
}

// shape is the endpoint turn t goes to, its adapter, and whether it streams.
func (r *runner) shape(t *dataset.Turn) (Endpoint, adapter, bool) {
	e, a := r.cfg.endpoint(), r.api
	if t.Endpoint != "" && Endpoint(t.Endpoint) != e {
		if ta := adapterOf(Endpoint(t.Endpoint)); ta != nil {
			e, a = Endpoint(t.Endpoint), ta
		}
	}
	stream := r.cfg.Streams()
	if t.Stream != nil {
		stream = *t.Stream
	}
	return e, a, stream && a.generates()
}

// newRecord starts q's record (from the pool) with what is known before the send.
func (r *runner) newRecord(q *turnReq, tg *target) *record.Client {
	cfg, t := &r.cfg, q.t
	rec, _ := r.recs.Get().(*record.Client)
	if rec == nil {
		rec = &record.Client{}
	}
	*rec = record.Client{
		Index: q.idx, RequestID: r.requestID(q.idx), Turn: q.turn, URL: tg.url, Endpoint: string(q.endpoint),
		Model: cfg.Model, Class: cfg.Class, Stream: q.stream, RunStartUnixNano: r.clock.start.UnixNano(), Scheduled: q.due,
		ISL: t.ISL, RequestedISL: t.RequestedISL, ISLExact: t.Exact, RequestedOSL: t.OSL, Prefix: t.Prefix,
		Chunks: rec.Chunks[:0],
	}
	if q.nTurns > 1 || q.job != "" {
		rec.Conversation = q.convID
	}
	if q.job != "" {
		rec.Job, rec.ThinkTime, rec.ToolWait = q.job, t.Delay, t.ToolWait
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
	if due == 0 && r.pacer == nil && r.cfg.UserCentricRate == 0 {
		due = r.clock.now() // closed loop: no schedule, no client queueing
		rec.Scheduled = due
	}
	rec.Warmup = (cfg.WarmupRequests > 0 && q.idx < cfg.WarmupRequests) || (cfg.WarmupDuration > 0 && due < cfg.WarmupDuration)
	return rec
}

// requestID is request idx's X-Request-Id: "req-<idx>", or the runner's idPrefix
// and idx.
func (r *runner) requestID(idx int) string {
	if r.idPrefix != "" {
		return r.idPrefix + strconv.Itoa(idx)
	}
	return requestID(idx)
}

// requestID is request idx's X-Request-Id, "req-<idx>" (one allocation).
func requestID(idx int) string {
	var b [24]byte
	return string(strconv.AppendInt(append(b[:0], "req-"...), int64(idx), 10))
}

// maybeCancel returns the context to send under: ctx, or, for the Config.CancelFraction
// of requests drawn, one cancelled Config.CancelAfter after the request's send: after
// due, when that is still ahead (an open-loop request prepared before its due time).
func (r *runner) maybeCancel(ctx context.Context, due time.Duration) (context.Context, context.CancelFunc) {
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
	return context.WithTimeoutCause(ctx, max(due-r.clock.now(), 0)+cfg.CancelAfter, errCancelFraction)
}

// checkEmptyOutput fails a 200 stream that carried no output token: it has no TTFT,
// ITL or OSL to measure; the server failed the request without saying so.
func checkEmptyOutput(rec *record.Client, res *result, q *turnReq) {
	if rec.OK() && q.stream && q.api.generates() && len(res.text) == 0 {
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
		rec.ErrorKind, rec.Error = record.ErrCancelled, cancelled(ctx, "waiting for a prefill slot")
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
