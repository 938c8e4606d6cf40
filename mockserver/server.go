package mockserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// Server is an OpenAI-compatible mock LLM server. Create it with [New], then [Server.Start];
// [Server.Close] drains in-flight responses and writes the recording. All methods are safe
// for concurrent use.
type Server struct {
	cfg      Config
	tok      *tokenizer.Tokenizer
	in       inputs // what the kinds parse and count requests with
	gen      *generator
	lat      *latencyModel
	modelSet *modelSet // the served model names
	lengths  lengths   // how long each generation is
	faults   injector  // the faults injected
	logw     io.Writer

	fs     *fasthttp.Server
	ln     net.Listener
	guard  *guardListener
	url    string
	start  time.Time
	served chan error

	rec   *recorder
	agg   *aggregator
	met   *metrics
	sched *scheduler
	late  lateness

	seq      atomic.Uint64
	inflight atomic.Int64
	streams  atomic.Int64
	wg       sync.WaitGroup
	abort    chan struct{}
	closing  atomic.Bool
	live     liveConns // connections taken over by streams
	pending  sync.Map  // raw connection → the stream waiting for its hijack (direct.go)

	occMu sync.Mutex
	occ   map[uint64]uint32

	closeOnce sync.Once
	closeErr  error
	started   atomic.Bool
	startWall time.Time
}

// New builds a server from options: it validates the configuration, loads the tokenizer
// and prepares the output vocabulary. It does not listen yet.
func New(opts ...Option) (*Server, error) {
	var o options
	for _, op := range opts {
		op.apply(&o)
	}
	cfg := o.cfg
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tok := o.tok
	if tok == nil {
		var err error
		if tok, err = tokenizer.Load(cfg.tokenizerRef()); err != nil {
			return nil, fmt.Errorf("mockserver: tokenizer %q: %w", cfg.tokenizerRef(), err)
		}
	}
	gen, err := newGenerator(tok)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, tok: tok, gen: gen, lat: newLatencyModel(&cfg), modelSet: newModelSet(&cfg), lengths: newLengths(&cfg), faults: injector{cfg.Faults}, logw: o.logw,
		abort: make(chan struct{}), occ: map[uint64]uint32{}, served: make(chan error, 1)}
	s.in = inputs{cfg: &s.cfg, tok: tok, memo: newEncodeMemo()}
	s.met = newMetrics(s.modelSet.first(), s.inflight.Load, s.streams.Load, cfg.PrefixCache)
	s.agg = newAggregator(tok.VocabSize())
	return s, nil
}

// InFlight returns the number of requests being served: received and not yet
// recorded (nor counted in /metrics).
func (s *Server) InFlight() int { return int(s.inflight.Load()) }

// Config returns the configuration the server runs with.
func (s *Server) Config() Config { return s.cfg }

// Tokenizer returns the tokenizer the server counts and generates with.
func (s *Server) Tokenizer() *tokenizer.Tokenizer { return s.tok }

func (s *Server) logf(format string, a ...any) {
	if s.logw != nil {
		fmt.Fprintf(s.logw, "mockserver: "+format+"\n", a...)
	}
}

// Start listens on Config.Host:Config.Port (127.0.0.1 and a free port by default) and
// serves in the background. It opens the recording file, if any.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", net.JoinHostPort(s.cfg.host(), strconv.Itoa(s.cfg.Port)))
	if err != nil {
		return fmt.Errorf("mockserver: listen: %w", err)
	}
	return s.serveOn(ln)
}

