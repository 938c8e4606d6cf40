// Package run runs perfgate benchmark scenarios without the testing package, and reads
// their artifacts back. It is how perftest (inside go test) and cmd/perfgate (in a
// shell or CI step) run the same [scenario.Scenario] the same way.
//
//	sc, err := scenario.ReadFile("chat.yaml")         // or a Scenario literal
//	out, err := run.Run(ctx, sc, "artifacts/chat")    // mock started when sc.URLs is empty
//	for _, v := range out.Check() {                   // the scenario's Objectives
//		if !v.Pass {
//			fmt.Fprintln(os.Stderr, v)
//		}
//	}
//
// [Preflight] checks a real endpoint before a run (connect, /v1/models, the model
// served); perftest.Run and `perfgate profile` call it. [Run] checks the client's own
// limits ([CheckLimits]), loads the tokenizer, starts the in-process mock server on
// 127.0.0.1 at a free port when no endpoint is given (or the scenario's server process),
// drives package loadgen, stops the mock so its recording is complete, and writes the
// artifacts (client and server recordings, metrics, the scenario with its API key
// redacted, the objectives' verdicts, and reportgen's AIPerf-compatible exports and HTML
// report; [ClientFile] and the other file names). [Load] reads such a directory back,
// e.g. a baseline kept in testdata by [SaveBaseline]. [RunOption]s change how Run runs
// without changing the scenario: [OnRecord] sees each request as it finishes
// (progress), [WithTokenizer] shares a loaded tokenizer, [WithCommand] records the
// command line. [Repeat], [Sweep] and [Search] make several runs (repeats with
// consecutive seeds, load levels, a bisection for the highest load that meets the
// objectives), each through a [Runner], and write their summaries beside the runs;
// cmd/perfgate's --num-runs, --sweep-* and --search-* are these calls. [RunSeries],
// [GateRuns] and [Interleave] run the sides of a regression gate.
//
// [Outcome.Requests] joins the client recording with the server's input-token counts
// (the mock's usage.prompt_tokens or its recording) and the chat template's overhead,
// in the form package perftest/check decides on. The package does not decide
// pass/fail by itself beyond [Outcome.Check], and it never prints. Its errors keep the
// "scenario: " prefix they had when this package was part of package scenario.
package run
