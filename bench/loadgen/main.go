// Command loadgen-bench measures perfgate's load generator against peers in one run.
// bench/loadgen/run.sh drives it: a trivial HTTP server, a bare fasthttp client loop,
// perfgate's loadgen.Run with recording on, and a scale run of concurrent SSE streams
// (memory per stream, ITL error against the server's own emission times, CPU per
// token).
//
//	loadgen-bench server  -addr 127.0.0.1:18080 [-stream -itl 1s -tokens 10] [-reuseport]
//	loadgen-bench bare    -url http://127.0.0.1:18080/v1/chat/completions -c 64 -d 5s
//	loadgen-bench loadgen -url http://127.0.0.1:18080 -c 64 -d 5s -record /tmp/rec.jsonl
//	loadgen-bench streams -url http://127.0.0.1:18081 -n 18000 -sources 4 [-emits=false]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
	"github.com/valyala/fasthttp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: loadgen-bench server|bare|loadgen|streams [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "server":
		err = serve(os.Args[2:])
	case "bare":
		err = bare(os.Args[2:])
	case "evbare":
		err = evbare(os.Args[2:])
	case "loadgen":
		err = runLoadgen(os.Args[2:])
	case "streams":
		err = streams(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen-bench:", err)
		os.Exit(1)
	}
}

