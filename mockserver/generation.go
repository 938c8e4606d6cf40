package mockserver

import (
	"bufio"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
)

// gen is the output side of one generating request.
type gen struct {
	s       *Server
	j       *job
	k       generative // j.kind
	rng     *rand.Rand
	z       zipfPair
	samp    *reqSampler
	stop    *stopMatcher
	target  int    // tokens to generate, reasoning included
	reason  int    // the first reason tokens of target are reasoning
	finish  string // finish reason if all target tokens are sent ("length" or "stop")
	i       int    // tokens drawn so far
	stopped bool   // a stop sequence ended the output early
	ids     []int  // output ids (kept only for the inexact-tokenizer fallback)
	detok   *detokenizer
	args    []byte // a tool call's generated words (j.tool set), without the JSON around them
	// What samp, detok and reply point to, kept in the gen rather than allocated apart
	// (three fewer objects per request for the garbage collector).
	sampler reqSampler
	dt      detokenizer
	rp      reply
}

// tail returns text the detokenizer still holds at the end of the output.
func (g *gen) tail() string {
	if g.detok == nil {
		return ""
	}
	t := g.detok.flush()
	if g.j.tool != "" {
		g.args = append(g.args, t...)
	}
	return t
}

// reportedOSL is the output length reported in usage and the record: the tokens sent,
// or, for a tokenizer whose words do not re-encode exactly, the re-encoded count of the
// text sent. A tool call's arguments count as their JSON text encodes.
func (g *gen) reportedOSL() int {
	if g.j.tool != "" {
		return g.reasoningSent() + g.s.tok.Count(toolArgs(g.args), false)
	}
	if g.detok == nil {
		return g.i
	}
	return g.s.tok.Count(g.s.tok.Decode(g.ids, false), false)
}

// next draws the next output token's text; ok is false when the output is complete
// (target reached, or a stop sequence would be completed by this token).
func (g *gen) next() (string, bool) {
	if g.i >= g.target || g.stopped {
		return "", false
	}
	id, piece := g.s.gen.next(g.rng, g.z, g.i)
	if g.stop != nil && g.i >= g.reason && g.stop.hit(piece) {
		g.stopped = true
		g.finish = "stop"
		return "", false
	}
	g.i++
	if g.detok != nil {
		// Inexact tokenizer: stream through the incremental detokenizer, so no chunk
		// splits a character; the count is corrected at the end (see reportedOSL).
		g.ids = append(g.ids, id)
		piece = g.detok.add(id)
		if g.i == g.reason {
			piece += g.detok.flush() // the reasoning ends whole
		}
	}
	if g.j.tool != "" && g.i > g.reason {
		g.args = append(g.args, piece...)
	}
	return piece, true
}

func (s *Server) serveGeneration(ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand) {
	reason := s.lengths.reasoningTokens(j, rng)
	target, finish := s.lengths.output(j, rng, reason)
	target += reason
	stop := newStopMatcher(j.stop)
	if j.tool != "" {
		target, finish, stop = s.toolOutput(j, rng, reason, target), finishToolCalls, nil
	}
	g := &c.gen
	*g = gen{s: s, j: j, k: j.kind.(generative), rng: rng, target: target, reason: reason, finish: finish, stop: stop}
	g.samp = s.lat.initSampler(&g.sampler, rng, &s.inflight, &s.streams)
	g.z = s.gen.newZipf(rng)
	if !s.gen.exact {
		g.dt.tok = s.tok
		g.detok = &g.dt
	}
	c.rec.TargetOSL = target
	faults := s.faults.stream(rng, target)
	conn := ctx.Conn()
	if !j.stream {
		s.serveWhole(ctx, c, g, conn)
		return
	}
	ctx.SetContentType(sse.ContentType)
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	s.streams.Add(1)
	if directOK(ctx) {
		s.streamDirect(ctx, func(out streamOut) bool {
			defer s.streams.Add(-1)
			s.runStream(out, conn, c, g, faults)
			return !c.rec.ClientGone && c.rec.Fault != "disconnect" && c.rec.Fault != "shutdown"
		})
		return
	}
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer s.streams.Add(-1)
		s.runStream(pipeOut{w}, conn, c, g, faults)
	})
}

