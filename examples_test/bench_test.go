package examples_test

import (
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
)

// BenchmarkChat runs a chat scenario against the mock as a benchmark, so benchstat can
// compare two commits (see the README's "Using perfgate in CI"):
//
//	go test -run '^$' -bench BenchmarkChat -benchtime 1x -count 6 ./examples_test > new.txt
func BenchmarkChat(b *testing.B) {
	perftest.Benchmark(b, perftest.Scenario{
		Name: "bench-chat",
		Mock: mockserver.Config{TTFT: distribution.MustSpec("fixed:10"), ITL: distribution.MustSpec("fixed:1"), ITLConcurrencyLin: 100 * time.Microsecond},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:  distribution.MustSpec("normal:256,32"),
				OSL:  distribution.MustSpec("fixed:32"),
				Seed: 1,
			},
			Load: loadgen.Load{
				Concurrency: 8,
			},
			Stop: loadgen.Stop{
				Requests: 64,
			},
		},
	})
}
