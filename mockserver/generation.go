package mockserver

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
)

// gen is the output side of one generating request.
type gen struct {
	s       *Server
	j       *job
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
}

// tail returns text the detokenizer still holds at the end of the output.
func (g *gen) tail() string {
	if g.detok == nil {
		return ""
	}
	return g.detok.flush()
}

// reportedOSL is the output length reported in usage and the record: the tokens sent,
// or, for a tokenizer whose words do not re-encode exactly, the re-encoded count of the
// text sent.
func (g *gen) reportedOSL() int {
	if g.detok == nil {
		return g.i
	}
	return g.s.tok.Count(g.s.tok.Decode(g.ids, false), false)
}

// decideOSL applies the output-length rules: ignore_eos → exactly the cap; otherwise a
// draw from Config.OSL clamped to [min_tokens, cap] (the cap when OSL is unset).
func (s *Server) decideOSL(j *job, rng *rand.Rand) (int, string) {
	if j.ignoreEOS || s.cfg.OSL.IsZero() {
		return j.maxOut, "length"
	}
	l := distribution.Length{Dist: distribution.WithSrc(s.cfg.OSL.Distribution, rngSource{rng}), Min: j.minTokens, Max: j.maxOut}
	n := l.Rand()
	if n >= j.maxOut {
		return j.maxOut, "length"
	}
	return n, "stop"
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
	return piece, true
}

func (s *Server) serveGeneration(ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand) {
	reason := s.decideReasoning(j, rng)
	target, finish := s.decideOutput(j, rng, reason)
	target += reason
	g := &gen{s: s, j: j, rng: rng, target: target, reason: reason, finish: finish, stop: newStopMatcher(j.stop),
		samp: s.lat.sampler(rng, &s.inflight, &s.streams)}
	g.z = s.gen.newZipf(rng)
	if !s.gen.exact {
		g.detok = &detokenizer{tok: s.tok}
	}
	c.rec.TargetOSL = target
	f := s.cfg.Faults
	disconnectAt, malformedAt := -1, -1
	if f.DisconnectRate > 0 && rng.Float64() < f.DisconnectRate {
		disconnectAt = rng.IntN(max(target, 1))
	}
	if f.MalformedChunkRate > 0 && rng.Float64() < f.MalformedChunkRate {
		malformedAt = rng.IntN(max(target, 1))
	}
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
			s.runStream(out, conn, c, g, disconnectAt, malformedAt)
			return !c.rec.ClientGone && c.rec.Fault != "disconnect" && c.rec.Fault != "shutdown"
		})
		return
	}
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer s.streams.Add(-1)
		s.runStream(pipeOut{w}, conn, c, g, disconnectAt, malformedAt)
	})
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// pacer waits for each chunk's moment: absolute deadlines from the receive time
// (no drift), or the batching scheduler's steps.
type pacer struct {
	s        *Server
	c        *call
	g        *gen
	conn     net.Conn
	out      streamOut   // flushed before each sleep (nil: nothing to flush)
	dues     []time.Time // deadlines of the chunks queued in out, for the lateness histogram
	timer    *time.Timer
	deadline time.Time
	q        *bseq
	started  bool
	sent     int // tokens whose deadline is in p.deadline
}

// wait blocks until tokens [0, upto) may be sent. It returns false if the server is
// cutting streams or the client has gone.
func (p *pacer) wait(upto int) bool {
	if p.s.lat.fast {
		return true
	}
	if p.q != nil {
		for int(p.q.produced.Load()) < upto {
			if !p.flush() {
				return false
			}
			select {
			case <-p.q.notify:
			case <-p.s.abort:
				return false
			case <-p.tick():
				if connGone(p.conn) {
					return false
				}
			}
		}
		p.due(time.Unix(0, p.q.stepEnd.Load()))
		return true
	}
	if !p.started {
		p.started = true
		p.deadline = p.c.recv.Add(p.g.samp.firstToken(p.c.rec.ISL))
		p.sent = 1
	}
	for p.sent < upto {
		p.deadline = p.deadline.Add(p.g.samp.nextToken())
		p.sent++
	}
	for {
		left := time.Until(p.deadline)
		if left <= 0 {
			p.due(p.deadline)
			return true
		}
		if !p.flush() {
			return false
		}
		step := min(left, gonePoll)
		if p.timer == nil {
			p.timer = time.NewTimer(step)
		} else {
			p.timer.Reset(step)
		}
		select {
		case <-p.timer.C:
		case <-p.s.abort:
			return false
		}
		if step < left && connGone(p.conn) {
			return false
		}
	}
}