func (s *Server) serveOn(ln net.Listener) error {
	if !s.started.CompareAndSwap(false, true) {
		ln.Close()
		return errors.New("mockserver: already started")
	}
	rec, err := newRecorder(s.cfg.RecordFile, orInt(s.cfg.RecordQueue, DefaultRecordQueue), !s.cfg.DiscardRecords, s.agg)
	if err != nil {
		ln.Close()
		return err
	}
	s.rec = rec
	if s.cfg.Batch.Enabled && !s.cfg.Fast {
		s.sched = newScheduler(s.cfg.Batch, &s.lat.scale)
	}
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		ln.Close()
		return fmt.Errorf("mockserver: listener is a %T, want TCP", ln)
	}
	s.guard = newGuardListener(tl, s, s.cfg.MaxConnections)
	s.ln = s.guard
	s.url = "http://" + ln.Addr().String()
	if s.cfg.TLSCert != "" || s.cfg.TLSKey != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCert, s.cfg.TLSKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("mockserver: tls: %w", err)
		}
		// Streams cannot take a TLS connection over (direct.go): they go through
		// fasthttp's body writer instead.
		s.ln = tls.NewListener(s.guard, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		s.url = "https://" + ln.Addr().String()
	}
	s.start = time.Now()
	s.startWall = s.start
	s.fs = &fasthttp.Server{
		Handler:                       s.handle,
		ErrorHandler:                  s.handleError,
		Name:                          serverName,
		MaxRequestBodySize:            orInt(s.cfg.BodyLimit, DefaultBodyLimit),
		ReadTimeout:                   orDur(s.cfg.ReadTimeout, DefaultReadTimeout),
		IdleTimeout:                   orDur(s.cfg.IdleTimeout, DefaultIdleTimeout),
		ReadBufferSize:                readBufferSize,
		WriteBufferSize:               2048,
		NoDefaultServerHeader:         false,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: false,
		CloseOnShutdown:               true,
		Logger:                        fhLogger{s},
		ReduceMemoryUsage:             false,
		KeepHijackedConns:             true, // streams take their connection over, then hand it back (direct.go)
		// fasthttp would parse a multipart body itself and then hand PostBody a form
		// marshalled again from a map: fields in random order, so neither the bytes
		// nor the seed drawn from them were the client's. The upload kinds read the
		// body as sent (readForm).
		DisablePreParseMultipartForm: true,
		ConnState:                    s.connState,
	}
	go func() { s.served <- s.fs.Serve(s.ln) }()
	s.logf("listening on %s (tokenizer %s, seed %d)", s.url, s.tok.Name(), s.cfg.Seed)
	return nil
}

// URL returns the server's base URL, "http://127.0.0.1:PORT" ("https://…" when it
// serves TLS; OpenAI clients take URL()+"/v1" as their base URL). Empty before Start.
func (s *Server) URL() string { return s.url }

// SetLatencyScale sets Config.LatencyScale while the server runs (0 = 1): every latency
// drawn from then on is multiplied by f. A benchmark that reuses one server for many
// runs sets each run's speed with it.
func (s *Server) SetLatencyScale(f float64) { s.lat.scale.set(f) }

// BaseURL returns URL()+"/v1".
func (s *Server) BaseURL() string { return s.url + "/v1" }

// Addr returns the listening address, nil before Start.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// readBufferSize is fasthttp's per-connection read buffer.
const readBufferSize = 4096

// Close stops accepting connections, lets in-flight responses finish for up to
// Config.GracePeriod (then cuts them), flushes and closes the recording and writes
// FILE.summary.json. After Close the number of records equals the number of requests
// answered. Close is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown(context.Background()) })
	return s.closeErr
}

