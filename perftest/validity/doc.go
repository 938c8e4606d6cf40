// Package validity holds the checks that say whether a run's numbers can be trusted at
// all, apart from whether they meet the objectives (docs/validity.md). For each check it
// defines what it measures, its threshold and default, and the verdict it gives. A run's configuration
// of them is a [Config] (a scenario's "validity:" mapping); each check's [Mode] says
// what an invalid verdict does (fail the run, warn, or not checked).
//
// The checks judge plain measurements: a client's self-measurement ([ClientBound] on
// a loadgen.Self), per-window latency medians ([Steady] on [Point]s), a prefix-cache
// hit rate ([WarmCache]), the client's overhead in TTFT ([ClientDistorted]), and the
// shards of a merged run ([CombineShards]). Package scenario gathers those
// measurements from a run and lists the verdicts (run.Outcome.Verdicts with
// check.KindValidity); this package imports neither the mock server nor a run.
package validity
