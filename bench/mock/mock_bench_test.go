package mockbench

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil/toktest"
	"github.com/perfgate/perfgate/mockserver"
)

// compare drives a and b alternately in `rounds` slices of d/rounds each and sums the
// results, so that load from elsewhere on the machine hits both sides alike.
func compare(a, b func(d time.Duration) Result, d time.Duration, rounds int) (Result, Result) {
	var ra, rb Result
	add := func(x *Result, y Result) {
		x.Tokens += y.Tokens
		x.Requests += y.Requests
		x.Errors += y.Errors
		x.Elapsed += y.Elapsed
	}
	for range rounds {
		add(&ra, a(d/time.Duration(rounds)))
		add(&rb, b(d/time.Duration(rounds)))
	}
	return ra, rb
}

// seconds is how long each measured phase runs (MOCKBENCH_SECONDS, default 2).
func seconds() time.Duration {
	if v, err := strconv.ParseFloat(os.Getenv("MOCKBENCH_SECONDS"), 64); err == nil && v > 0 {
		return time.Duration(v * float64(time.Second))
	}
	return 2 * time.Second
}

func startMock(b *testing.B, cfg mockserver.Config) *mockserver.Server {
	b.Helper()
	s, err := mockserver.New(mockserver.WithConfig(cfg), mockserver.WithTokenizer(toktest.Load(b, "gpt2")))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

const osl = 500

func chatBody(stream bool) []byte {
	return []byte(fmt.Sprintf(`{"model":"mock-model","messages":[{"role":"user","content":"Tell me a story about a benchmark that measured itself."}],"max_tokens":%d,"ignore_eos":true,"stream":%v}`, osl, stream))
}

// BenchmarkStream compares streamed tokens/s of the mock (gpt2 tokens, zero latency,
// recording to a file) with the minimal fasthttp SSE loop, same client, same run.
func BenchmarkStream(b *testing.B) {
	for _, conc := range []int{1, 100, 1000} {
		b.Run("streams="+strconv.Itoa(conc), func(b *testing.B) {
			refURL, stop, err := StartRef(osl)
			if err != nil {
				b.Fatal(err)
			}
			defer stop()
			m := startMock(b, mockserver.Config{Fast: true, RecordFile: filepath.Join(b.TempDir(), "rec.jsonl"), DiscardRecords: true})
			var ref, mock Result
			for b.Loop() {
				ref, mock = compare(
					func(d time.Duration) Result {
						return Drive(refURL+"/v1/chat/completions", chatBody(true), conc, d, true)
					},
					func(d time.Duration) Result {
						return Drive(m.URL()+"/v1/chat/completions", chatBody(true), conc, d, true)
					},
					seconds(), 4)
			}
			b.ReportMetric(ref.TokensPerSec(), "ref-tok/s")
			b.ReportMetric(mock.TokensPerSec(), "mock-tok/s")
			b.ReportMetric(mock.TokensPerSec()/ref.TokensPerSec(), "ratio")
			if mock.Errors+ref.Errors > 0 {
				b.Logf("errors: ref %d, mock %d", ref.Errors, mock.Errors)
			}
		})
	}
}

// BenchmarkNonStreaming reports non-streaming requests/s (16 output tokens) with and
// without recording to a file; the ratio is the recording's cost.
func BenchmarkNonStreaming(b *testing.B) {
	body := []byte(`{"model":"mock-model","messages":[{"role":"user","content":"Short question?"}],"max_tokens":16,"ignore_eos":true}`)
	plain := startMock(b, mockserver.Config{Fast: true, DiscardRecords: true})
	rec := startMock(b, mockserver.Config{Fast: true, DiscardRecords: true, RecordFile: filepath.Join(b.TempDir(), "rec.jsonl")})
	var p, r Result
	for b.Loop() {
		p, r = compare(
			func(d time.Duration) Result { return Drive(plain.URL()+"/v1/chat/completions", body, 64, d, false) },
			func(d time.Duration) Result { return Drive(rec.URL()+"/v1/chat/completions", body, 64, d, false) },
			seconds(), 4)
	}
	b.ReportMetric(p.RequestsPerSec(), "req/s")
	b.ReportMetric(r.RequestsPerSec(), "recorded-req/s")
	b.ReportMetric(r.RequestsPerSec()/p.RequestsPerSec(), "recording-ratio")
}

// nonStreamBody is the non-streaming request of the wrk comparison: a short chat, 16
// output tokens.
var nonStreamBody = []byte(`{"model":"mock-model","messages":[{"role":"user","content":"Short question?"}],"max_tokens":16,"ignore_eos":true}`)

// BenchmarkNonStreamingWrk compares the mock's non-streaming requests/s (zero latency,
// recording to a file, real gpt2 tokenization of input and output) with a trivial
// fasthttp server that answers every request with a fixed completion (RefCompletion),
// both in this process, wrk -c64 as the client (its own process), in interleaved
// rounds (the reported rates are the medians of the rounds'; ratio is the median of
// the rounds' ratios). The target is a ratio of at least 0.5 (issue 23).
func BenchmarkNonStreamingWrk(b *testing.B) {
	refURL, stop, err := StartTrivial()
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	m := startMock(b, mockserver.Config{Fast: true, DiscardRecords: true, RecordFile: filepath.Join(b.TempDir(), "rec.jsonl")})
	const rounds = 3
	var ref, mock, ratio, refCPU, mockCPU []float64
	// run drives url with wrk and returns its rate and this process's CPU per request
	// meanwhile (the server's: wrk is another process), in µs.
	run := func(url string) (float64, float64) {
		c0, t0 := CPUTime(), time.Now()
		rate, err := Wrk(url+"/v1/chat/completions", nonStreamBody, 64, seconds())
		if err != nil {
			b.Fatal(err)
		}
		cpu, n := CPUTime()-c0, rate*time.Since(t0).Seconds()
		return rate, float64(cpu.Microseconds()) / max(n, 1)
	}
	for b.Loop() {
		ref, mock, ratio, refCPU, mockCPU = nil, nil, nil, nil, nil
		for range rounds {
			r, rc := run(refURL)
			x, xc := run(m.URL())
			ref, mock, ratio = append(ref, r), append(mock, x), append(ratio, x/r)
			refCPU, mockCPU = append(refCPU, rc), append(mockCPU, xc)
		}
	}
	b.ReportMetric(median(ref), "trivial-req/s")
	b.ReportMetric(median(mock), "mock-req/s")
	b.ReportMetric(median(ratio), "ratio")
	b.ReportMetric(median(refCPU), "trivial-cpu-µs/req")
	b.ReportMetric(median(mockCPU), "mock-cpu-µs/req")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkRecordingCost compares streamed tokens/s at 100 streams with and without
// --record-requests (short outputs, so per-request recording work matters).
func BenchmarkRecordingCost(b *testing.B) {
	body := []byte(`{"model":"mock-model","messages":[{"role":"user","content":"Tell me a story."}],"max_tokens":50,"ignore_eos":true,"stream":true}`)
	plain := startMock(b, mockserver.Config{Fast: true, DiscardRecords: true})
	rec := startMock(b, mockserver.Config{Fast: true, DiscardRecords: true, RecordFile: filepath.Join(b.TempDir(), "rec.jsonl")})
	var p, r Result
	for b.Loop() {
		p, r = compare(
			func(d time.Duration) Result { return Drive(plain.URL()+"/v1/chat/completions", body, 100, d, true) },
			func(d time.Duration) Result { return Drive(rec.URL()+"/v1/chat/completions", body, 100, d, true) },
			seconds(), 4)
	}
	b.ReportMetric(p.TokensPerSec(), "tok/s")
	b.ReportMetric(r.TokensPerSec(), "recorded-tok/s")
	b.ReportMetric(r.TokensPerSec()/p.TokensPerSec(), "recording-ratio")
}

// BenchmarkMemoryPerStream opens N streams that wait (ITL 60 s) and reports the Go heap
// + stack growth per open stream. Clients are raw connections that send the request and
// read nothing more, so almost all of the growth is the server's.
func BenchmarkMemoryPerStream(b *testing.B) {
	const n = 1000
	m := startMock(b, mockserver.Config{TTFT: fixed(0), ITL: fixed(60000), DiscardRecords: true, GracePeriod: time.Millisecond})
	body := string(chatBody(true))
	var per float64
	for b.Loop() {
		before := memInUse()
		conns := make([]net.Conn, 0, n)
		for range n {
			c, err := net.Dial("tcp", m.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			conns = append(conns, c)
		}
		// Wait until every stream has sent its first token.
		for _, c := range conns {
			br := bufio.NewReaderSize(c, 512)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					b.Fatal(err)
				}
				if len(line) > 20 && line[:6] == "data: " {
					break
				}
			}
		}
		per = float64(memInUse()-before) / n
		for _, c := range conns {
			c.Close()
		}
	}
	b.ReportMetric(per/1024, "KiB/stream")
}

func memInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse + ms.StackInuse)
}