// disconnectLag is how long an injected disconnect waits after its last chunk.
const disconnectLag = 50 * time.Millisecond

// gonePoll is how often a long wait checks whether the client has gone.
const gonePoll = 50 * time.Millisecond

// due notes the deadline of a chunk about to be queued; its lateness is taken when it
// is written (see emitted).
func (p *pacer) due(t time.Time) {
	if p.out == nil {
		p.s.late.observe(time.Since(t))
		return
	}
	p.dues = append(p.dues, t)
}

// emitted observes the lateness of the chunks just written: write time minus deadline.
func (p *pacer) emitted() {
	if len(p.dues) == 0 {
		return
	}
	now := time.Now()
	for _, t := range p.dues {
		p.s.late.observe(now.Sub(t))
	}
	p.dues = p.dues[:0]
}

// flush puts queued chunks on the wire before the pacer sleeps; false if the client
// has gone.
func (p *pacer) flush() bool {
	if p.out == nil {
		return true
	}
	if err := p.out.flush(); err != nil {
		p.c.rec.ClientGone = true
		return false
	}
	p.emitted()
	return true
}

func (p *pacer) tick() <-chan time.Time {
	if p.timer == nil {
		p.timer = time.NewTimer(gonePoll)
	} else {
		p.timer.Reset(gonePoll)
	}
	return p.timer.C
}

func (p *pacer) close() {
	if p.timer != nil {
		p.timer.Stop()
	}
	if p.q != nil {
		p.q.cancelled.Store(true)
	}
}

func (s *Server) newPacer(c *call, g *gen, conn net.Conn) *pacer {
	p := &pacer{s: s, c: c, g: g, conn: conn}
	if s.sched != nil && g.target > 0 {
		p.q = s.sched.submit(c.rec.ISL, g.target)
	}
	return p
}

func chunkID(k kind, c *call) string {
	switch k {
	case kindCompletion:
		return "cmpl-" + c.rec.RequestID
	case kindResponses:
		return "resp_" + c.rec.RequestID
	case kindMessages:
		return "msg_" + c.rec.RequestID
	}
	return "chatcmpl-" + c.rec.RequestID
}

