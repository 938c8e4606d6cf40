// Command truth measures perfgate's client TTFT and ITL error against a ground-truth SSE
// server, beside a minimal Go SSE client. The server, in this process (plain net/http),
// logs the time it emits each chunk of each request, and, in the same run against the same server, perfgate's load
// generator (loadgen.Run, streamed chat, closed loop) and a minimal Go SSE client
// (net/http + bufio.Scanner, a timestamp at each line read) each send the same number of
// requests. All times are read on one monotonic clock (this process's, from one origin),
// so for each request
//
//	TTFT error  = client's first-token time − server's first-token emission time
//	token error = client's time of token i − server's emission of token i (every token)
//	ITL error   = client's gap before token i − server's gap before token i
//	reported TTFT error = (client's first token − its send time) − (server's first
//	                      emission − its handler's start)
//
// The last is what a client reports as TTFT against what the server measured: it includes
// the request's way in (network, and the server's wait to read it) besides the client's
// error. The first two cannot be negative (a client cannot see a token before it was sent)
// beyond clock granularity; the ITL error is signed. It prints p50/p90/p99 of each for
// every client, and perfgate − minimal, as a markdown table beside issue 37's target:
// perfgate's TTFT p50 error within 0.1 ms of the minimal client's and ≤ 0.5 ms.
// bench/truth/run.sh runs it at autogroup nice −15; docs/performance.md ("Timing truth")
// has the last table. It is a benchmark: it asserts nothing about the numbers.
//
//	truth [-concurrency 200] [-requests 1000] [-tokens 64] [-ttft 20ms] [-itl 5ms] [-rounds 2] [-clients perfgate,perfgate-app,minimal]
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/tokenizer"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "truth:", err)
		os.Exit(1)
	}
}

// Client names (-clients).
const (
	clientPerfgate    = "perfgate"     // loadgen.Run, its default timestamps (the kernel's receive time where it has one)
	clientPerfgateApp = "perfgate-app" // loadgen.Run with AppTimestamps: the time its read returned
	clientMinimal     = "minimal"      // net/http + bufio.Scanner, time.Now at each line
)

var clientNames = []string{clientPerfgate, clientPerfgateApp, clientMinimal}

// options are the benchmark's flags.
type options struct {
	concurrency int
	requests    int // per client and round
	tokens      int
	ttft, itl   time.Duration
	rounds      int
	clients     []string
	// slack is how far before the server's emission a client's time may be and still
	// count as clock granularity (the check that errors are non-negative).
	slack time.Duration
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("truth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var clients string
	fs.IntVar(&o.concurrency, "concurrency", 200, "requests in flight (closed loop), for each client")
	fs.IntVar(&o.requests, "requests", 1000, "requests per client (split over the rounds)")
	fs.IntVar(&o.tokens, "tokens", 64, "tokens the server streams per request, one per chunk")
	fs.DurationVar(&o.ttft, "ttft", 20*time.Millisecond, "server's wait before the first token")
	fs.DurationVar(&o.itl, "itl", 5*time.Millisecond, "server's wait between tokens")
	fs.IntVar(&o.rounds, "rounds", 2, "rounds; each runs every client once, the order rotating per round")
	fs.StringVar(&clients, "clients", strings.Join(clientNames, ","), "clients to measure, comma-separated: "+strings.Join(clientNames, ", "))
	fs.DurationVar(&o.slack, "slack", 50*time.Microsecond, "clock granularity: how far before the server's emission a client's time may be without failing the run")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case o.concurrency < 1:
		return o, fmt.Errorf("-concurrency %d: want ≥ 1", o.concurrency)
	case o.rounds < 1:
		return o, fmt.Errorf("-rounds %d: want ≥ 1", o.rounds)
	case o.requests < o.rounds:
		return o, fmt.Errorf("-requests %d: want ≥ -rounds (%d)", o.requests, o.rounds)
	case o.tokens < 2:
		return o, fmt.Errorf("-tokens %d: want ≥ 2 (an ITL needs two tokens)", o.tokens)
	case o.ttft < 0 || o.itl < 0 || o.slack < 0:
		return o, errors.New("-ttft, -itl and -slack must be ≥ 0")
	}
	for c := range strings.SplitSeq(clients, ",") {
		c = strings.TrimSpace(c)
		if !slices.Contains(clientNames, c) {
			return o, fmt.Errorf("-clients: unknown client %q (want %s)", c, strings.Join(clientNames, ", "))
		}
		if !slices.Contains(o.clients, c) {
			o.clients = append(o.clients, c)
		}
	}
	return o, nil
}

