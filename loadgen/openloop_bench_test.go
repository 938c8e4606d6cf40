package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/tokenizer"
	"github.com/valyala/fasthttp"
)

// stubEnv, when set in the environment, makes the test binary a stub server instead
// of running tests (see TestMain): the open-loop cost benchmark runs its server in
// another process, so the CPU time it measures is the client's alone.
const stubEnv = "PERFGATE_LOADGEN_STUB"

// stubTokens is how many content chunks the stub streams per request.
const stubTokens = 16

// stubDelayModel is the model name that makes the stub wait 1 ms before answering, so
// a closed loop of a few workers runs at the open loop's rate (see openLoopCost).
const stubDelayModel = "delay"

// runStub serves streamed chat completions on 127.0.0.1 until stdin closes; it prints
// its URL as the first line of stdout. GET /arrivals lists "request-id unix-ns" for
// every request, stamped with the kernel's receive time of the request's bytes.
func runStub() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "stub:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	arrived := map[string]int64{}
	chunk := []byte(`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" hello"}}]}` + "\n\n")
	tail := []byte(fmt.Sprintf(`data: {"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":%d,"total_tokens":%d}}`+"\n\ndata: [DONE]\n\n", stubTokens, stubTokens+3))
	handle := func(ctx *fasthttp.RequestCtx) {
		now := time.Now()
		if c, ok := ctx.Conn().(*tsConn); ok && !c.last.IsZero() {
			now = c.last
		}
		if string(ctx.Path()) == "/arrivals" {
			mu.Lock()
			defer mu.Unlock()
			var b []byte
			for id, t := range arrived {
				b = fmt.Appendf(b, "%s %d\n", id, t)
			}
			clear(arrived)
			ctx.SetBody(b)
			return
		}
		mu.Lock()
		arrived[string(ctx.Request.Header.Peek("X-Request-Id"))] = now.UnixNano()
		mu.Unlock()
		if modelOf(ctx.PostBody()) == stubDelayModel {
			time.Sleep(time.Millisecond)
		}
		ctx.SetContentType("text/event-stream")
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			for range stubTokens {
				_, _ = w.Write(chunk)
				_ = w.Flush()
			}
			_, _ = w.Write(tail)
		})
	}
	srv := &fasthttp.Server{Handler: handle, Concurrency: 1 << 20, Logger: quiet{}}
	go srv.Serve(&tsListener{Listener: ln}) //nolint:errcheck
	fmt.Println("http://" + ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin) // the parent closes stdin (or dies)
	_ = srv.Shutdown()
}

// startStub starts the stub server in a child process and returns its URL.
func startStub(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stubEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	stubPid = cmd.Process.Pid
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("stub server: %v", err)
	}
	return strings.TrimSpace(line)
}

// stubPid is the stub server's process id (for sendTrace).
var stubPid int

// stubArrivals fetches (and clears) the stub's arrival times by request id.
func stubArrivals(b *testing.B, url string) map[string]int64 {
	b.Helper()
	resp, err := http.Get(url + "/arrivals")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	m := map[string]int64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		id, ns, _ := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseInt(ns, 10, 64)
		if err != nil {
			b.Fatalf("stub arrivals: %q", sc.Text())
		}
		m[id] = n
	}
	return m
}

const (
	openLoopRate = 5000 // req/s, the rate issue 23 states the cost at
)

// BenchmarkOpenLoopCost measures the client's CPU time per request of an open-loop
// Poisson run at 1,000 and 5,000 req/s beside a closed loop at about the same
// throughput (against a server that waits 1 ms, as many workers as Little's law says
// keep that rate, from a calibration run), both streaming 16 tokens from a stub
// server in another process, so getrusage counts the client alone. It reports
//
//   - cpu_us/req_open, cpu_us/req_closed and their ratio (target ≤ 1.5), the rates
//     both achieved (req/s_open, req/s_closed) and the closed loop's workers;
//   - the context switches per request of both (csw/req_open, csw/req_closed): each
//     voluntary one is a thread that blocked and was woken again;
//   - the send accuracy of the open loop: the server's kernel receive time of each
//     request minus its scheduled time (mean and p99, ms; it includes the loopback
//     and the client's write), and the same less the smallest such gap of the run
//     (the part that varies: jitter), and the client's own Sent − Scheduled;
//   - beside them, the machine's own timer wake-up latency in the same iteration: how
//     late a bare waiter (bareWaits: nanosleep to each due time of a Poisson schedule
//     at the same rate, on a thread of its own, 1 ns timer slack, no spin) wakes
//     (bare_mean_ms, bare_p50_ms, bare_p99_ms). A sender that only sleeps cannot beat
//     it; one that beats it pays for the difference in spinning;
//   - and the same under load (loadedWaits: loaded_mean_ms, loaded_p99_ms): the send
//     loop's own sleep, on a thread of its own keeping its processor as the loop does,
//     waiting out the schedule while a closed loop at the open loop's rate runs beside
//     it, so the process and the stub are as busy as in the open run. It is the open
//     loop with nothing to prepare: how late a sleeping send loop wakes on this machine
//     at this load.
//
// CPU per request holds on a loaded machine; the accuracy figures are wall-clock and
// only mean something on a quiet one.
//
//	go test ./loadgen -run '^$' -bench OpenLoopCost -benchtime 3x
func BenchmarkOpenLoopCost(b *testing.B) {
	url := startStub(b)
	tok := gpt2(b)
	for _, rate := range []int{1000, openLoopRate} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) { openLoopCost(b, url, tok, rate) })
	}
}

