package perftest

import (
	"testing"

	"github.com/perfgate/perfgate/tokenizer"

	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/record"
)

// benchMetrics are the metrics Benchmark reports: name in the record.Metrics, quantile
// (0 = a scalar), benchstat unit.
var benchMetrics = []struct {
	metric string
	p      float64
	unit   string
}{
	{record.MetricTTFT, 0.5, "ttft-p50-ms"},
	{record.MetricTTFT, 0.99, "ttft-p99-ms"},
	{record.MetricITL, 0.5, "itl-p50-ms"},
	{record.MetricITL, 0.99, "itl-p99-ms"},
	{record.MetricRequestLatency, 0.5, "latency-p50-ms"},
	{record.MetricRequestLatency, 0.99, "latency-p99-ms"},
	{record.MetricOutputTokenThroughput, 0, "output-tok/s"},
	{record.MetricRequestThroughput, 0, "req/s"},
	{record.MetricErrorRate, 0, "error-rate"},
}

// Benchmark runs sc once per benchmark iteration and reports, averaged over the
// iterations, TTFT, ITL and request-latency percentiles (ms) and the output token and
// request throughputs with b.ReportMetric, so that benchstat can compare two commits:
//
//	go test -run '^$' -bench BenchmarkChat -benchtime 1x -count 10 ./... > new.txt
//	benchstat old.txt new.txt
//
// ns/op is the wall time of one whole run. Run -benchtime=1x (one run per -count) unless
// the scenario is short. The artifacts of the last run go to b.ArtifactDir(). It calls
// b.Fatalf on setup errors, and returns the last run's Result for further checks.
func Benchmark(b *testing.B, sc Scenario) *Result {
	b.Helper()
	sums := make([]float64, len(benchMetrics))
	runs := 0
	var last *run.Outcome
	dir, err := artifactDir(b.ArtifactDir(), sc.Name)
	if err != nil {
		b.Fatalf("perftest: scenario %q: artifacts: %v", sc.Name, err)
	}
	// Load the tokenizer once, outside the timed loop: a run's cost is the load, not the
	// tokenizer file's parse.
	tok, err := tokenizer.Load(sc.TokenizerOrDefault())
	if err != nil {
		b.Fatalf("perftest: scenario %q: tokenizer: %v", sc.Name, err)
	}
	for b.Loop() {
		out, err := run.Run(b.Context(), sc, dir, run.WithTokenizer(tok))
		if err != nil {
			b.Fatalf("perftest: %v", err)
		}
		last = out
		runs++
		for i, m := range benchMetrics {
			if m.p == 0 {
				sums[i] += out.Metrics.Value(m.metric)
			} else if s, ok := out.Metrics.Stat(m.metric); ok {
				v, _ := s.Quantile(m.p)
				sums[i] += v
			}
		}
	}
	if runs == 0 {
		return nil
	}
	for i, m := range benchMetrics {
		b.ReportMetric(sums[i]/float64(runs), m.unit)
	}
	return &Result{Outcome: last, rerun: rerunHint(b, last.Scenario.Seed)}
}