// server is the ground-truth SSE server: it streams tokens chunks per request, each a
// chat.completion.chunk with one token of content, and logs the time (since origin) at
// which it hands each chunk to the kernel: taken after the chunk is formatted into the
// response buffer and just before the Flush that writes it, so a client cannot see the
// chunk before that time.
type server struct {
	origin    time.Time
	tokens    int
	ttft, itl time.Duration

	mu  sync.Mutex
	log map[string]served // by X-Request-Id
	bad atomic.Int64      // requests without an id or with a duplicate id
}

// served is the server's log of one request: when its handler started (the request's
// headers read) and when it emitted each token.
type served struct {
	arrived time.Duration
	emit    []time.Duration
	// flushed is when each token's Flush returned: flushed − emit bounds how late the
	// bytes may have left after their emission time (the server descheduled between
	// its clock reading and its write), the truth's own uncertainty.
	flushed []time.Duration
}

// tokenText is each chunk's content: one GPT-2 token (" tok"), so perfgate's count of
// each chunk is 1.
const tokenText = " tok"

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Since(s.origin)
	_, _ = io.Copy(io.Discard, r.Body)
	if r.Method != http.MethodPost {
		http.Error(w, "POST a chat completion", http.StatusMethodNotAllowed)
		return
	}
	id := r.Header.Get("X-Request-Id")
	if id == "" {
		s.bad.Add(1)
		http.Error(w, "no X-Request-Id", http.StatusBadRequest)
		return
	}
	fl, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	emit := make([]time.Duration, 0, s.tokens)
	flushed := make([]time.Duration, 0, s.tokens)
	buf := make([]byte, 0, 256)
	time.Sleep(s.ttft)
	for i := range s.tokens {
		if i > 0 {
			time.Sleep(s.itl)
		}
		buf = append(buf[:0], `data: {"id":"chatcmpl-`...)
		buf = append(buf, id...)
		buf = append(buf, `","object":"chat.completion.chunk","created":0,"model":"truth","choices":[{"index":0,"delta":{"content":"`+tokenText+`"},"finish_reason":null}]}`+"\n\n"...)
		_, _ = w.Write(buf)
		emit = append(emit, time.Since(s.origin))
		fl.Flush()
		flushed = append(flushed, time.Since(s.origin))
	}
	_, _ = io.WriteString(w, `data: {"id":"chatcmpl-`+id+`","object":"chat.completion.chunk","created":0,"model":"truth","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":32,"completion_tokens":`+strconv.Itoa(s.tokens)+`,"total_tokens":`+strconv.Itoa(32+s.tokens)+`}}`+"\n\ndata: [DONE]\n\n")
	fl.Flush()
	s.mu.Lock()
	if _, dup := s.log[id]; dup {
		s.bad.Add(1)
	}
	s.log[id] = served{arrived: arrived, emit: emit, flushed: flushed}
	s.mu.Unlock()
}

// take returns the log so far and starts a new one (between phases, when no request is
// in flight).
func (s *server) take() map[string]served {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.log
	s.log = map[string]served{}
	return l
}

// seen is one client's view of one request: the times (since origin) at which it sent
// the request (the client's own send time, as its reported TTFT counts from) and saw each
// token.
type seen struct {
	id     string
	sent   time.Duration
	tokens []time.Duration
}

// errs are one client's errors, in milliseconds.
type errs struct {
	ttft, token, itl []float64
	// reported is the client's reported TTFT (first token − its send time) − the
	// server's (first emission − handler start): client_overhead plus network, in the
	// server timings' terms, the request's way in (and the server's wait to read it)
	// included.
	reported []float64
	// flush is the server's flush time of each token (served.flushed − served.emit)
	// while this client ran: when it is not small against the errors, the machine was
	// too busy for the truth to be true.
	flush    []float64
	early    time.Duration // the most negative TTFT or token error (0 = none)
	requests int
}

