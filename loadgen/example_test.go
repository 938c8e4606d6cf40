package loadgen_test

import (
	"context"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// A pacer is a pure function of the time elapsed and the requests sent so far.
func ExampleConstantPacer() {
	p := loadgen.ConstantPacer{Freq: 100} // 100 req/s
	for _, sent := range []uint64{0, 1, 2} {
		wait, _ := p.Pace(0, sent)
		fmt.Printf("%v: request %d waits %v\n", p, sent, wait)
	}
	// Output:
	// Constant{100 req/s}: request 0 waits 0s
	// Constant{100 req/s}: request 1 waits 10ms
	// Constant{100 req/s}: request 2 waits 20ms
}

// Pace(0, n) is request n's due time: a ramp from 0 to 100 req/s over 10 s sends
// N(t) = 5t² requests by time t.
func ExampleRampPacer() {
	p := loadgen.RampPacer{From: 0, To: 100, Over: 10 * time.Second}
	for _, n := range []uint64{5, 20, 500} {
		due, _ := p.Pace(0, n)
		fmt.Printf("request %d at %v\n", n, due.Round(time.Millisecond))
	}
	// Output:
	// request 5 at 1s
	// request 20 at 2s
	// request 500 at 10s
}

// ComputeMetrics uses AIPerf's definitions; the *_vllm names hold vLLM's.
func ExampleComputeMetrics() {
	ms := time.Millisecond
	r := record.Client{Stream: true, Sent: 0, Done: 41 * ms, OSL: 3, Status: 200,
		Chunks: []record.Chunk{
			{T: 5 * ms, Choices: true}, // role-only delta: vLLM's TTFT, not AIPerf's
			{T: 10 * ms, Tokens: 1, Choices: true},
			{T: 20 * ms, Tokens: 1, Choices: true},
			{T: 40 * ms, Tokens: 1, Choices: true},
		}}
	m := loadgen.ComputeMetrics([]record.Client{r}, loadgen.MetricsOptions{})
	for _, name := range []string{record.MetricTTFT, record.MetricTTFTVLLM, record.MetricITL} {
		s, _ := m.Stat(name)
		fmt.Printf("%s = %.1f %s\n", name, s.Avg, s.Unit)
	}
	// Output:
	// time_to_first_token = 10.0 ms
	// time_to_first_token_vllm = 5.0 ms
	// inter_token_latency = 15.5 ms
}

// Run drives a server and returns per-request records and their metrics.
func ExampleRun() {
	tok, err := tokenizer.Load("gpt2")
	if err != nil {
		panic(err)
	}
	out, err := loadgen.Run(context.Background(), loadgen.Config{
		Target: loadgen.Target{
			URLs:  []string{"http://127.0.0.1:8000"},
			Model: "my-model",
		},
		Workload: loadgen.Workload{
			ISL:       distribution.Spec{Distribution: distribution.Normal{Mu: 512, Sigma: 64}},
			OSL:       distribution.Spec{Distribution: distribution.Fixed{Value: 128}},
			IgnoreEOS: true,
			Seed:      1,
		},
		Load: loadgen.Load{
			Rate:        20,
			Arrival:     loadgen.ArrivalPoisson,
			Concurrency: 64,
		},
		Stop: loadgen.Stop{
			Requests:       1000,
			WarmupRequests: 20,
		},
	}, tok, nil)
	if err != nil {
		panic(err)
	}
	ttft, _ := out.Metrics.Stat(record.MetricTTFT)
	fmt.Println(out.Mode, "TTFT p99:", ttft.P99, "ms")
}