func fixed(ms float64) distribution.Spec {
	return distribution.Spec{Distribution: distribution.Fixed{Value: ms}}
}

// BenchmarkLateness paces streams at ITL 10 ms (and 5,000 streams at 100 ms) and
// reports how late chunks were
// written relative to their absolute deadlines (p50/p99, µs, quarter-octave
// resolution) from 5k to 100k paced tokens/s, with the CPU each token cost (server and
// client, one process) and the peer [TimerFloor]: bare Go timers at the same wake rate,
// each wake burning that CPU. p99-ratio is the mock's p99 over the floor's. The streams start spread over one ITL, as
// independent users' would: started together, every stream's tokens fall due in the
// same instant each ITL, a burst whose CPU work alone (about 20 µs per token for server
// and client) takes milliseconds to drain on two cores.
func BenchmarkLateness(b *testing.B) {
	type load struct {
		streams int
		itl     time.Duration
	}
	loads := []load{{50, 10 * time.Millisecond}, {100, 10 * time.Millisecond}, {200, 10 * time.Millisecond},
		{300, 10 * time.Millisecond}, {500, 10 * time.Millisecond}, {1000, 10 * time.Millisecond},
		{5000, 100 * time.Millisecond}} // 50k tokens/s again, as ten times the streams at a tenth of the pace
	for _, l := range loads {
		streams, itl := l.streams, l.itl
		name := fmt.Sprintf("tok/s=%dk", int(time.Second/itl)*streams/1000)
		if itl != 10*time.Millisecond {
			name += fmt.Sprintf("-itl=%v", itl)
		}
		b.Run(name, func(b *testing.B) {
			ms := float64(itl) / float64(time.Millisecond)
			m := startMock(b, mockserver.Config{TTFT: fixed(10), ITL: fixed(ms), DiscardRecords: true})
			body := []byte(`{"model":"mock-model","messages":[{"role":"user","content":"Pace me."}],"max_tokens":100,"ignore_eos":true,"stream":true}`)
			// Streams open at most 5,000 a second, spread over whole ITLs; what is measured
			// starts once all are open and past their first token.
			spread := max(itl, time.Duration(streams)*200*time.Microsecond).Truncate(itl)
			warm := spread + 10*time.Millisecond + 2*itl
			var (
				q       []float64
				cpu     time.Duration
				n       int64
				elapsed time.Duration
			)
			for b.Loop() {
				var tokens atomic.Int64
				var c0 time.Duration
				var n0 int64
				var t0 time.Time
				warmed := time.AfterFunc(warm, func() {
					m.ResetLateness()
					c0, n0, t0 = CPUTime(), tokens.Load(), time.Now()
				})
				DriveCounting(m.URL()+"/v1/chat/completions", body, streams, warm+seconds(), true, spread, &tokens)
				warmed.Stop()
				cpu, n, elapsed = CPUTime()-c0, tokens.Load()-n0, time.Since(t0)
				q = m.Lateness(0.5, 0.9, 0.99)
			}
			// The peer: Go timers alone at the same wake rate, each wake burning the CPU
			// a token cost here (server and client together).
			perTok := cpu / time.Duration(max(n, 1))
			floor := TimerFloor(streams, itl, perTok, seconds())
			b.ReportMetric(float64(n)/elapsed.Seconds(), "tok/s")
			b.ReportMetric(float64(perTok.Nanoseconds())/1e3, "cpu-µs/tok")
			b.ReportMetric(q[0], "p50-late-µs")
			b.ReportMetric(q[1], "p90-late-µs")
			b.ReportMetric(q[2], "p99-late-µs")
			b.ReportMetric(float64(Quantile(floor, 0.99).Nanoseconds())/1e3, "floor-p99-µs")
			b.ReportMetric(q[2]/max(float64(Quantile(floor, 0.99).Nanoseconds())/1e3, 1), "p99-ratio")
		})
	}
}

