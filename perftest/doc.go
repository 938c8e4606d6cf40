// Package perftest runs LLM-serving benchmark scenarios inside go test and decides
// pass/fail with statistics.
//
//	func TestChat(t *testing.T) {
//		sc := perftest.Scenario{
//			Name: "chat", // no URLs: the in-process mock server
//			Config: loadgen.Config{
//				Workload: loadgen.Workload{ISL: distribution.MustSpec("normal:512,64"), Seed: 1},
//				Load:     loadgen.Load{Concurrency: 8},
//				Stop:     loadgen.Stop{Requests: 200},
//			},
//		}
//		res := perftest.Run(t, sc)
//		res.Assert(t, "tokenizer_match", "ttft_p99 <= 200ms", "goodput(ttft<=200ms) >= 0.95")
//
//		// The regression gate: 5 runs of sc (more while inconclusive) against the 5 runs
//		// SaveBaseline(t, perftest.RunRuns(t, sc, 5), "testdata/baseline") kept.
//		base := perftest.LoadBaseline(t, "testdata/baseline")
//		perftest.AssertNoRegression(t, sc, base, perftest.Gate{})
//	}
//
// ExampleRun and ExampleAssertNoRegression show the same test compiled; the README's
// quick start is a whole file built outside this module by make test.
//
// [Run] starts the in-process mock server when the scenario names no endpoint, drives
// the load generator with t.Context() as parent (so workers stop before cleanups run),
// and writes the recordings and metrics to t.ArtifactDir(), kept by
// `go test -artifacts -outputdir=DIR` (DIR must exist) and removed when the test ends
// otherwise. It fails the test (t.Fatalf) only when the run
// cannot be set up; objectives are separate calls on the returned [Result].
//
// Objectives are rules written as text, as k6 writes thresholds ([Result.Assert],
// [check.ParseRule]): the same text a scenario file's objectives.rules and `perfgate
// profile --assert` take. The per-metric methods (AssertTTFT, AssertGoodput, …) are
// those rules built from Go values. A rule that does not parse fails the test with
// t.Fatalf, naming the rule and the column.
//
// The regression gate compares runs, not requests: [AssertNoRegression] runs the
// scenario K times and compares each run statistic (TTFT p50, output throughput, …)
// with a [Baseline] of K runs ([LoadBaseline], [RunRuns], saved by [SaveBaseline]),
// under one configuration, [Gate]; it first refuses a baseline of another workload.
// [AssertABNoRegression] alternates two builds instead.
//
// Every assertion comes in two forms, as in testify: AssertX reports a breach with
// t.Errorf and returns false, so one run reports every breach; RequireX stops the test
// with t.Fatalf. Messages start with a line that stands alone ("perftest: TTFT p99 =
// 412ms, want <= 200ms  [scenario …]") followed by labelled evidence, the seed and the
// command that re-runs the test.
//
// The decisions themselves live in package perftest/check and the run in
// perftest/run, neither of which imports "testing", so `perfgate profile` applies
// exactly the same gate outside go test. [Benchmark] runs a scenario inside a benchmark
// and reports its percentiles with b.ReportMetric, for benchstat.
//
// perftest is meant for tests: it never prints to stdout, and it sends load only to the
// endpoint the scenario names (or to the mock on 127.0.0.1).
package perftest
