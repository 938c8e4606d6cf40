package perftest_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
)

// A test function receives t; examples make one up.
var t = &testing.T{}

// ExampleRun runs 100 streamed chat requests, four at a time, against the in-process
// mock server, then checks what the server received and how fast it answered.
func ExampleRun() {
	res := perftest.Run(t, perftest.Scenario{
		Name:      "chat",
		Tokenizer: "gpt2",
		Mock:      mockserver.Config{},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:  distribution.MustSpec("normal:256,32"),
				OSL:  distribution.MustSpec("fixed:64"),
				Seed: 1,
			},
			Load: loadgen.Load{
				Concurrency: 4,
			},
			Stop: loadgen.Stop{
				Requests: 100,
			},
		},
		// TTFT 20 ms, ITL 5 ms
	})
	res.AssertISL(t, distribution.Normal{Mu: 256, Sigma: 32}) // fits, on the server's counts
	res.AssertTokenizerMatch(t)                               // client and server agree
	res.Assert(t, "ttft_p99 <= 200ms", "goodput(ttft<=100ms, itl<=20ms) >= 0.95")
}

// Example gates a change the way a CI job should: not one run against one run, but K
// runs of the scenario against a baseline of K runs, run statistic by run statistic
// (TTFT, ITL and latency p50, output throughput), with more runs while the answer is
// inconclusive. The baseline is recorded once, on the build it describes, and kept in
// testdata (examples_test/regression_test.go re-records its own with -update).
func Example() {
	sc := perftest.Scenario{
		Name: "chat",
		Mock: mockserver.Config{}, // no URLs: the in-process mock; a real server's URLs go in Config.Target
		Config: loadgen.Config{
			Workload: loadgen.Workload{ISL: distribution.MustSpec("normal:256,32"), OSL: distribution.MustSpec("fixed:64"), Seed: 1},
			Load:     loadgen.Load{Concurrency: 4},
			Stop:     loadgen.Stop{Requests: 100},
		},
	}
	if *record {
		perftest.SaveBaseline(t, perftest.RunRuns(t, sc, 5), "testdata/chat-baseline") // run-001 … run-005, runs.json
	}
	base := perftest.LoadBaseline(t, "testdata/chat-baseline")
	// 5 runs, then 10 and 20 while a primary statistic is inconclusive; a regression of
	// 5% or more (Gate.Margin) whose interval excludes no change fails the test.
	perftest.AssertNoRegression(t, sc, base, perftest.Gate{})
}

// record would be a flag of the test binary (-record) that re-records the baseline.
var record = new(bool)

// fakeT prints failures instead of failing, so the example can show them.
type fakeT struct{ testing.TB }

func (fakeT) Helper()                        {}
func (fakeT) Name() string                   { return "TestChat" }
func (fakeT) Logf(string, ...any)            {}
func (fakeT) Attr(string, string)            {}
func (fakeT) Errorf(format string, a ...any) { fmt.Printf(format+"\n", a...) }
func (fakeT) Fatalf(format string, a ...any) { fmt.Printf(format+"\n", a...); os.Exit(1) }

// ExampleResult_AssertTTFT shows a breached objective's message: the verdict on the
// first line, then the evidence, where the recording is, the seed and how to re-run.
// The run is a recording kept in testdata.
func ExampleResult_AssertTTFT() {
	var t fakeT
	res := perftest.Load(t, "testdata/example")
	res.AssertTTFT(t, 0.99, 25*time.Millisecond)
	// Output:
	// perftest: TTFT p99 = 46ms, want <= 25ms  [scenario "example", concurrency=2, n=20, errors=0]
	//     quantiles:  p50=24.5ms  p90=35.8ms  p95=38.3ms  p99=46ms  max=47.9ms   (n=20, numpy linear)
	//     beyond:     9 of 20 requests > 25ms (45%)
	//     interval:   95% [37.8ms, unbounded] (order statistics, n=20); an upper bound needs n >= 368
	//     worst:      #req-2 47.9ms (prompt 64 tok)
	//                 #req-6 37.8ms (prompt 64 tok)
	//                 #req-1 35.5ms (prompt 64 tok)
	//                 #req-7 32.6ms (prompt 64 tok)
	//                 #req-9 32ms (prompt 64 tok)
	//     note:       n=20 is too small to estimate p99: it is interpolated from the extreme values
	//     rule:       ttft_p99<=25ms
	//     artifacts:  testdata/example/client.jsonl
	//     seed:       1   re-run: go test -run '^TestChat$' -count=1 ./perftest
}

// ExampleResult_AssertGoodput shows a goodput gate that a small run cannot pass by
// luck: every request met the SLO, but 95% is not proven by that few.
func ExampleResult_AssertGoodput() {
	var t fakeT
	res := perftest.Load(t, "testdata/example")
	res.AssertGoodput(t, perftest.SLO{TTFT: time.Second}, 0.95)
	// Output:
	// perftest: goodput = 100% (20 of 20 good), want >= 95% with 95% confidence, but the Wilson lower bound is 83.9%: too few requests to tell  [scenario "example", concurrency=2, n=20, errors=0]
	//     slo:        TTFT <= 1s
	//     hint:       at this goodput, about 78 requests are needed to show >= 95%
	//     rule:       goodput(ttft<=1s)>=0.95
	//     artifacts:  testdata/example/client.jsonl
	//     seed:       1   re-run: go test -run '^TestChat$' -count=1 ./perftest
}

// ExampleResult_Assert checks objectives written as rules, the text a scenario file's
// objectives.rules and `perfgate profile --assert` take. Each breach is reported with
// the rule as written; the rules that held are logged.
func ExampleResult_Assert() {
	var t fakeT
	res := perftest.Load(t, "testdata/example")
	res.Assert(t, "ttft_p50 <= 100ms", "osl_p50 >= 1000", "error_rate <= 0")
	// Output:
	// perftest: OSL p50 = 8, want >= 1000  [scenario "example", concurrency=2, n=20, errors=0]
	//     quantiles:  p50=8  p90=8  p95=8  p99=8  max=8   (n=20, numpy linear)
	//     beyond:     20 of 20 requests < 1000 (100%)
	//     interval:   95% [8, 8] (order statistics, n=20)
	//     worst:      #req-1 8  #req-0 8  #req-2 8  #req-3 8  #req-4 8
	//     rule:       osl_p50 >= 1000
	//     artifacts:  testdata/example/client.jsonl
	//     seed:       1   re-run: go test -run '^TestChat$' -count=1 ./perftest
}