// BenchmarkBatchKnee drives the batching model (step 10 ms + 0.1 ms per decoding
// sequence, max batch 32) at rising concurrency and reports throughput and the mean
// server-side TTFT: throughput flattens near the batch limit while TTFT climbs — the knee
// capacity searches look for.
func BenchmarkBatchKnee(b *testing.B) {
	body := []byte(`{"model":"mock-model","messages":[{"role":"user","content":"Knee?"}],"max_tokens":50,"ignore_eos":true,"stream":true}`)
	for _, conc := range []int{8, 16, 32, 64, 128} {
		b.Run("conc="+strconv.Itoa(conc), func(b *testing.B) {
			m := startMock(b, mockserver.Config{Batch: mockserver.BatchConfig{Enabled: true, Step: 10 * time.Millisecond, DecodeToken: 100 * time.Microsecond, MaxBatch: 32}})
			var res Result
			for b.Loop() {
				res = Drive(m.URL()+"/v1/chat/completions", body, conc, seconds(), true)
			}
			m.Close()
			var ttft, n float64
			for _, r := range m.Records() {
				if r.FirstTokenNS > 0 {
					ttft += float64(r.FirstTokenNS-r.RecvNS) / 1e6
					n++
				}
			}
			b.ReportMetric(res.TokensPerSec(), "tok/s")
			b.ReportMetric(ttft/max(n, 1), "mean-ttft-ms")
		})
	}
}