func (s *Server) shutdown(ctx context.Context) error {
	if !s.started.Load() {
		return nil
	}
	s.closing.Store(true)
	grace := orDur(s.cfg.GracePeriod, DefaultGracePeriod)
	gctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.fs.ShutdownWithContext(gctx) }()
	// fasthttp closes the idle connections it accepted; the ones streams handed back
	// are closed here as they go idle, until every handler has finished.
	sweepDone := make(chan struct{})
	defer close(sweepDone)
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			s.live.close(true)
			select {
			case <-sweepDone:
				return
			case <-t.C:
			}
		}
	}()
	var errs []error
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, err)
		}
	case <-gctx.Done():
	}
	// Streams that took their connection over are not fasthttp's to wait for.
	for s.streams.Load() > 0 && gctx.Err() == nil {
		select {
		case <-gctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
	close(s.abort) // cut whatever is still streaming
	// Wait for every handler to hand in its record. A stream stuck writing to a client
	// that stopped reading is freed by closing its connection.
	waited := make(chan struct{})
	go func() { s.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(time.Second):
		s.live.close(false)
		select {
		case <-waited:
		case <-time.After(grace + 5*time.Second):
			errs = append(errs, errors.New("mockserver: handlers did not finish after the grace period"))
		}
	}
	s.live.close(false) // keep-alive connections handed back to fasthttp after it shut down
	if s.sched != nil {
		s.sched.stop()
	}
	if err := s.rec.close(s.Summary); err != nil {
		errs = append(errs, err)
	}
	if s.cfg.RecordFile != "" {
		s.logf("recorded %d requests to %s (+ .summary.json)", s.rec.count(), s.cfg.RecordFile)
	}
	return errors.Join(errs...)
}

// Serve runs a server with cfg until ctx is cancelled, then shuts down gracefully (the
// grace period, then the recording and summary). Log lines go to logw (may be nil). It is
// what `perfgate mock` runs; signal handling is the caller's.
func Serve(ctx context.Context, cfg Config, logw io.Writer) error {
	cfg.DiscardRecords = true // nobody can call Records: keep nothing in memory
	s, err := New(WithConfig(cfg), WithLog(logw))
	if err != nil {
		return err
	}
	if err := s.Start(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case err := <-s.served:
		if err != nil {
			s.Close()
			return fmt.Errorf("mockserver: serve: %w", err)
		}
	}
	s.logf("shutting down")
	return s.Close()
}

// Records returns the records of the requests served so far (all of them after Close),
// in completion order; rejected requests are in [Server.RejectedRecords]. With
// Config.RecordFile they are read back from the file (the server keeps none in memory);
// without one they are kept in memory unless Config.DiscardRecords (then nil).
func (s *Server) Records() []record.Server {
	if s.rec == nil {
		return nil
	}
	recs, err := s.rec.read(false)
	if err != nil {
		s.logf("%v", err)
	}
	return recs
}

// RejectedRecords returns the records of the requests refused so far (4xx for bad input,
// 503 over --max-connections), in completion order: the content of
// FILE.rejected.jsonl. Kept as [Server.Records] are.
func (s *Server) RejectedRecords() []record.Server {
	if s.rec == nil {
		return nil
	}
	recs, err := s.rec.read(true)
	if err != nil {
		s.logf("%v", err)
	}
	return recs
}

// Summary returns the summary of what was recorded so far (the content of
// FILE.summary.json after Close).
func (s *Server) Summary() record.ServerSummary {
	var sum record.ServerSummary
	if s.rec == nil {
		sum = s.agg.summary(s.decodeOne)
	} else {
		s.rec.mu.Lock()
		sum = s.agg.summary(s.decodeOne)
		s.rec.mu.Unlock()
	}
	sum.Tokenizer, sum.TokenizerFingerprint, sum.Seed = s.tok.Name(), s.tok.Fingerprint(), s.cfg.Seed
	if !s.startWall.IsZero() {
		sum.Started = float64(s.startWall.UnixNano()) / 1e9
		sum.Ended = float64(time.Now().UnixNano()) / 1e9
	}
	return sum
}

func (s *Server) decodeOne(id int) string { return s.tok.Decode([]int{id}, false) }

// Lateness reports emission lateness quantiles (p in [0,1]) in microseconds: how long
// after its scheduled deadline each chunk was written. Resolution is a quarter octave.
func (s *Server) Lateness(ps ...float64) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = s.late.quantile(p)
	}
	return out
}

// ResetLateness clears the lateness histogram.
func (s *Server) ResetLateness() { s.late.reset() }

// reqRNG returns the request's generator, held in c: seeded by the server seed, a hash of the body
// and how many identical bodies came before, so a seed reproduces every output however
// requests interleave. A request that sends "seed" gets a generator from the server
// seed and that value alone (same seed, same output, whatever else it asks).
func (s *Server) reqRNG(c *call, body []byte, seed *int64) *rand.Rand {
	if seed != nil {
		c.pcg.Seed(s.cfg.Seed, uint64(*seed)*0x9E3779B97F4A7C15+1)
	} else {
		h := crc64.Checksum(body, crcTable)
		s.occMu.Lock()
		n := s.occ[h]
		if len(s.occ) < 1<<20 {
			s.occ[h] = n + 1
		}
		s.occMu.Unlock()
		c.pcg.Seed(s.cfg.Seed^h, uint64(n)<<1|1)
	}
	c.rnd = *rand.New(&c.pcg)
	return &c.rnd
}

var crcTable = crc64.MakeTable(crc64.ECMA)

// call is one recorded request in flight.
type call struct {
	rec  record.Server
	recv time.Time // with the monotonic reading: deadlines are computed from it
	// The vLLM-named gauges' accounting (metrics.admit, firstToken, release).
	kv                int64
	admitted, started bool
	// The request's random source (see reqRNG), kept here rather than allocated apart.
	pcg rand.PCG
	rnd rand.Rand
	// The request's job and generation, kept here too: one object per request for the
	// garbage collector instead of three.
	job job
	gen gen
}