func openLoopCost(b *testing.B, url string, tok *tokenizer.Tokenizer, rate int) {
	n := rate // one second of each
	run := func(cfg Config, n int) (cpuPerReq, rate, cswPerReq float64, recsOK []recordLite) {
		cfg.Target.URLs = []string{url}
		cfg.Workload.ISL = fixed(8)
		cfg.Workload.OSL = fixed(stubTokens)
		cfg.Stop.Requests = n
		v0, i0 := contextSwitches()
		c0 := processCPU()
		out, err := Run(context.Background(), cfg, tok, nil)
		c1 := processCPU()
		v1, i1 := contextSwitches()
		if err != nil {
			b.Fatal(err)
		}
		var first, last time.Duration = -1, 0
		for _, r := range out.Records {
			if r.Error != "" {
				b.Fatalf("request %s: %s", r.RequestID, r.Error)
			}
			if first < 0 || r.Sent < first {
				first = r.Sent
			}
			last = max(last, r.Done)
			recsOK = append(recsOK, recordLite{id: r.RequestID, sched: r.RunStartUnixNano + int64(r.Scheduled), lag: r.Sent - r.Scheduled})
		}
		k := float64(len(out.Records))
		return (c1 - c0) / k * 1e6, k / (last - first).Seconds(), float64(v1-v0+i1-i0) / k, recsOK
	}
	closed := func(seed uint64, workers, n int) (cpuPerReq, rate, cswPerReq float64) {
		cpu, r, csw, _ := run(Config{Target: Target{Model: stubDelayModel}, Workload: Workload{Seed: seed}, Load: Load{Concurrency: workers}}, n)
		return cpu, r, csw
	}
	// The closed loop's workers: by Little's law a worker's throughput is 1/(its time
	// per request), so rate/(one worker's throughput) workers keep about rate req/s in
	// flight. A worker's throughput is measured by a short first closed run (which
	// counts for nothing else), with a second pass if that one was far off.
	workers := max(1, rate/1000)
	for range 2 {
		_, got, _ := closed(0, workers, n/4)
		next := max(1, int(math.Round(float64(rate)*float64(workers)/got)))
		if next == workers {
			break
		}
		workers = next
	}
	trace := newSendTrace(b)
	var seed uint64
	for b.Loop() {
		seed++
		stubArrivals(b, url) // clear
		trace.start(b)
		openCPU, openRate, openCSW, recs := run(Config{Target: Target{Model: "ok"}, Workload: Workload{Seed: seed}, Load: Load{Rate: float64(rate)}}, n)
		trace.stop(b, recs)
		arr := stubArrivals(b, url)
		closedCPU, closedRate, closedCSW := closed(seed, workers, n)
		bare := bareWaits(min(n, openLoopRate), float64(rate), seed)
		slices.Sort(bare)
		loaded := loadedWaits(min(n, openLoopRate), float64(rate), seed, func() { closed(seed, workers, n) })
		slices.Sort(loaded)

		var dev, lag []float64
		for _, r := range recs {
			a, ok := arr[r.id]
			if !ok {
				b.Fatalf("the stub never saw request %s", r.id)
			}
			dev = append(dev, float64(a-r.sched)/1e6)
			lag = append(lag, float64(r.lag)/1e6)
		}
		slices.Sort(dev)
		slices.Sort(lag)
		floor := dev[0]
		b.ReportMetric(openCPU, "cpu_us/req_open")
		b.ReportMetric(closedCPU, "cpu_us/req_closed")
		b.ReportMetric(openCPU/closedCPU, "open/closed")
		b.ReportMetric(openRate, "req/s_open")
		b.ReportMetric(closedRate, "req/s_closed")
		b.ReportMetric(float64(workers), "closed_workers")
		b.ReportMetric(openCSW, "csw/req_open")
		b.ReportMetric(closedCSW, "csw/req_closed")
		b.ReportMetric(mean(dev), "dev_mean_ms")
		b.ReportMetric(distribution.PercentileSorted(dev, 0.99), "dev_p99_ms")
		b.ReportMetric(mean(dev)-floor, "jitter_mean_ms")
		b.ReportMetric(distribution.PercentileSorted(dev, 0.99)-floor, "jitter_p99_ms")
		b.ReportMetric(mean(lag), "lag_mean_ms")
		b.ReportMetric(distribution.PercentileSorted(lag, 0.99), "lag_p99_ms")
		b.ReportMetric(mean(bare), "bare_mean_ms")
		b.ReportMetric(distribution.PercentileSorted(bare, 0.5), "bare_p50_ms")
		b.ReportMetric(distribution.PercentileSorted(bare, 0.99), "bare_p99_ms")
		b.ReportMetric(mean(loaded), "loaded_mean_ms")
		b.ReportMetric(distribution.PercentileSorted(loaded, 0.99), "loaded_p99_ms")
	}
}

