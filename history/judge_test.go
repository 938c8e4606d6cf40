package history

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// trendOf is metric's trend over n results at 2% noise (seeded), the newest from at
// scaled by 1+step, with its change points found.
func trendOf(metric string, n, at int, step float64, seed uint64) *Trend {
	rng := rand.New(rand.NewPCG(seed, seed))
	var rs []Result
	for i := range n {
		level := 0.1
		if i >= at {
			level *= 1 + step
		}
		r := Result{ID: int64(i + 1), Fingerprint: "fp", Scenario: "nightly", Commit: fmt.Sprintf("%07d", i), Created: t0.Add(time.Duration(i) * time.Hour)}
		for k := range 3 {
			r.Runs = append(r.Runs, Run{Run: k + 1, Stats: map[string]float64{metric: level * (1 + 0.02*rng.NormFloat64())}})
		}
		rs = append(rs, r)
	}
	tr := NewTrend(rs, metric)
	tr.Detect(Detection{}, State{})
	return tr
}

// TestJudge: each status on a constructed trend, with its failure path beside it.
func TestJudge(t *testing.T) {
	c := Check{}
	for _, tc := range []struct {
		name     string
		tr       *Trend
		want     TrendStatus
		have     int
		contains string
	}{
		{"3 results", trendOf("ttft_p50", 3, 99, 0, 1), TrendTooFew, 3, "not enough data: 3 results; change-point detection needs at least 6"},
		{"5 results", trendOf("ttft_p50", 5, 99, 0, 1), TrendTooFew, 5, "needs at least 6"},
		{"6 flat results", trendOf("ttft_p50", 6, 99, 0, 1), TrendNoRegression, 0, "no regression"},
		{"10 flat, the newest 10% slower", trendOf("ttft_p50", 11, 10, 0.10, 2), TrendTooFewSince, 1, "too few results since commit 0000010 to tell: the newest 1 result (from result 11) is"},
		{"10 flat, the newest two 10% slower", trendOf("ttft_p50", 12, 10, 0.10, 2), TrendTooFewSince, 2, "the newest 2 results (from result 11) are"},
		{"10 flat, the newest 10% faster", trendOf("ttft_p50", 11, 10, -0.10, 2), TrendNoRegression, 0, "no regression"},
		{"throughput 10% lower", trendOf("output_tps", 11, 10, -0.10, 2), TrendTooFewSince, 1, "too few results since"},
		{"10 flat, the newest 3% slower (within the margin)", trendOf("ttft_p50", 11, 10, 0.03, 2), TrendNoRegression, 0, "no regression"},
		{"a settled step", trendOf("ttft_p50", 16, 10, 0.15, 3), TrendRegressed, 0, "ttft_p50 regressed by 1"},
	} {
		v := c.Judge(tc.tr)
		if v.Status != tc.want || v.Have != tc.have || !strings.Contains(v.String(), tc.contains) {
			t.Errorf("%s: %v (have %d) %q; want %v (have %d) containing %q", tc.name, v.Status, v.Have, v.String(), tc.want, tc.have, tc.contains)
		}
	}
	// Noise alone is not news: over many seeded flat series, none says too few results
	// since a change (each newest point must pass the margin and every point before it).
	for seed := range uint64(200) {
		if v := c.Judge(trendOf("ttft_p50", 12, 99, 0, 100+seed)); v.Status != TrendNoRegression {
			t.Fatalf("flat series (seed %d): %v %s", 100+seed, v.Status, v)
		}
	}
}

// TestReportCountsWhatCheckCounts: the report's regression count is JudgeAll's over the
// gating metrics, which is what `history check` prints; a regression of a reported-only
// metric is drawn and marked, not counted.
func TestReportCountsWhatCheckCounts(t *testing.T) {
	trends := []*Trend{trendOf("ttft_p50", 16, 10, 0.15, 3), trendOf("ttft_p99", 16, 10, 0.3, 4), trendOf("itl_p99", 16, 10, 0.3, 5)}
	c := Check{}
	j := c.JudgeAll(trends, PrimaryStats())
	if len(j.Regressions) != 1 || !j.Gating[0] || j.Gating[1] || len(c.JudgeAll(trends, nil).Regressions) != 3 {
		t.Fatalf("JudgeAll: %d regressions over the primary statistics (gating %v), want 1; %d over all, want 3", len(j.Regressions), j.Gating, len(c.JudgeAll(trends, nil).Regressions))
	}
	var b bytes.Buffer
	if err := WriteReport(&b, trends, ReportOptions{Now: t0}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, `id="regressions">1 regression(s) in ttft_p50, itl_p50, latency_p50, output_tps`) || strings.Count(page, "(reported, not gating)") != 2 {
		t.Errorf("report: want 1 regression counted and 2 marked reported, not gating")
	}
	b.Reset()
	if err := WriteReport(&b, []*Trend{trendOf("ttft_p50", 4, 99, 0, 1)}, ReportOptions{Now: t0}); err != nil {
		t.Fatal(err)
	}
	if page := b.String(); !strings.Contains(page, "Not enough data to tell") || strings.Contains(page, "No regression") {
		t.Errorf("report of 4 results: want 'Not enough data to tell', not 'No regression'")
	}
}