// reply is what g's kind writes c's response from.
func (g *gen) reply(c *call) *reply {
	h := openai.ChunkHeader{ID: g.k.idPrefix() + c.rec.RequestID, Created: c.recv.Unix(), Model: g.j.model}
	g.rp = reply{j: g.j, g: g, h: h, requestID: c.rec.RequestID, isl: c.rec.ISL}
	return &g.rp
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// stream is one SSE response being written: tokens drawn from g, paced by p, framed by
// the kind's frames fr, with the faults drawn for it.
type stream struct {
	s      *Server
	c      *call
	g      *gen
	out    streamOut
	conn   net.Conn
	p      *pacer
	fr     frames
	h      openai.ChunkHeader
	faults streamFaults
	tpc    int     // tokens per chunk
	bp     *[]byte // buf's pool entry
	buf    []byte  // the frames of the chunk being written
	text   []byte  // the chunk's text
	first  bool    // no chunk written yet
	// firstNS is when the first chunk with tokens was handed to the connection (Unix
	// ns, read just before the write), for the server data (Config.ServerTimings); 0
	// until then or without server data.
	firstNS int64
}

// runStream writes one SSE response: the kind's opening frames, then a chunk of up to
// Config.TokensPerChunk tokens at each pacing deadline, then the closing frames.
func (s *Server) runStream(out streamOut, conn net.Conn, c *call, g *gen, faults streamFaults) {
	st := s.newStream(out, conn, c, g, faults)
	defer st.close()
	if !st.start() {
		return
	}
	for {
		n, thinking, more := st.take()
		if n == 0 {
			break
		}
		if !st.wait(n) || !st.emit(n, thinking) {
			return
		}
		if !more {
			break
		}
	}
	st.end()
}

func (s *Server) newStream(out streamOut, conn net.Conn, c *call, g *gen, faults streamFaults) *stream {
	c.rec.Status = 200
	bp := bufPool.Get().(*[]byte)
	rp := g.reply(c)
	st := &stream{s: s, c: c, g: g, out: out, conn: conn, p: s.newPacer(c, g, conn), fr: g.k.frames(rp), h: rp.h,
		faults: faults, tpc: orInt(s.cfg.TokensPerChunk, DefaultTokensPerChunk), bp: bp, buf: (*bp)[:0], first: true}
	st.p.out = out
	return st
}

func (st *stream) close() {
	st.p.close()
	*st.bp = st.buf[:0]
	bufPool.Put(st.bp)
	st.s.finish(st.c, st.g.j.ids)
}

// start sends the kind's opening frames, if it has any; false if the client has gone.
func (st *stream) start() bool {
	st.buf = st.fr.start(st.buf[:0])
	if len(st.buf) == 0 {
		return true
	}
	if st.out.send(st.buf) != nil {
		st.c.rec.ClientGone = true
		return false
	}
	return true
}

// take draws the next chunk's tokens into st.text: up to tpc of them, all reasoning or
// all content. It returns how many, whether they are reasoning, and whether more
// tokens may follow.
func (st *stream) take() (n int, thinking, more bool) {
	g := st.g
	st.text = st.text[:0]
	thinking = g.inReasoning()
	for n < st.tpc {
		if n > 0 && g.inReasoning() != thinking {
			return n, thinking, true // a chunk is reasoning or content, never both
		}
		piece, ok := g.next()
		if !ok {
			return n, thinking, false
		}
		st.text = append(st.text, piece...)
		n++
	}
	return n, thinking, true
}

// wait waits for the deadline of the chunk just drawn (n tokens); false if the stream
// is cut (shutdown) or the client has gone, with the chunk taken back.
func (st *stream) wait(n int) bool {
	if st.p.wait(st.g.i) {
		return true
	}
	r := &st.c.rec
	if !st.s.aborted() {
		r.ClientGone = true
	} else {
		r.Fault = "shutdown"
	}
	st.g.i -= n
	r.OSL, r.ReasoningTokens = st.g.i, st.g.reasoningSent()
	return false
}

// emit writes the chunk of n tokens just drawn (with the malformed chunk before it, if
// that fault falls in it) and records its time; false if the stream ends here (the
// client has gone, or an injected disconnect).
func (st *stream) emit(n int, thinking bool) bool {
	r, g := &st.c.rec, st.g
	st.buf = st.buf[:0]
	if st.faults.malformed(g.i-n, g.i) {
		st.buf = appendMalformed(st.buf, st.h.ID)
		r.Fault = "malformed_chunk"
	}
	st.buf = st.fr.delta(st.buf, st.first, thinking, unsafeString(st.text))
	st.first = false
	if st.firstNS == 0 && st.g.j.srv != "" {
		st.firstNS = time.Now().UnixNano()
	}
	if st.out.send(st.buf) != nil {
		r.ClientGone = true
	}
	st.stamp()
	r.Chunks++
	r.OSL, r.ReasoningTokens = g.i, g.reasoningSent()
	if r.ClientGone {
		return false
	}
	if st.faults.disconnect(g.i) {
		// Put what is queued on the wire first (on the pipe path the connection
		// goroutine copies it, hence the lag), so the client sees a stream that
		// stops mid-way, not a refused request.
		r.Fault = "disconnect"
		_ = st.out.flush()
		time.Sleep(disconnectLag)
		st.conn.Close()
		return false
	}
	return true
}

// stamp records a chunk's time. The clock is read for the first chunk and, when
// pacing, for every chunk; at zero latency the last chunk's time is taken once at the
// end (see [stream.end]).
func (st *stream) stamp() {
	r := &st.c.rec
	if r.FirstTokenNS == 0 || !st.s.lat.fast {
		now := time.Now().UnixNano()
		if r.FirstTokenNS == 0 {
			r.FirstTokenNS = now
			st.s.met.firstToken(st.c)
		}
		r.LastTokenNS = now
	}
}

// end writes what the detokenizer still holds and the kind's closing frames, and
// records the output length and finish reason.
func (st *stream) end() {
	r, g := &st.c.rec, st.g
	if st.s.lat.fast && r.Chunks > 0 {
		r.LastTokenNS = time.Now().UnixNano()
	}
	st.buf = st.buf[:0]
	if tail := g.tail(); tail != "" {
		st.buf = st.fr.delta(st.buf, st.first, false, tail)
		st.first = false
	}
	r.OSL, r.ReasoningTokens = g.reportedOSL(), g.reasoningSent()
	r.FinishReason = g.finish
	if g.j.srv != "" {
		st.serverTimes()
	}
	st.buf = st.fr.finish(st.buf, g, st.first, g.usage(r.ISL, r.OSL, r.CachedTokens))
	if st.out.end(st.buf) != nil {
		r.ClientGone = true
		return
	}
	st.p.emitted()
}

// serverTimes fills in the stream's job what this server measured of the request, for
// its server data (Config.ServerTimings): arrival, admission to the batch (the
// batching scheduler's; arrival without one, which has no queue), first and last
// token written, and the token counts.
func (st *stream) serverTimes() {
	r, t := &st.c.rec, &st.g.j.times
	now := time.Now().UnixNano()
	t.Recv, t.Scheduled = r.RecvNS, r.RecvNS
	if q := st.p.q; q != nil {
		if a := q.admitted.Load(); a > 0 {
			t.Scheduled = a
		}
	}
	t.FirstToken, t.LastToken = st.firstNS, r.LastTokenNS
	if t.FirstToken == 0 { // no token went out before the closing frames
		t.FirstToken = now
	}
	if t.LastToken < t.FirstToken {
		t.LastToken = t.FirstToken
	}
	t.PromptTokens, t.CachedTokens, t.OutputTokens = r.ISL, r.CachedTokens, r.OSL
}

func (s *Server) aborted() bool {
	select {
	case <-s.abort:
		return true
	default:
		return false
	}
}

// unsafeString views b as a string for the duration of a call that does not keep it.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// serveWhole answers a non-streaming generation after the whole output's latency.
func (s *Server) serveWhole(ctx *fasthttp.RequestCtx, c *call, g *gen, conn net.Conn) {
	r := &c.rec
	j := g.j
	var think strings.Builder
	// The answer's text is gathered in a pooled buffer: whole copies it into the body.
	bp := bufPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 64<<10 {
			bufPool.Put(bp)
		}
	}()
	// Room for the answer at once (a token is about 5 bytes), not a doubling per size.
	sb := slices.Grow((*bp)[:0], min(8*(g.target-g.reason), 64<<10))
	for {
		inReasoning := g.inReasoning()
		piece, ok := g.next()
		if !ok {
			break
		}
		if inReasoning {
			think.WriteString(piece)
		} else {
			sb = append(sb, piece...)
		}
	}
	p := s.newPacer(c, g, conn)
	okWait := g.i == 0 || p.wait(g.i)
	p.close()
	if !okWait {
		if s.aborted() {
			r.Fault = "shutdown"
			s.writeError(ctx, &apiError{status: 503, typ: openai.ErrOverloaded, msg: "server shutting down"})
			r.Status = 503
		} else {
			r.ClientGone = true
			r.Status = 499
		}
		s.finish(c, j.ids)
		return
	}
	now := time.Now().UnixNano()
	if g.i > 0 {
		r.FirstTokenNS, r.LastTokenNS = now, now
		s.met.firstToken(c)
	}
	if j.srv != "" {
		// A whole answer's tokens all go out at once: its first and last are now.
		scheduled := r.RecvNS
		if p.q != nil && p.q.admitted.Load() > 0 {
			scheduled = p.q.admitted.Load()
		}
		j.times = openai.ServerTimes{Recv: r.RecvNS, Scheduled: scheduled, FirstToken: now, LastToken: now}
	}
	sb = append(sb, g.tail()...)
	*bp = sb[:0]
	r.Status, r.OSL, r.FinishReason, r.Chunks = 200, g.reportedOSL(), g.finish, 0
	r.ReasoningTokens = g.reasoningSent()
	j.times.PromptTokens, j.times.CachedTokens, j.times.OutputTokens = r.ISL, r.CachedTokens, r.OSL
	// text lives only until whole has copied it (no kind keeps it).
	text := unsafe.String(unsafe.SliceData(sb), len(sb))
	usage := g.usage(r.ISL, r.OSL, r.CachedTokens)
	// The body is written into the response's own (pooled) buffer, not a new one.
	body := g.k.whole(ctx.Response.SwapBody(nil)[:0], g.reply(c), think.String(), text, usage)
	ctx.SetContentType("application/json")
	ctx.Response.SwapBody(body)
	s.finish(c, j.ids)
}