// trivialBody is a ~200-byte chat completion.
var trivialBody = []byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}`)

type emitLog struct {
	mu sync.Mutex
	m  map[string][]int64 // request id → unix ns before and after each content chunk's write, flattened
}

func serve(args []string) error {
	fs := flag.NewFlagSet("server", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:18080", "listen address")
	stream := fs.Bool("stream", false, "stream SSE tokens instead of the trivial JSON body")
	itl := fs.Duration("itl", time.Second, "gap between streamed tokens")
	tokens := fs.Int("tokens", 10, "tokens per stream")
	reuse := fs.Bool("reuseport", false, "listen with SO_REUSEPORT (several servers share the port)")
	_ = fs.Parse(args)
	var lc net.ListenConfig
	if *reuse {
		lc.Control = reusePort
	}
	ln, err := lc.Listen(context.Background(), "tcp", *addr)
	if err != nil {
		return err
	}
	logs := &emitLog{m: map[string][]int64{}}
	h := func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/emits" {
			logs.mu.Lock()
			b, _ := json.Marshal(logs.m)
			logs.m = map[string][]int64{}
			logs.mu.Unlock()
			ctx.SetBody(b)
			return
		}
		if !*stream {
			ctx.SetContentType("application/json")
			ctx.SetBody(trivialBody)
			return
		}
		id := string(ctx.Request.Header.Peek("X-Request-Id"))
		start := time.Now()
		ctx.SetContentType("text/event-stream")
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			emits := make([]int64, 0, 2**tokens)
			defer func() {
				logs.mu.Lock()
				logs.m[id] = emits
				logs.mu.Unlock()
			}()
			for i := range *tokens {
				if d := time.Until(start.Add(time.Duration(i+1) * *itl)); d > 0 {
					time.Sleep(d)
				}
				before := time.Now().UnixNano()
				w.WriteString(`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" hello"}}]}` + "\n\n")
				if w.Flush() != nil {
					return
				}
				emits = append(emits, before, time.Now().UnixNano())
			}
			w.WriteString("data: [DONE]\n\n")
			_ = w.Flush()
		})
	}
	srv := &fasthttp.Server{Handler: h, Concurrency: 1 << 20, ReadBufferSize: 4096, WriteBufferSize: 4096, NoDefaultDate: true, NoDefaultServerHeader: true}
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		<-c
		ln.Close()
	}()
	fmt.Fprintln(os.Stderr, "serving on", ln.Addr())
	_ = srv.Serve(ln)
	return nil
}

func bare(args []string) error {
	fs := flag.NewFlagSet("bare", flag.ExitOnError)
	url := fs.String("url", "", "endpoint URL")
	c := fs.Int("c", 64, "concurrent workers")
	d := fs.Duration("d", 5*time.Second, "duration")
	prof := fs.String("cpuprofile", "", "write a CPU profile")
	_ = fs.Parse(args)
	stop, err := cpuProfile(*prof)
	if err != nil {
		return err
	}
	defer stop()
	client := &fasthttp.Client{MaxConnsPerHost: *c * 2}
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hello"}]}`)
	var n atomic.Int64
	deadline := time.Now().Add(*d)
	var wg sync.WaitGroup
	start, cpu0 := time.Now(), cpuNow()
	for range *c {
		wg.Go(func() {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			req.SetRequestURI(*url)
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			req.SetBody(body)
			for time.Now().Before(deadline) {
				if err := client.Do(req, resp); err == nil && resp.StatusCode() == 200 {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("bare %.0f cpu_us_per_req=%.2f\n", float64(n.Load())/time.Since(start).Seconds(), float64((cpuNow()-cpu0).Nanoseconds())/1e3/float64(max(n.Load(), 1)))
	return nil
}

func runLoadgen(args []string) error {
	fs := flag.NewFlagSet("loadgen", flag.ExitOnError)
	url := fs.String("url", "", "base URL")
	c := fs.Int("c", 64, "concurrency")
	d := fs.Duration("d", 5*time.Second, "duration")
	rec := fs.String("record", "", "record file (recording on)")
	prof := fs.String("cpuprofile", "", "write a CPU profile")
	memprof := fs.String("memprofile", "", "write an allocation profile")
	payloads := fs.Bool("payloads", false, "send a fixed JSONL payload (as wrk does) instead of synthetic prompts")
	transport := fs.String("transport", "", "loadgen.Target.Transport: auto (default) or goroutines (the reference path, every request the goroutine way)")
	_ = fs.Parse(args)
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			return err
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
		runtime.SetMutexProfileFraction(1)
		defer func() {
			mf, _ := os.Create(*prof + ".mutex")
			_ = pprof.Lookup("mutex").WriteTo(mf, 0)
			mf.Close()
		}()
	}
	if *memprof != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			f, _ := os.Create(*memprof)
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}()
	}
	tok, err := tokenizer.Load("gpt2")
	if err != nil {
		return err
	}
	cfg := loadgen.Config{
		Target: loadgen.Target{NoStream: true,
			URLs:      []string{*url},
			Model:     "m",
			Transport: *transport,
		},
		Workload: loadgen.Workload{
			ISL: distribution.Spec{Distribution: distribution.Fixed{Value: 8}},
		},
		Load: loadgen.Load{
			Concurrency: *c,
		},
		Stop: loadgen.Stop{
			Duration: *d,
		},
		// As perftest's run.Run records a run: to the file only, the
		// distributions derived from it after the run.
		Recording: loadgen.Recording{
			RecordFile:     *rec,
			DiscardRecords: true,
			TotalsOnly:     *rec != "",
		},
	}
	if *payloads {
		f, err := os.CreateTemp("", "payload*.jsonl")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		f.WriteString(`{"model":"m","messages":[{"role":"user","content":"hello"}]}` + "\n")
		f.Close()
		cfg.InputFile, cfg.InputFormat, cfg.ISL = f.Name(), loadgen.FormatPayloads, distribution.Spec{}
	}
	// A cancellable context, as the perfgate CLI (signal.NotifyContext) and perftest
	// (t.Context()) pass: cancellation support is part of the measured cost.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cpu0 := cpuNow()
	out, err := loadgen.Run(ctx, cfg, tok, nil)
	if err != nil {
		return err
	}
	cpu := cpuNow() - cpu0
	m := out.Metrics
	n := m.Value(record.MetricRequestCount)
	fmt.Printf("loadgen %.0f cpu_us_per_req=%.2f errors=%v\n", n/out.Elapsed.Seconds(), float64(cpu.Nanoseconds())/1e3/max(n, 1), m.Errors)
	return nil
}

// streams holds n concurrent SSE streams and reports how many completed, client
// memory per stream at the plateau, ITL error against the server's emission log, and
// client CPU per token.
func streams(args []string) error {
	fs := flag.NewFlagSet("streams", flag.ExitOnError)
	url := fs.String("url", "", "streaming server base URL")
	n := fs.Int("n", 1000, "concurrent streams")
	sources := fs.Int("sources", 4, "source addresses 127.0.0.F..F+N-1 (0: none set, the kernel picks)")
	from := fs.Int("source-from", 1, "first source address's last byte F")
	withEmits := fs.Bool("emits", true, "fetch the server's emission log and report ITL error (one server only)")
	ramp := fs.Duration("ramp", 5*time.Second, "time to open all streams")
	prof := fs.String("cpuprofile", "", "write a CPU profile")
	_ = fs.Parse(args)
	endProfile, err := cpuProfile(*prof)
	if err != nil {
		return err
	}
	defer endProfile()
	var src []string
	for i := range *sources {
		src = append(src, "127.0.0."+strconv.Itoa(*from+i))
	}
	tok, err := tokenizer.Load("gpt2")
	if err != nil {
		return err
	}
	runtime.GC()
	base := memNow()
	var cpu0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu0)
	var peak atomic.Int64
	stop := make(chan struct{})
	type sample struct {
		at  time.Time
		cpu time.Duration
	}
	var samples []sample
	sampled := make(chan struct{})
	go func() { // sample memory and CPU while streams are open
		defer close(sampled)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				if m := memNow() - base; m > peak.Load() {
					peak.Store(m)
				}
				samples = append(samples, sample{now, cpuNow()})
			}
		}
	}()
	out, err := loadgen.Run(context.Background(), loadgen.Config{
		Target: loadgen.Target{
			URLs:  []string{*url},
			Model: "m",

			SourceAddrs: src,
		},
		Workload: loadgen.Workload{
			ISL: distribution.Spec{Distribution: distribution.Fixed{Value: 4}},
		},
		Load: loadgen.Load{
			Concurrency: *n,
			Ramp:        *ramp,
		},
		Stop: loadgen.Stop{
			Requests: *n,
			Timeout:  10 * time.Minute,
		},
	}, tok, nil)
	close(stop)
	<-sampled
	if err != nil {
		return err
	}
	var cpu1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu1)
	cpu := time.Duration(cpu1.Utime.Nano()+cpu1.Stime.Nano()-cpu0.Utime.Nano()-cpu0.Stime.Nano()) - 0
	// Fetch the server's emission log and compare.
	var emits map[string][]int64
	if *withEmits {
		resp, err := fasthttpGet(strings.TrimSuffix(*url, "/") + "/emits")
		if err != nil {
			return err
		}
		if err := json.Unmarshal(resp, &emits); err != nil {
			return err
		}
	}
	ok, tokens, connected := 0, 0, 0
	var lastSent time.Duration  // when the last request went out (after its dial)
	errText := map[string]int{} // error text (digits dropped) → count, for LG_DEBUG
	var errs []float64
	kinds := map[string]int{}
	big := map[int]int{} // second of the run → ITL errors beyond ±2 ms
	batched := 0         // tokens read together with the previous event (their gap is a bound)
	for _, r := range out.Records {
		if r.ErrorKind != record.ErrConnect {
			connected++
			lastSent = max(lastSent, r.Sent)
		}
		if !r.OK() {
			errText[strings.Map(func(c rune) rune {
				if c >= '0' && c <= '9' {
					return -1
				}
				return c
			}, r.Error)]++
			kinds[r.ErrorKind]++
			continue
		}
		ok++
		e := emits[r.RequestID]
		k := 0
		var prevC int64
		prevBatched := false
		for _, ch := range r.Chunks {
			if ch.Tokens == 0 {
				continue
			}
			tokens += ch.Tokens
			if 2*k+1 >= len(e) {
				continue // no emission log for this token (-emits=false): count it only
			}
			c := r.RunStartUnixNano + int64(ch.T)
			if ch.Batched {
				batched++
			}
			if k > 0 && !ch.Batched && !prevBatched {
				// The server knows its write only within [before, after]: the ITL error
				// is how far the client's gap lies outside the server's possible gaps.
				gap := c - prevC
				lo, hi := e[2*k]-e[2*k-1], e[2*k+1]-e[2*k-2]
				var x float64
				if gap < lo {
					x = float64(gap-lo) / 1e6
				} else if gap > hi {
					x = float64(gap-hi) / 1e6
				}
				errs = append(errs, x)
				if x > 2 || x < -2 {
					big[int((c-r.RunStartUnixNano)/1e9)]++
				}
			}
			prevC, prevBatched = c, ch.Batched
			k++
		}
	}
	// Steady-state CPU per token: from 1 s after the ramp to 1 s before the end, the
	// CPU the process used over the tokens that arrived in that window.
	var perTok float64
	if len(out.Records) > 0 && len(samples) > 2 {
		from := out.Start.Add(*ramp + time.Second)
		to := out.Start.Add(out.Elapsed - time.Second)
		var s0, s1 *sample
		for i := range samples {
			if s0 == nil && samples[i].at.After(from) {
				s0 = &samples[i]
			}
			if samples[i].at.Before(to) {
				s1 = &samples[i]
			}
		}
		if s0 != nil && s1 != nil && s1.at.After(s0.at) {
			n := 0
			for _, r := range out.Records {
				for _, ch := range r.Chunks {
					if at := out.Start.Add(ch.T); ch.Tokens > 0 && at.After(s0.at) && !at.After(s1.at) {
						n += ch.Tokens
					}
				}
			}
			if n > 0 {
				perTok = float64((s1.cpu - s0.cpu).Microseconds()) / float64(n)
			}
		}
	}
	abs := make([]float64, len(errs))
	for i, x := range errs {
		if x < 0 {
			x = -x
		}
		abs[i] = x
	}
	slices.Sort(abs)
	q := func(p float64) float64 {
		if len(abs) == 0 {
			return 0
		}
		return distribution.PercentileSorted(abs, p)
	}
	if os.Getenv("LG_DEBUG") != "" {
		fmt.Fprintln(os.Stderr, "ITL errors beyond 2 ms by second of the run:", big)
		fmt.Fprintln(os.Stderr, "errors by text (digits dropped):", errText)
	}
	fmt.Printf("streams n=%d connected=%d last_connected_s=%.1f ok=%d errors=%v batched=%.2f%% itl_err_ms(unbatched) p50=%.3f p99=%.3f max=%.3f mem_per_stream_kb=%.1f cpu_per_token_us=%.1f steady_cpu_per_token_us=%.1f tokens=%d\n",
		*n, connected, lastSent.Seconds(), ok, kinds, 100*float64(batched)/float64(max(tokens, 1)), q(0.5), q(0.99), q(1), float64(peak.Load())/float64(*n)/1024, float64(cpu.Microseconds())/float64(max(tokens, 1)), perTok, tokens)
	return nil
}

// cpuNow returns the process's user + system CPU time.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memNow returns the resident set size in bytes (VmRSS).
func memNow() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.Sys)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func fasthttpGet(url string) ([]byte, error) {
	c := &fasthttp.Client{MaxResponseBodySize: 1 << 30, ReadTimeout: time.Minute}
	status, body, err := c.GetTimeout(nil, url, time.Minute)
	if err != nil {
		return nil, err
	}
	if status != 200 {
		return nil, fmt.Errorf("GET %s: %d", url, status)
	}
	return body, nil
}

// cpuProfile starts a CPU profile written to path (none if path is empty); the
// returned function stops it.
func cpuProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
