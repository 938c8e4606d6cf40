// Package gate is perfgate's run-level regression gate, deciding on recorded data alone.
// It holds the statistics of one run ([RunStats], [RunStatList]), K runs of one
// workload ([Series], kept as runs.json), and the comparison of a current series with
// a baseline ([Compare], configured by a [Gate], answered by a [GateResult]), with its
// sequential plan ([Looks]) and what the two sides measured with ([CompareIdentity]).
//
//	base, err := run.LoadSeries("baseline")            // runs.json, described
//	cur, _, err := run.RunSeries(ctx, sc, 5, "current", run.SeriesOptions{})
//	r := gate.Compare(base, cur, gate.Gate{Margin: 0.05}, 0)
//	fmt.Println(r.Headline())                            // regression gate: no regression …
//	for _, v := range r.AllVerdicts() { fmt.Println(v) }
//
// The package decides on data only: it imports neither the mock server, the load
// generator nor the tokenizer, so a package that reads results (history) can gate
// them without linking what runs them. Running scenarios stays in package run
// (RunSeries, Extend, GateRuns, Interleave, SeriesOf, SaveSeries, Outcome.RunStats).
//
// # The workload's identity
//
// A gate compares two series only when they sent the same workload. The scenario a
// series ran is kept as JSON ([Series.Scenario], a json.RawMessage, so runs.json is
// written back as it was read), and what the gate compares of it is flattened by the
// scenario side into named settings ([Series.Workload]: the settings that decide what
// was sent, and where it was sent, as package scenario's Scenario.Workload and
// Scenario.Target name them). Package scenario fills Workload whenever it builds or
// loads a series (run.LoadSeries, RunSeries, SeriesOf, DescribeSeries); this
// package's [LoadSeries] reads runs.json and leaves it nil. A series whose Workload is
// nil is an unknown workload, and an unknown workload is never taken for the same
// one: [Compare] refuses it (a [Difference] of Field [FieldWorkload] naming the
// unknown side, a headline saying so, no statistic compared), IgnoreWorkload does not
// waive it, and [Series.AppendSession] refuses it too.
//
// The package never prints; its errors keep the "scenario:" prefix they had when the
// gate lived in package scenario, so the CLI's messages are unchanged.
package gate