// match joins a client's requests with the server's log: every request must be in the
// log with the same number of tokens, and every log entry must be a request.
func match(name string, got []seen, log map[string]served, e *errs) error {
	if len(got) != len(log) {
		return fmt.Errorf("%s: %d requests seen by the client, %d in the server's log", name, len(got), len(log))
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	for _, g := range got {
		sv, ok := log[g.id]
		emit := sv.emit
		if !ok {
			return fmt.Errorf("%s: request %q is not in the server's log", name, g.id)
		}
		if len(g.tokens) != len(emit) {
			return fmt.Errorf("%s: request %q: the client saw %d tokens, the server sent %d", name, g.id, len(g.tokens), len(emit))
		}
		e.requests++
		if len(emit) > 0 {
			e.reported = append(e.reported, ms((g.tokens[0]-g.sent)-(emit[0]-sv.arrived)))
		}
		for i, t := range g.tokens {
			d := t - emit[i]
			e.early = min(e.early, d)
			if i == 0 {
				e.ttft = append(e.ttft, ms(d))
			}
			e.token = append(e.token, ms(d))
			if i < len(sv.flushed) {
				e.flush = append(e.flush, ms(sv.flushed[i]-emit[i]))
			}
			if i > 0 {
				e.itl = append(e.itl, ms((t-g.tokens[i-1])-(emit[i]-emit[i-1])))
			}
		}
	}
	return nil
}

// runPerfgate sends n requests through loadgen.Run and returns what it saw, on the
// origin's clock.
func runPerfgate(ctx context.Context, url string, origin time.Time, o options, n int, app bool, tok *tokenizer.Tokenizer) ([]seen, error) {
	cfg := loadgen.Config{
		Target: loadgen.Target{URLs: []string{url}},
		Workload: loadgen.Workload{
			ISL:  distribution.MustSpec("fixed:32"),
			OSL:  distribution.MustSpec(fmt.Sprintf("fixed:%d", o.tokens)),
			Seed: 7,
		},
		Load:      loadgen.Load{Concurrency: o.concurrency},
		Stop:      loadgen.Stop{Requests: n},
		Recording: loadgen.Recording{AppTimestamps: app},
	}
	out, err := loadgen.Run(ctx, cfg, tok, nil)
	if err != nil {
		return nil, err
	}
	base := out.Start.Sub(origin) // both monotonic readings: the run clock on the origin's
	got := make([]seen, 0, len(out.Records))
	for _, r := range out.Records {
		if r.ErrorKind != "" {
			return nil, fmt.Errorf("request %s failed: %s %s", r.RequestID, r.ErrorKind, r.Error)
		}
		s := seen{id: r.RequestID, sent: base + r.Sent}
		for _, c := range r.Chunks {
			if c.Tokens > 0 {
				s.tokens = append(s.tokens, base+c.T)
			}
		}
		got = append(got, s)
	}
	return got, nil
}

// runMinimal is the minimal SSE client: conc goroutines, each sending requests until n
// are sent, reading the body with bufio.Scanner and taking the time at each line read.
func runMinimal(ctx context.Context, url string, origin time.Time, o options, n int, prefix string) ([]seen, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: o.concurrency, MaxConnsPerHost: o.concurrency, DisableCompression: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	body := []byte(`{"model":"truth","stream":true,"max_completion_tokens":` + strconv.Itoa(o.tokens) + `,"messages":[{"role":"user","content":"hello"}]}`)
	content := []byte(`"delta":{"content":"`)
	var next atomic.Int64
	got := make([]seen, n)
	errc := make(chan error, o.concurrency)
	var wg sync.WaitGroup
	for range min(o.concurrency, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				id := prefix + strconv.Itoa(i)
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
				if err != nil {
					errc <- err
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Request-Id", id)
				sent := time.Since(origin)
				resp, err := hc.Do(req)
				if err != nil {
					errc <- err
					return
				}
				s := seen{id: id, sent: sent, tokens: make([]time.Duration, 0, o.tokens)}
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					t := time.Since(origin)
					line := sc.Bytes()
					if bytes.HasPrefix(line, []byte("data: [DONE]")) {
						break
					}
					if bytes.HasPrefix(line, []byte("data: ")) && bytes.Contains(line, content) {
						s.tokens = append(s.tokens, t)
					}
				}
				err = sc.Err()
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("request %s: HTTP %d", id, resp.StatusCode)
				}
				if err != nil {
					errc <- err
					return
				}
				got[i] = s
			}
		})
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	return got, nil
}

