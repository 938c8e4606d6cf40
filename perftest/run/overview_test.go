package run

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

// overviewRE matches one number of report.html's overview: metric, statistic, exact value.
var overviewRE = regexp.MustCompile(`<div class="num" data-metric="([^"]+)"(?: data-stat="([^"]+)")?(?: data-value="([^"]+)")?>`)

// overviewMismatches compares the numbers of a report.html's overview with metrics.json's
// (m), and its answer line with the markdown summary's headline: one line per
// difference.
func overviewMismatches(page string, m record.Metrics, mark, headline string) []string {
	var errs []string
	got := overviewRE.FindAllStringSubmatch(page, -1)
	if len(got) != len(reportgen.OverviewNumbers) {
		return []string{fmt.Sprintf("overview has %d numbers, want %d", len(got), len(reportgen.OverviewNumbers))}
	}
	for i, n := range reportgen.OverviewNumbers {
		g := got[i]
		var want float64
		var ok bool
		switch n.Stat {
		case "":
			var s record.Scalar
			s, ok = m.Scalars[n.Metric]
			want = s.Value
		case "p99":
			var s record.Stat
			s, ok = m.Stats[n.Metric]
			want = s.P99
		default:
			errs = append(errs, "the test does not know the statistic "+n.Stat)
			continue
		}
		v, err := strconv.ParseFloat(g[3], 64)
		if g[1] != n.Metric || g[2] != n.Stat || !ok || err != nil || v != want {
			errs = append(errs, fmt.Sprintf("number %d: %s %s = %q in report.html, metrics.json has %v (present %v)", i, g[1], g[2], g[3], want, ok))
		}
	}
	rest := strings.TrimLeft(strings.TrimPrefix(headline, mark), ": ")
	line := `<p id="answer" class="answer fail-a"><b class="fail">` + mark + `</b> ` + html.EscapeString(rest) + `</p>`
	if !strings.Contains(page, line) {
		errs = append(errs, "report.html lacks the answer line "+line)
	}
	return errs
}

// TestReportOverviewIsMetricsJSON runs 30 requests against the fast mock with one
// objective that fails and checks that report.html's overview shows metrics.json's
// numbers exactly and the markdown summary's answer; a page with one number changed
// is told apart (the failure path).
func TestReportOverviewIsMetricsJSON(t *testing.T) {
	dir := t.TempDir()
	sc := quickScenario(1, 30)
	sc.Objectives = scenario.Objectives{Rules: []string{"error_rate<=0", "output_token_throughput>=1e12"}}
	out, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, reportgen.RunReportFile))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	var m record.Metrics
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	s := out.Summary()
	if s.Mark != "FAIL" || !strings.Contains(s.Headline, "1 of 2") {
		t.Fatalf("summary answer %s %q, want FAIL, 1 of 2 assertions", s.Mark, s.Headline)
	}
	for _, e := range overviewMismatches(string(page), m, s.Mark, s.Headline) {
		t.Error(e)
	}
	ttft := m.Stats[record.MetricTTFT].P99
	changed := strings.Replace(string(page), `data-value="`+strconv.FormatFloat(ttft, 'g', -1, 64)+`"`, `data-value="`+strconv.FormatFloat(ttft*1.01, 'g', -1, 64)+`"`, 1)
	if changed == string(page) || len(overviewMismatches(changed, m, s.Mark, s.Headline)) != 1 {
		t.Error("a report whose TTFT p99 differs from metrics.json's is not told apart")
	}
}
