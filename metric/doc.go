// Package metric is perfgate's one definition of every reported quantity. It holds the
// per-request values derived from a [record.Client] (TTFT, TTST, ITL in the AIPerf and
// vLLM variants, inter-chunk latency, request latency, OSL by client count or by usage,
// per-user throughputs), the quantile ([Quantile], numpy's linear method), the standard
// deviation (population, ddof=0), the goodput [SLO], and the [Accumulator] that turns a
// stream of records into a [record.Metrics] in memory that does not grow with tokens.
//
//	acc := metric.NewAccumulator(metric.Options{UsageOSL: true})
//	for i := range recs {
//		acc.Add(&recs[i])
//	}
//	m := acc.Metrics() // m.Stats[record.MetricTTFT].P99, …
//
// loadgen's live accumulator, reportgen (console table, exports, HTML), perftest/check
// and the CLI's progress line all call this package, so a number means the same thing
// wherever it is shown. It imports only the standard library and [record]; it does not
// fit distributions or run statistical tests (package distribution does).
package metric