// begin starts accounting for one recorded request.
func (s *Server) begin(ctx *fasthttp.RequestCtx) *call {
	s.wg.Add(1)
	s.inflight.Add(1)
	now := time.Now()
	seq := s.seq.Add(1)
	id := clientRequestID(ctx.Request.Header.Peek("X-Request-Id"))
	if id == "" {
		var b [24]byte // one allocation: the id itself
		id = string(strconv.AppendUint(append(b[:0], "req-"...), seq, 10))
	} else {
		ctx.Response.Header.Set("X-Request-Id", id)
	}
	c := &call{recv: now, rec: record.Server{
		TS: float64(now.UnixNano()) / 1e9, RecvNS: now.UnixNano(), Seq: seq,
		RequestID: id, Endpoint: pathString(ctx.Path()),
		TokenizationMode: record.ModeNone,
	}}
	if h := s.cfg.SessionHeader; h != "" {
		c.rec.Session, c.rec.Peer = clientRequestID(ctx.Request.Header.Peek(h)), ctx.RemoteAddr().String()
	}
	return c
}

// maxRequestIDLen bounds a client's X-Request-Id kept in the recording.
const maxRequestIDLen = 128

// clientRequestID returns the client's X-Request-Id if it is a usable id (1 to
// maxRequestIDLen printable ASCII characters), so the server's recording joins the client's
// records by id; otherwise "" and the server numbers the request itself.
func clientRequestID(h []byte) string {
	if len(h) == 0 || len(h) > maxRequestIDLen {
		return ""
	}
	for _, c := range h {
		if c <= ' ' || c > '~' {
			return ""
		}
	}
	return string(h)
}

// finish hands the record to the recorder and the metrics.
func (s *Server) finish(c *call, ids []int) {
	r := &c.rec
	s.met.release(c)
	s.met.observe(r, time.Now())
	s.inflight.Add(-1)
	s.rec.put(recItem{rec: *r, ids: ids})
	s.wg.Done()
}

