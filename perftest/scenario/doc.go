// Package scenario is a perfgate benchmark scenario as data: the Scenario type, its
// file format and its defaults. Its fields' types are here too ([Class], [Objectives],
// [Abort], [Exports]). perftest (inside go test) and cmd/perfgate (in a shell or CI step)
// read and check the same [Scenario] with it; package perftest/run runs it.
//
//	sc, err := scenario.ReadFile("chat.yaml")   // or a Scenario literal
//	if err := sc.Validate(); err != nil {       // every problem at once
//		return err
//	}
//	fmt.Println(sc.Describe())                  // "the in-process mock server (chat), concurrency=4, …"
//
// A [Scenario] is plain data (JSON and YAML with the same field names; durations as
// "30s" — a bare number is an error —, distributions as "normal:128,20", objectives as
// rules such as "ttft_p99 <= 250ms"). [ReadFile] reports every problem of a file at its
// FILE:LINE:COL, with a suggestion for a misspelt field ([Nearest]); [Scenario.Validate] checks
// a scenario built in Go the same way. [Scenario.WithDefaults] fills the documented
// defaults where a scenario enters a run; [Scenario.Describe] says what it runs;
// [DiffWorkload] and [DiffTarget] say whether two scenarios measure the same workload
// against the same target.
//
// The package runs nothing: it starts no server, sends no request and loads no
// tokenizer. Its field types are those of the packages that use them (loadgen.Config
// inline, mockserver.Config, servermetrics.Config, validity.Config, gate.Gate), so it
// imports their configuration, never their running. Running a scenario, its artifacts
// and the runs of a series are package perftest/run's.
package scenario
