// Command soak runs perfgate's load generator for a long time against the fast mock
// server. It prints how its memory, CPU and export time behave as the run grows
// (bench/soak/run.sh drives it). It is a benchmark that prints curves and ratios, not
// a test: nothing here passes or fails on timing.
//
//	soak serve -addr 127.0.0.1:18090              # the fast mock, as its own process
//	soak run -case a [-url http://127.0.0.1:18090] # in-process mock when -url is empty
//
// Cases (sizes from the environment, so a short run checks the harness works):
//
//	a  SOAK_A_REQUESTS (1,000,000) non-streaming requests, SOAK_CONC (64) in flight
//	b  SOAK_B_STREAMS (20,000) streams of SOAK_B_TOKENS (512) tokens
//	c  SOAK_C_TOKENS (100,000,000) streamed tokens, in streams of 1,000
//	d  SOAK_D_DURATION (10m) at SOAK_D_RATE (5,000) non-streaming req/s
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/tokenizer"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: soak serve|run [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "run":
		err = run(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(strings.ReplaceAll(os.Getenv(name), "_", "")); err == nil && v > 0 {
		return v
	}
	return def
}

func envDur(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func startMock(addr string) (*mockserver.Server, error) {
	tok, err := tokenizer.Load("gpt2")
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	p, _ := strconv.Atoi(port)
	s, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Fast: true, DiscardRecords: true, Host: host, Port: p}), mockserver.WithTokenizer(tok))
	if err != nil {
		return nil, err
	}
	return s, s.Start()
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:18090", "listen address")
	_ = fs.Parse(args)
	s, err := startMock(*addr)
	if err != nil {
		return err
	}
	fmt.Println("listening", s.URL())
	select {}
}

