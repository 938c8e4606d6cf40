package reportgen

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/metric"
)

// TestRunReportJobsSection: report.html has the "Jobs and turns" section for a run of
// agent jobs: the job metrics, the TTFT-by-turn chart and a row per turn index with
// the metrics' own p50 and p99; a run of single-turn requests has none.
func TestRunReportJobsSection(t *testing.T) {
	run := testRun()
	for i := range run.Records {
		r := &run.Records[i]
		r.Job, r.Conversation, r.Turn = fmt.Sprintf("job-%d", i/10*10), fmt.Sprintf("c%d", i/10), i%10
	}
	m := metric.Compute(run.Records, metric.Options{}, nil)
	if len(m.TTFTByTurn) != 10 {
		t.Fatalf("%d turns in the metrics; want 10", len(m.TTFTByTurn))
	}
	var b bytes.Buffer
	if err := WriteRunReport(&b, run.Records, &run.Manifest, RunReportOptions{Metrics: &m}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	want := []string{"<h2>Jobs and turns</h2>", `<table id="job-metrics">`, `id="ttft-by-turn"`, `<table id="ttft-by-turn-table">`,
		"Job Latency p50 (ms)", "Sub-agent Fan-out", "Tool Wait Share"}
	for _, e := range m.TTFTByTurn {
		want = append(want, fmt.Sprintf("<tr><td class=\"l\">%d</td><td>%d</td><td>%s</td><td>%s</td></tr>", e.Turn, e.Count, num(e.P50), num(e.P99)))
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("report lacks %s", w)
		}
	}
	b.Reset()
	plain := testRun()
	if err := WriteRunReport(&b, plain.Records, &plain.Manifest, RunReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Jobs and turns") {
		t.Error("a run of single-turn requests has a Jobs and turns section")
	}
}