// runStream writes one SSE response.
func (s *Server) runStream(out streamOut, conn net.Conn, c *call, g *gen, disconnectAt, malformedAt int) {
	r := &c.rec
	j := g.j
	r.Status = 200
	bp := bufPool.Get().(*[]byte)
	buf := (*bp)[:0]
	var text []byte
	p := s.newPacer(c, g, conn)
	p.out = out
	defer func() {
		p.close()
		*bp = buf[:0]
		bufPool.Put(bp)
		s.finish(c, j.ids)
	}()
	h := openai.ChunkHeader{ID: chunkID(j.kind, c), Created: c.recv.Unix(), Model: j.model}
	tpc := orInt(s.cfg.TokensPerChunk, DefaultTokensPerChunk)
	tmpl := newChunkTemplate(j, h)
	rs := &respStream{h: h, itemID: "msg_" + r.RequestID}
	if j.kind == kindMessages {
		rs.msg = &msgStream{}
		buf = rs.msg.preamble(buf[:0], h, r.ISL)
		if out.send(buf) != nil {
			r.ClientGone = true
			return
		}
	}
	if j.kind == kindResponses {
		buf = rs.preamble(buf[:0])
		if out.send(buf) != nil {
			r.ClientGone = true
			return
		}
	}
	first := true
	ok := true
	for ok {
		text = text[:0]
		n := 0
		thinking := g.inReasoning()
		for n < tpc {
			if n > 0 && g.inReasoning() != thinking {
				break // a chunk is reasoning or content, never both
			}
			piece, more := g.next()
			if !more {
				ok = false
				break
			}
			text = append(text, piece...)
			n++
		}
		if n == 0 {
			break
		}
		if !p.wait(g.i) {
			if !s.aborted() {
				r.ClientGone = true
			} else {
				r.Fault = "shutdown"
			}
			g.i -= n
			r.OSL = g.i
			return
		}
		buf = buf[:0]
		if malformedAt >= 0 && g.i-n <= malformedAt && malformedAt < g.i {
			buf = append(buf, `data: {"id":"`...)
			buf = append(buf, h.ID...)
			buf = append(buf, `","choices":[{"delta":{"content":`+"\n\n"...)
			r.Fault = "malformed_chunk"
			malformedAt = -1
		}
		switch {
		case j.kind == kindMessages:
			buf = rs.msg.delta(buf, thinking, unsafeString(text))
		case thinking:
			buf = append(buf, "data: "...)
			role := ""
			if first {
				role = "assistant"
			}
			buf = openai.AppendChatReasoningChunk(buf, h, role, unsafeString(text), j.includeUsage)
			buf = append(buf, "\n\n"...)
		case tmpl != nil && !first:
			buf = tmpl.append(buf, unsafeString(text))
		default:
			buf = s.appendChunk(buf, j, h, rs, first, unsafeString(text), "")
		}
		first = false
		if out.send(buf) != nil {
			r.ClientGone = true
		}
		// The clock is read for the first chunk and, when pacing, for every chunk; at
		// zero latency the last chunk's time is taken once after the loop.
		if r.FirstTokenNS == 0 || !s.lat.fast {
			now := time.Now().UnixNano()
			if r.FirstTokenNS == 0 {
				r.FirstTokenNS = now
				s.met.firstToken(c)
			}
			r.LastTokenNS = now
		}
		r.Chunks++
		r.OSL = g.i
		if r.ClientGone {
			return
		}
		if disconnectAt >= 0 && g.i > disconnectAt {
			// Put what is queued on the wire first (on the pipe path the connection
			// goroutine copies it, hence the lag), so the client sees a stream that
			// stops mid-way, not a refused request.
			r.Fault = "disconnect"
			_ = out.flush()
			time.Sleep(disconnectLag)
			conn.Close()
			return
		}
	}
	if s.lat.fast && r.Chunks > 0 {
		r.LastTokenNS = time.Now().UnixNano()
	}
	buf = buf[:0]
	if tail := g.tail(); tail != "" {
		buf = s.appendChunk(buf, j, h, rs, first, tail, "")
		first = false
	}
	r.OSL = g.reportedOSL()
	r.FinishReason = g.finish
	usage := g.usage(r.ISL, r.OSL)
	switch j.kind {
	case kindMessages:
		buf = rs.msg.finish(buf, g, usage)
	case kindResponses:
		buf = rs.finish(buf, g, usage)
	case kindCompletion:
		if first && j.echo && j.prompt != "" { // no output at all: the echo still goes out
			buf = s.appendChunk(buf, j, h, rs, true, "", "")
		}
		buf = append(buf, "data: "...)
		buf = openai.AppendCompletionChunk(buf, h, "", g.finish, j.includeUsage)
		buf = append(buf, "\n\n"...)
		if j.includeUsage {
			buf = append(buf, "data: "...)
			buf = openai.AppendCompletionUsageChunk(buf, h, usage)
			buf = append(buf, "\n\n"...)
		}
		buf = append(buf, sse.Done...)
	default:
		if first { // no content at all: still send the role
			buf = append(buf, "data: "...)
			buf = openai.AppendChatChunk(buf, h, "assistant", "", "", j.includeUsage)
			buf = append(buf, "\n\n"...)
		}
		buf = append(buf, "data: "...)
		buf = openai.AppendChatChunk(buf, h, "", "", g.finish, j.includeUsage)
		buf = append(buf, "\n\n"...)
		if j.includeUsage {
			buf = append(buf, "data: "...)
			buf = openai.AppendChatUsageChunk(buf, h, usage)
			buf = append(buf, "\n\n"...)
		}
		buf = append(buf, sse.Done...)
	}
	if out.end(buf) != nil {
		r.ClientGone = true
		return
	}
	p.emitted()
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

// chunkTemplate is a stream's content chunk split around its text, so each token costs
// one escaped append: prefix + JSON string + suffix is byte for byte what
// openai.AppendChatChunk / AppendCompletionChunk produce for a content-only chunk.
type chunkTemplate struct{ prefix, suffix []byte }

func newChunkTemplate(j *job, h openai.ChunkHeader) *chunkTemplate {
	var b []byte
	switch j.kind {
	case kindChat:
		b = openai.AppendChatChunk(nil, h, "", "§marker§", "", j.includeUsage)
	case kindCompletion:
		b = openai.AppendCompletionChunk(nil, h, "§marker§", "", j.includeUsage)
	default:
		return nil
	}
	i := bytes.Index(b, []byte(`"§marker§"`))
	if i < 0 {
		return nil
	}
	t := &chunkTemplate{prefix: append([]byte("data: "), b[:i]...), suffix: append(b[i+len(`"§marker§"`):], "\n\n"...)}
	return t
}

func (t *chunkTemplate) append(buf []byte, text string) []byte {
	buf = append(buf, t.prefix...)
	buf = openai.AppendString(buf, text)
	return append(buf, t.suffix...)
}

// appendChunk appends one content chunk as an SSE event.
func (s *Server) appendChunk(buf []byte, j *job, h openai.ChunkHeader, rs *respStream, first bool, text, finish string) []byte {
	switch j.kind {
	case kindCompletion:
		if first && j.echo {
			// echo: the prompt leads the first chunk's text, as vLLM streams it.
			text = j.prompt + text
		}
		buf = append(buf, "data: "...)
		buf = openai.AppendCompletionChunk(buf, h, text, finish, j.includeUsage)
		return append(buf, "\n\n"...)
	case kindResponses:
		return rs.delta(buf, text)
	case kindMessages:
		return rs.msg.delta(buf, false, text)
	}
	if first {
		// The role chunk goes out with the first token, so TTFT is the same
		// whichever of the two a client times.
		buf = append(buf, "data: "...)
		buf = openai.AppendChatChunk(buf, h, "assistant", "", "", j.includeUsage)
		buf = append(buf, "\n\n"...)
	}
	buf = append(buf, "data: "...)
	buf = openai.AppendChatChunk(buf, h, "", text, finish, j.includeUsage)
	return append(buf, "\n\n"...)
}

// respStream writes the Responses API event sequence.
type respStream struct {
	msg    *msgStream // the Anthropic Messages stream, for kindMessages
	h      openai.ChunkHeader
	itemID string
	seq    int
	text   strings.Builder
}

func (rs *respStream) event(buf []byte, typ string, v map[string]any) []byte {
	v["type"] = typ
	v["sequence_number"] = rs.seq
	rs.seq++
	b, _ := json.Marshal(v)
	return sse.AppendEvent(buf, typ, b)
}

func (rs *respStream) response(status string, text string, usage *openai.ResponseUsage, incomplete bool) openai.Response {
	resp := openai.Response{ID: rs.h.ID, Object: "response", CreatedAt: rs.h.Created, Status: status, Model: rs.h.Model, Output: []openai.ResponseOutput{}, Usage: usage}
	if status != "in_progress" {
		resp.Output = []openai.ResponseOutput{{Type: "message", ID: rs.itemID, Status: "completed", Role: "assistant",
			Content: []openai.ResponseContent{{Type: "output_text", Text: text, Annotations: []any{}}}}}
	}
	if incomplete {
		resp.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{"max_output_tokens"}
	}
	return resp
}

func (rs *respStream) preamble(buf []byte) []byte {
	buf = rs.event(buf, openai.EventResponseCreated, map[string]any{"response": rs.response("in_progress", "", nil, false)})
	buf = rs.event(buf, openai.EventResponseInProgress, map[string]any{"response": rs.response("in_progress", "", nil, false)})
	buf = rs.event(buf, openai.EventOutputItemAdded, map[string]any{"output_index": 0,
		"item": map[string]any{"type": "message", "id": rs.itemID, "status": "in_progress", "role": "assistant", "content": []any{}}})
	buf = rs.event(buf, openai.EventContentPartAdded, map[string]any{"item_id": rs.itemID, "output_index": 0, "content_index": 0,
		"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
	return buf
}

func (rs *respStream) delta(buf []byte, text string) []byte {
	rs.text.WriteString(text)
	buf = append(buf, "event: "+openai.EventOutputTextDelta+"\ndata: "...)
	buf = openai.AppendResponseTextDelta(buf, rs.itemID, rs.seq, text)
	rs.seq++
	return append(buf, "\n\n"...)
}

func (rs *respStream) finish(buf []byte, g *gen, u openai.Usage) []byte {
	text := rs.text.String()
	buf = rs.event(buf, openai.EventOutputTextDone, map[string]any{"item_id": rs.itemID, "output_index": 0, "content_index": 0, "text": text})
	part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	buf = rs.event(buf, openai.EventContentPartDone, map[string]any{"item_id": rs.itemID, "output_index": 0, "content_index": 0, "part": part})
	buf = rs.event(buf, openai.EventOutputItemDone, map[string]any{"output_index": 0,
		"item": map[string]any{"type": "message", "id": rs.itemID, "status": "completed", "role": "assistant", "content": []any{part}}})
	usage := &openai.ResponseUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	return rs.event(buf, openai.EventResponseCompleted, map[string]any{"response": rs.response("completed", text, usage, false)})
}

// serveWhole answers a non-streaming generation after the whole output's latency.
func (s *Server) serveWhole(ctx *fasthttp.RequestCtx, c *call, g *gen, conn net.Conn) {
	r := &c.rec
	j := g.j
	var sb, think strings.Builder
	for {
		inReasoning := g.inReasoning()
		piece, ok := g.next()
		if !ok {
			break
		}
		if inReasoning {
			think.WriteString(piece)
		} else {
			sb.WriteString(piece)
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
	sb.WriteString(g.tail())
	r.Status, r.OSL, r.FinishReason, r.Chunks = 200, g.reportedOSL(), g.finish, 0
	text := sb.String()
	usage := g.usage(r.ISL, r.OSL)
	h := openai.ChunkHeader{ID: chunkID(j.kind, c), Created: c.recv.Unix(), Model: j.model}
	var body []byte
	switch j.kind {
	case kindMessages:
		body = messagesWhole(h, g, think.String(), text, usage)
	case kindCompletion:
		out := text
		if j.echo {
			out = j.prompt + text
		}
		fin := g.finish
		body, _ = json.Marshal(openai.Completion{ID: h.ID, Object: "text_completion", Created: h.Created, Model: h.Model,
			Choices: []openai.CompletionChoice{{Text: out, FinishReason: &fin, Logprobs: json.RawMessage("null")}}, Usage: &usage})
	case kindResponses:
		rs := &respStream{h: h, itemID: "msg_" + r.RequestID}
		body, _ = json.Marshal(rs.response("completed", text, &openai.ResponseUsage{InputTokens: usage.PromptTokens,
			OutputTokens: usage.CompletionTokens, TotalTokens: usage.TotalTokens}, false))
	default:
		body, _ = json.Marshal(openai.ChatCompletion{ID: h.ID, Object: "chat.completion", Created: h.Created, Model: h.Model,
			Choices: []openai.ChatChoice{{Message: openai.ResponseMessage{Role: "assistant", Content: text, ReasoningContent: think.String()}, FinishReason: g.finish,
				Logprobs: json.RawMessage("null")}}, Usage: &usage})
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
	s.finish(c, j.ids)
}

// serveEmbeddings answers with deterministic unit vectors after TTFT-like latency.
func (s *Server) serveEmbeddings(ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand) {
	r := &c.rec
	if !s.simpleWait(c, rng, ctx.Conn()) {
		return
	}
	resp := openai.EmbeddingResponse{Object: "list", Model: j.model, Usage: openai.Usage{PromptTokens: r.ISL, TotalTokens: r.ISL}}
	vec := make([]float32, j.dims)
	for i := range j.nInputs {
		norm := 0.0
		for k := range vec {
			v := float32(rng.NormFloat64())
			vec[k] = v
			norm += float64(v) * float64(v)
		}
		inv := float32(1 / math.Sqrt(norm))
		for k := range vec {
			vec[k] *= inv
		}
		e := openai.Embedding{Object: "embedding", Index: i}
		if j.encoding == "base64" {
			b := make([]byte, 4*len(vec))
			for k, v := range vec {
				binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(v))
			}
			e.Embedding = base64.StdEncoding.EncodeToString(b)
		} else {
			e.Embedding = slices.Clone(vec)
		}
		resp.Data = append(resp.Data, e)
	}
	body, _ := json.Marshal(resp)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
	r.Status = 200
	s.finish(c, j.ids)
}

// serveRankings answers NIM rankings and Cohere/vLLM rerank shapes at once.
func (s *Server) serveRankings(ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand) {
	r := &c.rec
	if !s.simpleWait(c, rng, ctx.Conn()) {
		return
	}
	type scored struct {
		i int
		v float64
	}
	sc := make([]scored, j.nInputs)
	for i := range sc {
		sc[i] = scored{i, rng.NormFloat64() * 3}
	}
	slices.SortFunc(sc, func(a, b scored) int {
		switch {
		case a.v > b.v:
			return -1
		case a.v < b.v:
			return 1
		}
		return a.i - b.i
	})
	resp := openai.RankingResponse{ID: "rank-" + r.RequestID, Model: j.model, Usage: &openai.Usage{PromptTokens: r.ISL, TotalTokens: r.ISL}}
	for k, x := range sc {
		resp.Rankings = append(resp.Rankings, openai.Ranking{Index: x.i, Logit: x.v})
		if k < j.topN {
			resp.Results = append(resp.Results, openai.RerankResult{Index: x.i, RelevanceScore: 1 / (1 + math.Exp(-x.v))})
		}
	}
	body, _ := json.Marshal(resp)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
	r.Status = 200
	s.finish(c, j.ids)
}

// simpleWait applies TTFT-style latency (no ITL) to a non-generating request.
func (s *Server) simpleWait(c *call, rng *rand.Rand, conn net.Conn) bool {
	samp := s.lat.sampler(rng, &s.inflight, &s.streams)
	d := samp.firstToken(c.rec.ISL)
	if d <= 0 {
		return true
	}
	deadline := c.recv.Add(d)
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.abort:
		c.rec.Fault, c.rec.Status = "shutdown", 503
		s.finish(c, nil)
		return false
	}
}