// run starts the server, runs every client for every round, and prints the table.
func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	tok, err := tokenizer.Load("gpt2")
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	origin := time.Now()
	srv := &server{origin: origin, tokens: o.tokens, ttft: o.ttft, itl: o.itl, log: map[string]served{}}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	url := "http://" + ln.Addr().String()

	ctx := context.Background()
	res := map[string]*errs{}
	for _, c := range o.clients {
		res[c] = &errs{}
	}
	for round := range o.rounds {
		n := o.requests / o.rounds
		if round < o.requests%o.rounds {
			n++
		}
		for k := range o.clients {
			c := o.clients[(k+round)%len(o.clients)] // rotate the order: no client always goes first
			var got []seen
			switch c {
			case clientPerfgate, clientPerfgateApp:
				got, err = runPerfgate(ctx, url, origin, o, n, c == clientPerfgateApp, tok)
			case clientMinimal:
				got, err = runMinimal(ctx, url, origin, o, n, fmt.Sprintf("min-%d-", round))
			}
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", c, round+1, err)
			}
			if err := match(c, got, srv.take(), res[c]); err != nil {
				return fmt.Errorf("round %d: %w", round+1, err)
			}
		}
	}
	if b := srv.bad.Load(); b > 0 {
		return fmt.Errorf("the server saw %d requests without an X-Request-Id or with a repeated one", b)
	}
	printTable(stdout, o, res)
	return checkEarly(o, res)
}

// checkEarly fails when a client saw a token before the server emitted it by more than
// the clock's granularity (o.slack): then the two times are not on one clock, and no
// error in the table means anything.
func checkEarly(o options, res map[string]*errs) error {
	for _, c := range o.clients {
		if e := res[c]; e.early < -o.slack {
			return fmt.Errorf("%s saw a token %v before the server emitted it (more than -slack %v): the clocks are not one clock", c, -e.early, o.slack)
		}
	}
	return nil
}

// Targets (issue 37): perfgate's TTFT p50 error within targetDiff of the minimal
// client's, and at most targetAbs.
const (
	targetDiffMS = 0.1
	targetAbsMS  = 0.5
)

var quantiles = []float64{0.5, 0.9, 0.99}

func printTable(w io.Writer, o options, res map[string]*errs) {
	fmt.Fprintf(w, "Timing truth: %d streamed requests per client at concurrency %d (closed loop), %d tokens each, server TTFT %v, ITL %v, %d round(s).\n",
		o.requests, o.concurrency, o.tokens, o.ttft, o.itl, o.rounds)
	fmt.Fprintf(w, "Errors in ms: client time − server emission time (TTFT, every token), client gap − server gap (ITL),\n")
	fmt.Fprintf(w, "client's TTFT (from its send time) − server's TTFT (from its handler's start) (reported TTFT: includes the request's way in).\n")
	fmt.Fprintf(w, "Server flush: the server's time from its emission stamp to its Flush's return while that client ran, per token; the truth's\n")
	fmt.Fprintf(w, "own uncertainty (a server descheduled before its write makes the client look late): large against the errors = too busy a machine.\n\n")
	fmt.Fprintln(w, "| client | error | p50 | p90 | p99 | n |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|")
	q := func(x []float64) []float64 {
		out := make([]float64, len(quantiles))
		s := slices.Clone(x)
		slices.Sort(s)
		for i, p := range quantiles {
			out[i] = metric.QuantileSorted(s, p)
		}
		return out
	}
	row := func(client, what string, x []float64) {
		v := q(x)
		fmt.Fprintf(w, "| %s | %s | %.3f | %.3f | %.3f | %d |\n", client, what, v[0], v[1], v[2], len(x))
	}
	for _, c := range o.clients {
		e := res[c]
		row(c, "TTFT", e.ttft)
		row(c, "token", e.token)
		row(c, "ITL", e.itl)
		row(c, "reported TTFT", e.reported)
		row(c, "server flush", e.flush)
	}
	m, ok := res[clientMinimal]
	if !ok {
		return
	}
	for _, c := range []string{clientPerfgate, clientPerfgateApp} {
		p, ok := res[c]
		if !ok {
			continue
		}
		for _, k := range []struct {
			what string
			a, b []float64
		}{{"TTFT", p.ttft, m.ttft}, {"token", p.token, m.token}, {"ITL", p.itl, m.itl}, {"reported TTFT", p.reported, m.reported}} {
			a, b := q(k.a), q(k.b)
			fmt.Fprintf(w, "| %s − minimal | %s | %+.3f | %+.3f | %+.3f | |\n", c, k.what, a[0]-b[0], a[1]-b[1], a[2]-b[2])
		}
	}
	if p, ok := res[clientPerfgate]; ok {
		pm, mm := q(p.ttft)[0], q(m.ttft)[0]
		verdict := "met"
		if pm-mm > targetDiffMS || pm > targetAbsMS {
			verdict = "not met"
		}
		fmt.Fprintf(w, "\nTarget: perfgate's TTFT p50 error within %.1f ms of the minimal client's and ≤ %.1f ms: %.3f ms (minimal %.3f ms, difference %+.3f ms): %s.\n",
			targetDiffMS, targetAbsMS, pm, mm, pm-mm, verdict)
	}
}
