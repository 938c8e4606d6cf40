package loadgen

// The runner's send path, which every transport shares: a conversation's turns in
// order (session), each turn's request prepared, sent through the run's sender and
// finished (request: prepare, sender.send, finish), its record handed to the
// collector. The event loops send a request themselves between begin and end.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

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
	r.bad.add(rec.RequestID, res)
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
