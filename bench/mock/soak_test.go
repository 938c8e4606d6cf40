package mockbench

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/mockserver"
)

// envInt reads a positive integer from the environment, def if unset.
func envInt(name string, def int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil && v > 0 {
		return v
	}
	return def
}

// procStatusKB returns a field of /proc/self/status in kB (0 where unavailable).
func procStatusKB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return n
		}
	}
	return 0
}

// resetPeakRSS restarts VmHWM from the current RSS (Linux: clear_refs 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// BenchmarkSoak serves production-size runs with recording on and reports the
// process's peak RSS (mock and its client share the process, so this bounds the
// mock's): MOCKBENCH_SOAK_REQUESTS non-streaming requests (default 1,000,000), then
// MOCKBENCH_SOAK_TOKENS streamed tokens (default 10,000,000), each on a fresh server
// whose Close (summary included) is inside the measured peak. The target is a peak
// of at most 128 MB in each. Run it alone (-bench Soak) so earlier benchmarks do not
// set the peak; it also reports non-streaming req/s at 512 connections with
// recording off, the setup of AIPerf's published Rust-mock figure (see README).
func BenchmarkSoak(b *testing.B) {
	wantReqs := envInt("MOCKBENCH_SOAK_REQUESTS", 1_000_000)
	wantToks := envInt("MOCKBENCH_SOAK_TOKENS", 10_000_000)
	nonStream := []byte(`{"model":"mock-model","messages":[{"role":"user","content":"Short question?"}],"max_tokens":16,"ignore_eos":true}`)
	for b.Loop() {
		// Throughput at AIPerf's setup: 512 connections, recording off.
		plain := startMock(b, mockserver.Config{Fast: true, DiscardRecords: true})
		r := Drive(plain.URL()+"/v1/chat/completions", nonStream, 512, seconds(), false)
		plain.Close()
		b.ReportMetric(r.RequestsPerSec(), "req/s@512conns")

		phase := func(name string, body []byte, stream bool, until func(Result) bool) {
			runtime.GC()
			resetPeakRSS()
			base := procStatusKB("VmRSS")
			file := filepath.Join(b.TempDir(), name+".jsonl")
			s := startMock(b, mockserver.Config{Fast: true, RecordFile: file})
			var tot Result
			for !until(tot) {
				r := Drive(s.URL()+"/v1/chat/completions", body, 64, time.Second, stream)
				tot.Requests += r.Requests
				tot.Tokens += r.Tokens
				tot.Errors += r.Errors
				tot.Elapsed += r.Elapsed
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			sum := s.Summary()
			peak := procStatusKB("VmHWM")
			b.Logf("%s: %d requests, %d tokens, %d errors in %v; recorded %d; RSS before %d MB, peak %d MB",
				name, tot.Requests, tot.Tokens, tot.Errors, tot.Elapsed.Round(time.Millisecond), sum.TotalRequests, base>>10, peak>>10)
			// The client stops counting at each slice's deadline; the server records
			// the responses it finished anyway.
			if int64(sum.TotalRequests) < tot.Requests {
				b.Errorf("%s: summary counts %d requests, fewer than the client's %d", name, sum.TotalRequests, tot.Requests)
			}
			b.ReportMetric(float64(peak)/1024, name+"-peak-MB")
			b.ReportMetric(tot.RequestsPerSec(), name+"-req/s")
			os.Remove(file)
		}
		phase("nonstream", nonStream, false, func(r Result) bool { return int64(r.Requests) >= wantReqs })
		phase("stream", chatBody(true), true, func(r Result) bool { return int64(r.Tokens) >= wantToks })
	}
}
