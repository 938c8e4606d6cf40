package reportgen

import (
	"io"
	"testing"
)

// Benchmarks of report generation on a 10,000-request run (≈30 chunks each).

func BenchmarkWriteRunReport10k(b *testing.B) {
	recs := syntheticRun(10000, 1)
	m := metricsOf(recs)
	for b.Loop() {
		if err := WriteRunReport(io.Discard, recs, nil, RunReportOptions{Metrics: &m}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteAIPerfJSONL10k(b *testing.B) {
	recs := syntheticRun(10000, 1)
	for b.Loop() {
		if err := WriteAIPerfJSONL(io.Discard, recs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteExports10k(b *testing.B) {
	recs := syntheticRun(10000, 1)
	run := Run{Records: recs, Metrics: metricsOf(recs), Manifest: Manifest{Version: "bench"}}
	dir := b.TempDir()
	for b.Loop() {
		if _, err := WriteExports(dir, run, ExportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
