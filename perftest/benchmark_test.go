package perftest

import (
	"testing"

	"github.com/perfgate/perfgate/loadgen"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/mockserver"
)

// TestBenchmarkReports runs Benchmark through testing.Benchmark and checks that it
// reports the metrics benchstat compares.
func TestBenchmarkReports(t *testing.T) {
	sc := Scenario{
		Name: "bench",
		Mock: mockserver.Config{TTFT: distribution.Spec{Distribution: distribution.Fixed{Value: 5}},
			ITL: distribution.Spec{Distribution: distribution.Fixed{Value: 1}}},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:  distribution.Spec{Distribution: distribution.Fixed{Value: 32}},
				OSL:  distribution.Spec{Distribution: distribution.Fixed{Value: 8}},
				Seed: 1,
			},
			Load: loadgen.Load{
				Concurrency: 4,
			},
			Stop: loadgen.Stop{
				Requests: 16,
			},
		},
	}
	var res *Result
	r := testing.Benchmark(func(b *testing.B) { res = Benchmark(b, sc) })
	if r.N == 0 || res == nil {
		t.Fatalf("Benchmark ran %d times, result %v", r.N, res)
	}
	for _, m := range benchMetrics {
		if _, ok := r.Extra[m.unit]; !ok {
			t.Errorf("metric %q not reported; got %v", m.unit, r.Extra)
		}
	}
	if got := r.Extra["ttft-p50-ms"]; got < 5 || got > 500 {
		t.Errorf("ttft-p50-ms = %v, want >= 5 (the mock's TTFT) and sane", got)
	}
	if got := r.Extra["error-rate"]; got != 0 {
		t.Errorf("error-rate = %v, want 0", got)
	}
	if n := len(res.Requests()); n != 16 {
		t.Errorf("last run recorded %d requests, want 16", n)
	}
}
