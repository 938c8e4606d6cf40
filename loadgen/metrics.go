package loadgen

import (
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// MetricsOptions tunes [ComputeMetrics]. The zero value uses the client's token counts
// and no SLO.
type MetricsOptions struct {
	// UsageOSL makes OSL (and every metric derived from it: ITL, throughputs) use the
	// server's usage.completion_tokens when present, instead of the client tokenizer's
	// count of the received text (AIPerf's default is the client count).
	UsageOSL bool
	// UsageISL makes ISL the server's usage.prompt_tokens when present.
	UsageISL bool
	// ByModel breaks the metrics down by model too (record.Metrics.Models).
	ByModel bool
	// SLO is the goodput objective ([metric.SLO]); goodput = good requests / benchmark
	// duration. Zero: goodput is not reported.
	SLO metric.SLO
}

// ComputeMetrics summarises records with perfgate's one set of metric definitions
// (package metric: AIPerf's, and vLLM's where they differ, under the *_vllm names).
// Warmup records are left out. Errored records count toward error metrics only.
// Percentiles use numpy's linear interpolation ([metric.Quantile]); per-token series
// (inter-chunk latency, vLLM ITL) come from a [metric.Sketch].
func ComputeMetrics(recs []record.Client, opt MetricsOptions) record.Metrics {
	a := newAccumulator(opt)
	for i := range recs {
		a.Add(&recs[i])
	}
	return a.Metrics()
}

// newAccumulator returns the run's incremental metrics, which keep no records, so long
// runs can drop records as they are written.
func newAccumulator(opt MetricsOptions) *metric.Accumulator {
	a := metric.NewAccumulator(metric.Options{UsageOSL: opt.UsageOSL, UsageISL: opt.UsageISL, ByModel: opt.ByModel})
	if !opt.SLO.IsZero() {
		a.SetSLO(opt.SLO)
	}
	return a
}

// runAccumulator returns the metrics a run with cfg accumulates as its records arrive:
// every metric, approximately when the records are only in cfg.RecordFile (RAM stays
// flat however long the run; the exact values are in the file), or only the run-level
// ones with cfg.TotalsOnly.
func runAccumulator(cfg *Config) *metric.Accumulator {
	a := newAccumulator(MetricsOptions{UsageOSL: cfg.UsageOSL, UsageISL: cfg.UsageISL, SLO: cfg.SLO, ByModel: len(cfg.ModelNames) > 1})
	switch {
	case cfg.TotalsOnly:
		a.TotalsOnly()
	case cfg.DiscardRecords && cfg.RecordFile != "":
		a.Approximate()
	}
	return a
}