// rss returns the process's resident set size in bytes (Linux /proc; 0 elsewhere).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type curve struct {
	mu   sync.Mutex
	peak int64
	at   map[int]int64 // percent of the run → RSS
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	which := fs.String("case", "a", "a, b, c or d")
	url := fs.String("url", "", "mock server URL; empty starts the fast mock in this process")
	dir := fs.String("dir", "", "output directory (default: a temporary one, removed)")
	_ = fs.Parse(args)
	conc := envInt("SOAK_CONC", 64)
	cfg := loadgen.Config{Target: loadgen.Target{NoStream: true, Model: "soak"}, Workload: loadgen.Workload{ISL: fixedLen(32), IgnoreEOS: true}, Load: loadgen.Load{Concurrency: conc}, Recording: loadgen.Recording{DiscardRecords: true}}
	var total int // requests expected (for the 10/50/100% marks); 0 = by time
	var tokensPer int
	switch *which {
	case "a":
		total = envInt("SOAK_A_REQUESTS", 1_000_000)
		tokensPer = 16
		cfg.Requests, cfg.OSL = total, fixedLen(16)
	case "b":
		total = envInt("SOAK_B_STREAMS", 20_000)
		tokensPer = envInt("SOAK_B_TOKENS", 512)
		cfg.Requests, cfg.NoStream, cfg.OSL = total, false, fixedLen(tokensPer)
	case "c":
		tokensPer = 1000
		total = max(1, envInt("SOAK_C_TOKENS", 100_000_000)/tokensPer)
		cfg.Requests, cfg.NoStream, cfg.OSL = total, false, fixedLen(tokensPer)
	case "d":
		d, rate := envDur("SOAK_D_DURATION", 10*time.Minute), envInt("SOAK_D_RATE", 5000)
		tokensPer = 16
		total = int(d.Seconds() * float64(rate))
		cfg.Duration, cfg.Rate, cfg.OSL = d, float64(rate), fixedLen(16)
		cfg.Arrival = loadgen.ArrivalConstant
		cfg.Concurrency = max(conc, 256)
	default:
		return fmt.Errorf("unknown case %q", *which)
	}
	mode := "separate process"
	if *url == "" {
		s, err := startMock("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer s.Close()
		*url, mode = s.URL(), "in-process"
	}
	cfg.URLs = []string{*url}
	out := *dir
	if out == "" {
		d, err := os.MkdirTemp("", "soak")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		out = d
	}
	cfg.RecordFile = filepath.Join(out, "perfgate_records.jsonl")
	tok, err := tokenizer.Load("gpt2")
	if err != nil {
		return err
	}

	runtime.GC()
	base := rss()
	var done atomic.Int64
	var tokens atomic.Int64
	cv := &curve{at: map[int]int64{}}
	marks := []int{10, 50, 100}
	sink := func(r record.Client) {
		if r.Warmup {
			return
		}
		n := int(done.Add(1))
		tokens.Add(int64(r.OSL))
		if total > 0 {
			for _, m := range marks {
				if n == total*m/100 {
					heapProfile(m)
					v := rss()
					cv.mu.Lock()
					cv.at[m] = v
					cv.mu.Unlock()
				}
			}
		}
	}
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				v := rss()
				cv.mu.Lock()
				cv.peak = max(cv.peak, v)
				cv.mu.Unlock()
			}
		}
	}()
	cpu0, t0 := cpuTime(), time.Now()
	o, err := loadgen.Run(context.Background(), cfg, tok, sink)
	if err != nil {
		return err
	}
	elapsed, cpu := time.Since(t0), cpuTime()-cpu0
	end := rss()
	close(stop)
	cv.mu.Lock()
	cv.peak = max(cv.peak, end)
	if cv.at[100] == 0 {
		cv.at[100] = end
	}
	cv.mu.Unlock()

	// Export: the summary files from the run's metrics, then a re-derivation of every
	// metric from the recording on disk (what `perfgate report DIR` does).
	e0 := time.Now()
	if _, err := reportgen.WriteExports(out, reportgen.Run{Metrics: o.Metrics}, reportgen.ExportOptions{NoRecords: true, NoHTML: true}); err != nil {
		return err
	}
	exportSummary := time.Since(e0)
	e1 := time.Now()
	again, nrec, err := recompute(cfg.RecordFile)
	if err != nil {
		return err
	}
	exportRecords := time.Since(e1)
	fi, err := os.Stat(cfg.RecordFile)
	if err != nil {
		return err
	}
	m := o.Metrics
	n := int(m.Value(record.MetricRequestCount))
	tk := m.Value(record.MetricTotalOSL)
	mb := func(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
	fmt.Printf("case %s (%s mock): %d requests ok, %d errors, %.0f output tokens in %s (%.0f req/s, %.0f tok/s)\n",
		*which, mode, n, int(m.Value(record.MetricErrorCount)), tk, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), tk/elapsed.Seconds())
	fmt.Printf("  RSS: base %s, peak %s; at 10%% %s, 50%% %s, 100%% %s; 100%%/10%% = %.2f\n",
		mb(base), mb(cv.peak), mb(cv.at[10]), mb(cv.at[50]), mb(cv.at[100]), float64(cv.at[100])/float64(max(cv.at[10], 1)))
	fmt.Printf("  RAM growth per request (10%%→100%%): %.1f B; per token %.3f B\n",
		float64(cv.at[100]-cv.at[10])/(0.9*float64(max(n, 1))), float64(cv.at[100]-cv.at[10])/(0.9*max(tk, 1)))
	fmt.Printf("  disk: %s recording, %.0f B/request, %.2f B/token\n", mb(fi.Size()), float64(fi.Size())/float64(max(nrec, 1)), float64(fi.Size())/max(tk, 1))
	who := "client"
	if mode == "in-process" {
		who = "client + mock"
	}
	fmt.Printf("  CPU (%s): %s = %.2f µs/token, %.2f µs/request\n", who, cpu.Round(time.Millisecond), float64(cpu.Microseconds())/max(tk, 1), float64(cpu.Microseconds())/float64(max(n, 1)))
	fmt.Printf("  export: summary files %s (%.2f%% of run); all metrics again from the %d-record recording %s (%.1f%% of run)\n",
		exportSummary.Round(time.Microsecond), 100*exportSummary.Seconds()/elapsed.Seconds(), nrec, exportRecords.Round(time.Millisecond), 100*exportRecords.Seconds()/elapsed.Seconds())
	a, b := m.Stats[record.MetricRequestLatency], again.Stats[record.MetricRequestLatency]
	fmt.Printf("  request latency p50 %.4g ms p99 %.4g ms (from the recording: p50 %.4g p99 %.4g); tokens seen by the sink %d\n", a.P50, a.P99, b.P50, b.P99, tokens.Load())
	_ = tokensPer
	return nil
}

// recompute streams the recording through one exact metric.Accumulator, decoding
// each line into one reused record (what scenario's post-run pass does).
func recompute(path string) (record.Metrics, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return record.Metrics{}, 0, err
	}
	defer f.Close()
	acc := metric.NewAccumulator(metric.Options{})
	n := 0
	err = record.EachClient(f, func(r *record.Client) error {
		n++
		acc.Add(r)
		return nil
	})
	return acc.Metrics(), n, err
}

// heapProfile writes an in-use heap profile at m percent of the run to
// $SOAK_HEAPPROFILE-m.pprof when SOAK_HEAPPROFILE is set (go tool pprof -top).
func heapProfile(m int) {
	p := os.Getenv("SOAK_HEAPPROFILE")
	if p == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(fmt.Sprintf("%s-%d.pprof", p, m))
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.WriteHeapProfile(f)
}

func fixedLen(n int) distribution.Spec {
	return distribution.Spec{Distribution: distribution.Fixed{Value: float64(n)}}
}