// loadedWaits runs the send loop's sleep (preciseSleep, on a thread set up by
// lockPreciseThread: its processor kept, no early wake, no spin) through n due times
// of a Poisson schedule at rate while load runs, and returns each wait's overshoot in
// ms (see poissonOvershoots). The load is started with the waits and waited for.
func loadedWaits(n int, rate float64, seed uint64, load func()) []float64 {
	done := make(chan []float64, 1)
	go func() {
		lockPreciseThread() // never unlocked: the thread ends with the goroutine
		done <- poissonOvershoots(n, rate, seed, preciseSleep)
	}()
	load()
	return <-done
}

type recordLite struct {
	id    string
	sched int64
	lag   time.Duration
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// BenchmarkPacerWait measures the open-loop pacer's waiting alone (no requests): a
// Poisson schedule at 5,000 req/s for one second, waited out by sleepUntil as a run
// does ("precise"), by the rule it replaced (nanosleep until 300 µs before each due
// time, then yield until due: "spin300"), and by Go timers only (CoarseTimer:
// "coarse"). Each prints the process CPU per wait and how late each wait ended
// (mean and p99, ms). CPU per wait is meaningful on a busy machine; lateness is not.
//
//	go test ./loadgen -run '^$' -bench PacerWait -benchtime 3x
func BenchmarkPacerWait(b *testing.B) {
	const n = openLoopRate
	legacy := func(r *openLoop, due time.Duration) {
		if d := due - r.clock.now(); d > r.spin {
			sleep(context.Background(), d-r.spin)
		}
		const busyWait = 300 * time.Microsecond
		if d := due - r.clock.now(); d > busyWait {
			preciseSleep(d - busyWait)
		}
		for r.clock.now() < due {
			runtime.Gosched()
		}
	}
	modes := []struct {
		name string
		spin time.Duration
		wait func(r *openLoop, due time.Duration)
	}{
		{"precise", DefaultSpin, func(r *openLoop, due time.Duration) { r.sleepUntil(context.Background(), due) }},
		{"spin300", DefaultSpin, legacy},
		{"coarse", 0, func(r *openLoop, due time.Duration) { r.sleepUntil(context.Background(), due) }},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			var seed uint64
			for b.Loop() {
				seed++
				p := &PoissonPacer{Freq: openLoopRate, Src: rand.NewPCG(seed, 1)}
				r := &openLoop{clock: &runClock{start: time.Now(), self: &selfMeter{}}, spin: m.spin}
				late := make([]float64, 0, n)
				c0 := processCPU()
				for k := range uint64(n) {
					due, _ := p.Pace(0, k)
					m.wait(r, due)
					late = append(late, float64(r.clock.now()-due)/1e6)
				}
				cpu := processCPU() - c0
				slices.Sort(late)
				b.ReportMetric(cpu/n*1e6, "cpu_us/wait")
				b.ReportMetric(mean(late), "late_mean_ms")
				b.ReportMetric(distribution.PercentileSorted(late, 0.99), "late_p99_ms")
			}
		})
	}
}