func (s *Server) writeError(ctx *fasthttp.RequestCtx, e *apiError) {
	var body []byte
	if k, ok := kindOf(string(ctx.Path())).(errorEnveloper); ok {
		body = k.errorBody(e)
	} else {
		body, _ = json.Marshal(openai.NewError(e.typ, e.msg, e.param, e.code))
	}
	ctx.SetStatusCode(e.status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

// reject answers and records a refused request.
func (s *Server) reject(ctx *fasthttp.RequestCtx, c *call, e *apiError) {
	s.writeError(ctx, e)
	c.rec.Status, c.rec.Rejected, c.rec.Param = e.status, e.reason, e.param
	s.finish(c, nil)
}

// handleError answers what fasthttp could not parse (body too large, bad request line).
// Connection-level errors that carried no whole request (a reset or timeout while
// waiting for or reading a request) are not requests: they are answered if the
// connection still takes it and recorded nowhere.
func (s *Server) handleError(ctx *fasthttp.RequestCtx, err error) {
	if connLevel(err) {
		ctx.SetConnectionClose()
		e := &apiError{status: 400, typ: openai.ErrInvalidRequest, msg: "connection error before a whole request arrived: " + err.Error()}
		if isTimeout(err) {
			e = &apiError{status: 408, typ: openai.ErrInvalidRequest, msg: "request not received within the read timeout (--read-timeout)"}
		}
		s.writeError(ctx, e) // fasthttp writes an answer in any case; usually nobody reads it
		return
	}
	c := s.begin(ctx)
	var e *apiError
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		e = &apiError{status: 413, typ: openai.ErrInvalidRequest, reason: "body_too_large", param: "body",
			msg: fmt.Sprintf("request body is larger than this server's limit of %d bytes", orInt(s.cfg.BodyLimit, DefaultBodyLimit))}
	} else {
		e = &apiError{status: 400, typ: openai.ErrInvalidRequest, reason: "bad_http", msg: "malformed HTTP request: " + err.Error()}
	}
	s.reject(ctx, c, e)
	ctx.SetConnectionClose()
	if e.status == 413 {
		s.lingerAnswer(ctx)
	}
}

// Lingering close of a connection whose body the server refuses to read: the answer is
// written, the write side shut, and what the client still sends read and discarded for
// up to lingerTime or lingerBytes, so the client's kernel does not receive a reset that
// would discard the answer before the client reads it.
const (
	lingerTime  = 2 * time.Second
	lingerBytes = 256 << 20
)

func (s *Server) lingerAnswer(ctx *fasthttp.RequestCtx) {
	tc, ok := ctx.Conn().(*handedBack)
	if !ok {
		return // fasthttp answers and closes
	}
	ctx.Response.Header.SetServer(serverName)
	bw := bufio.NewWriter(tc)
	if ctx.Response.Write(bw) != nil || bw.Flush() != nil {
		return
	}
	ctx.Response.Reset() // answered: what fasthttp writes next goes nowhere
	ctx.Response.SetStatusCode(413)
	ctx.SetConnectionClose()
	_ = tc.CloseWrite()
	_ = tc.SetReadDeadline(time.Now().Add(lingerTime))
	_, _ = io.Copy(io.Discard, io.LimitReader(tc.TCPConn, lingerBytes))
}

// connLevel reports whether err is the connection failing (reset, closed, timed out)
// rather than a malformed or oversized request.
func connLevel(err error) bool {
	if isTimeout(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	if s.aborted() {
		// Past the grace period: answer, but outside the recording that is being closed.
		ctx.SetConnectionClose()
		s.writeError(ctx, &apiError{status: 503, typ: openai.ErrOverloaded, msg: "server shutting down"})
		return
	}
	path := pathString(ctx.Path())
	k := kindOf(path)
	if k == nil {
		s.serveProbe(ctx, path)
		return
	}
	c := s.begin(ctx)
	if !ctx.IsPost() {
		s.reject(ctx, c, &apiError{status: 405, typ: openai.ErrInvalidRequest, reason: "method_not_allowed",
			msg: fmt.Sprintf("method %s not allowed on %s; use POST", ctx.Method(), path)})
		return
	}
	if !s.authorized(ctx, keyHeader(k)) {
		s.reject(ctx, c, &apiError{status: 401, typ: openai.ErrAuthentication, reason: "bad_api_key", code: "invalid_api_key",
			msg: "incorrect or missing API key"})
		return
	}
	if e, name := s.faults.notReady(time.Since(s.start)); e != nil {
		s.fault(ctx, c, e, name)
		return
	}
	body := ctx.PostBody()
	j, e := s.parse(k, body, ctx.Request.Header.ContentType(), &c.rec, &c.job)
	if e != nil {
		s.reject(ctx, c, e)
		return
	}
	rng := s.reqRNG(c, body, j.seed)
	if _, ok := k.(generative); ok {
		s.met.admit(c, j.ids, j.maxOut)
		pc := &s.cfg.PrefixCache
		c.rec.CachedTokens = s.met.prefixLookup(j.ids, pc.Fault > 0 && rng.Float64() < pc.Fault)
	}
	if e, name := s.faults.error(rng); e != nil {
		s.fault(ctx, c, e, name)
		return
	}
	s.slowFirstByte(c, rng)
	k.serve(s, ctx, c, j, rng)
}

// versionBody answers GET /version, which vLLM serves ({"version": "0.11.0"}) and
// clients probe for the server's identity. It names the mock and not perfgate's
// version, so that a baseline's identity does not differ from a run's for an upgrade.
const versionBody = `{"version":"` + serverName + `"}`

// probe is a path the server answers outside the workload: its health, identity,
// metrics, models and admin calls. A request to one is neither recorded nor counted
// as a request.
type probe struct {
	method string // the method it answers ("" = any); another gets 405
	what   string // what the answer is, for the documentation (Markdown: `code`)
	handle func(*Server, *fasthttp.RequestCtx)
}

// healthWhat is what the health probes answer.
const healthWhat = "`{\"status\":\"ok\"}`; 503 while starting or shutting down"

// modelPattern is the probes key of /v1/models/{model}, matched by [modelPath].
const modelPattern = "/v1/models/{model}"

// probes maps each path the server answers outside the workload to its probe. With
// [routes] it is everything the server answers; doc.go's endpoint list is generated
// from both (go test ./mockserver -run TestDocEndpoints -update).
var probes = map[string]probe{
	"/health":             {"", healthWhat, (*Server).handleHealth},
	"/healthz":            {"", healthWhat, (*Server).handleHealth},
	"/v1/health":          {"", healthWhat, (*Server).handleHealth},
	"/metrics":            {"", "Prometheus metrics", (*Server).handleMetrics},
	"/version":            {"GET", "`" + versionBody + "`, as vLLM answers", (*Server).handleVersion},
	openai.PathModels:     {"GET", "the models served, as vLLM lists them", (*Server).handleModels},
	modelPattern:          {"GET", "the model, or vLLM's 404 for a model not served", (*Server).handleModelPath},
	"/reset_prefix_cache": {"POST", "empties the prefix cache, as vLLM's dev mode does", (*Server).handleResetPrefixCache},
}

// serveProbe answers a request to a path that is no API: its probe, else 405 on a
// probe's path with another method, else 404. It is no workload (a probe, or a client
// with a wrong URL): it is not recorded, nor counted in the summary or in the
// requests of /metrics, whose endpoint label would grow with every path a client
// makes up; perfgate_mock_errors_total counts the errors by reason.
func (s *Server) serveProbe(ctx *fasthttp.RequestCtx, path string) {
	p, known := probes[path]
	if _, ok := modelPath(path); ok && !known {
		p, known = probes[modelPattern], true
	}
	if known && (p.method == "" || string(ctx.Method()) == p.method) {
		p.handle(s, ctx)
		return
	}
	e := &apiError{status: 404, typ: openai.ErrNotFound, reason: "not_found", code: "unknown_url",
		msg: fmt.Sprintf("unknown request URL: %s %s", ctx.Method(), path)}
	if known {
		e = &apiError{status: 405, typ: openai.ErrInvalidRequest, reason: "method_not_allowed",
			msg: fmt.Sprintf("method %s not allowed on %s", ctx.Method(), path)}
	}
	s.writeError(ctx, e)
	s.met.unrouted(e.reason)
}

func (s *Server) handleMetrics(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("text/plain; version=0.0.4")
	_ = s.met.write(ctx)
}

func (s *Server) handleVersion(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	ctx.SetBodyString(versionBody)
}

func (s *Server) handleHealth(ctx *fasthttp.RequestCtx) {
	f := s.cfg.Faults
	since := time.Since(s.start)
	ctx.SetContentType("application/json")
	if since < f.ModelsReadyDelay || since < f.InferenceReadyDelay || s.closing.Load() {
		ctx.SetStatusCode(503)
		ctx.SetBodyString(`{"status":"starting"}`)
		return
	}
	ctx.SetBodyString(`{"status":"ok"}`)
}

// authorized reports whether a request carries the configured API key: as "Bearer
// KEY" in Authorization, or as the bare KEY in Config.AuthHeader when that names
// another header (AIPerf's --auth-header-name); an API with a key header of its own
// (alt, e.g. the Messages API's X-Api-Key) may also send it there. No key configured:
// every request is authorized.
func (s *Server) authorized(ctx *fasthttp.RequestCtx, alt string) bool {
	key := s.cfg.APIKey
	if key == "" {
		return true
	}
	if h := s.cfg.AuthHeader; h != "" && !strings.EqualFold(h, "Authorization") {
		return string(ctx.Request.Header.Peek(h)) == key
	}
	return string(ctx.Request.Header.Peek("Authorization")) == "Bearer "+key ||
		alt != "" && string(ctx.Request.Header.Peek(alt)) == key
}

func (s *Server) handleModels(ctx *fasthttp.RequestCtx) {
	if s.cfg.DisableModels {
		s.writeError(ctx, &apiError{status: 404, typ: openai.ErrNotFound, msg: "the models endpoint is disabled (--disable-models-endpoint)"})
		return
	}
	if !s.authorized(ctx, "") {
		s.writeError(ctx, &apiError{status: 401, typ: openai.ErrAuthentication, code: "invalid_api_key", msg: "incorrect or missing API key"})
		return
	}
	if d := s.cfg.Faults.ModelsReadyDelay; d > 0 && time.Since(s.start) < d {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(orInt(s.cfg.Faults.RetryAfterSeconds, DefaultRetryAfterSecs)))
		s.writeError(ctx, &apiError{status: 503, typ: openai.ErrOverloaded, msg: "models are loading; retry later"})
		return
	}
	list := openai.ModelList{Object: "list"}
	for _, m := range s.modelSet.list() {
		list.Data = append(list.Data, openai.Model{ID: m, Object: "model", Created: s.start.Unix(), OwnedBy: "perfgate"})
	}
	b, _ := json.Marshal(list)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// fhLogger routes fasthttp's own log lines to the server's log writer (never stdout).
type fhLogger struct{ s *Server }

func (l fhLogger) Printf(format string, args ...any) { l.s.logf("fasthttp: "+format, args...) }
