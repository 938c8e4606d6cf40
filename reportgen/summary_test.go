package reportgen

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// sampleSummary is a regression gate's summary as package gate builds one.
func sampleSummary() Summary {
	return Summary{
		Title:    "perfgate regress: chat-burst",
		Mark:     "FAIL",
		Headline: "regression gate: regressed: TTFT p50 +12.0% (baseline 5 runs in 1 session, current 5 runs in 1 session)",
		Lines:    []string{"baseline: base: 5 runs against http://a:8000", "current: cur: 5 runs against http://b:8000"},
		Stats: []SummaryStat{
			{Name: "TTFT p50", Baseline: "20.0ms", Current: "22.4ms", Change: "+12.0%", Interval: "[+8.1%, +15.9%]", Verdict: "regressed", Gating: true},
			{Name: "output throughput", Baseline: "1,200 tok/s", Current: "1,190 tok/s", Change: "-0.8%", Interval: "[-2.0%, +0.4%]", Verdict: "no regression", Gating: true},
			{Name: "TTFT p99", Baseline: "40.0ms", Current: "41.0ms", Change: "+2.5%", Interval: "", Verdict: "inconclusive"},
		},
		Verdicts: []SummaryLine{{Mark: "FAIL", Text: "TTFT p50 regressed: +12.0% > δ 5%\n    evidence: more"}},
		Validity: []SummaryLine{{Mark: "WARN", Text: "client-bound: send lag p99 3ms"}},
		Trends:   []SummaryTrend{{Name: "chat-burst ttft_p50", Values: []float64{20, 20.2, 19.9, 20.1, 22.4}, Note: "newest 22.4ms"}},
		Artifacts: []SummaryLink{
			{Label: "gate report", Path: "cur/gate_report.html"},
			{Label: "runs", Path: "cur/runs.json"},
		},
	}
}

// The summary's layout is pinned by a golden file: headline with its mark, the lines
// under it, validity before the table, the table's six columns, verdicts (first line
// only), the sparkline and the links.
func TestSummaryGolden(t *testing.T) {
	var b strings.Builder
	if err := WriteSummary(&b, sampleSummary()); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.md", []byte(b.String()))
}

// Sparkline maps the smallest value to ▁ and the largest to █, linearly; a constant
// series is flat and a missing value a space.
func TestSparkline(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want string
	}{
		{[]float64{0, 1, 2, 3, 4, 5, 6, 7}, "▁▂▃▄▅▆▇█"},
		{[]float64{10, 20}, "▁█"},
		{[]float64{5, 5, 5}, "▄▄▄"},
		{[]float64{1, math.NaN(), 3, math.Inf(1)}, "▁ █ "},
		{[]float64{0, 0.5, 1}, "▁▅█"}, // 3.5 rounds to 4: ▅
		{nil, ""},
	} {
		if got := Sparkline(c.in); got != c.want {
			t.Errorf("Sparkline(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A headline that starts with its mark (the console's "FAIL: 1 of 2 assertion(s)") is
// not marked twice.
func TestSummaryMarkOnce(t *testing.T) {
	var b strings.Builder
	_ = WriteSummary(&b, Summary{Mark: "FAIL", Headline: "FAIL: 1 of 2 assertion(s)"})
	if !strings.Contains(b.String(), "\n**FAIL**: 1 of 2 assertion(s)\n") {
		t.Errorf("summary:\n%s", b.String())
	}
}

// Text from a run (a scenario name, an error message) cannot break the table or
// inject HTML or links: pipes, newlines, brackets and angle brackets are escaped.
func TestSummaryEscapes(t *testing.T) {
	s := Summary{
		Title:    "x <script>alert(1)</script>",
		Headline: "a|b\nc",
		Stats:    []SummaryStat{{Name: "p|q", Current: "[link](http://evil)", Verdict: "`code`", Gating: true}},
	}
	var b strings.Builder
	_ = WriteSummary(&b, s)
	got := b.String()
	for _, bad := range []string{"<script>", "a|b", "[link](", "`code`"} {
		if strings.Contains(got, bad) {
			t.Errorf("summary holds %q unescaped:\n%s", bad, got)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "| p") && strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") != 7 {
			t.Errorf("table row %q does not have six cells", l)
		}
	}
}

// A summary of any size stays under the limit: 20,000 statistics and verdicts with
// long texts, 2,000 artifacts and a 100,000-point history are cut, with a note that
// counts what was left out, and the cut falls between lines, never inside a rune.
func TestSummaryHugeStaysUnderLimit(t *testing.T) {
	long := strings.Repeat("é|", 3000) // 6,000 bytes, escaped larger still
	s := Summary{Title: long, Headline: long, Mark: "FAIL"}
	for i := range 20000 {
		s.Stats = append(s.Stats, SummaryStat{Name: fmt.Sprintf("stat_%d", i), Current: long, Verdict: "no regression", Gating: i%2 == 0})
		s.Verdicts = append(s.Verdicts, SummaryLine{Mark: "PASS", Text: long})
	}
	s.Validity = []SummaryLine{{Mark: "INVALID", Text: "client-bound"}}
	for i := range 2000 {
		s.Artifacts = append(s.Artifacts, SummaryLink{Label: fmt.Sprint("file ", i), Path: long})
	}
	vals := make([]float64, 100000)
	for i := range vals {
		vals[i] = float64(i % 17)
	}
	s.Trends = []SummaryTrend{{Name: "ttft_p50", Values: vals}}
	for _, limit := range []int{0, 64 << 10, 1024} {
		s.Limit = limit
		var b strings.Builder
		_ = WriteSummary(&b, s)
		got := b.String()
		want := cmpOr(limit, SummaryLimit)
		if len(got) > want {
			t.Errorf("limit %d: summary is %d bytes", want, len(got))
		}
		if !utf8.ValidString(got) {
			t.Errorf("limit %d: summary is not valid UTF-8 (cut inside a rune)", want)
		}
		if limit != 1024 {
			if !strings.Contains(got, "left out to keep this summary under GitHub's 1 MiB limit") {
				t.Errorf("limit %d: no note of the rows left out:\n%s", want, got[len(got)-300:])
			}
			if !strings.Contains(got, "**INVALID** client-bound") {
				t.Errorf("limit %d: the validity line was cut, but it goes first", want)
			}
			if strings.Count(got, "](") > summaryLinks {
				t.Errorf("limit %d: %d links, want at most %d", want, strings.Count(got, "]("), summaryLinks)
			}
		}
	}
	// Nothing left out: no note.
	var b strings.Builder
	_ = WriteSummary(&b, sampleSummary())
	if strings.Contains(b.String(), "left out") {
		t.Errorf("a small summary says rows were left out:\n%s", b.String())
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// WriteSummaryFile links the artifacts relative to the summary's own directory.
func TestWriteSummaryFileRelativeLinks(t *testing.T) {
	dir := t.TempDir()
	s := Summary{Headline: "h", Artifacts: []SummaryLink{{Label: "report", Path: filepath.Join(dir, "run", "report.html")}}}
	p := filepath.Join(dir, "out", "summary.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummaryFile(p, s); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), "[report](../run/report.html)") {
		t.Errorf("link not relative to the summary's directory:\n%s", b)
	}
}

// AppendStepSummary appends to $GITHUB_STEP_SUMMARY (keeping what a step wrote
// before), stays within what is left of the 1 MiB, refuses when nothing is left, and
// writes nothing when the variable is unset.
func TestAppendStepSummary(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "step_summary.md")
	if err := os.WriteFile(p, []byte("earlier step text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvStepSummary, p)
	got, err := AppendStepSummary(sampleSummary())
	if err != nil || got != p {
		t.Fatalf("AppendStepSummary = %q, %v", got, err)
	}
	b, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(b), "earlier step text\n\n### perfgate regress") || !strings.Contains(string(b), "**FAIL** regression gate: regressed") {
		t.Errorf("step summary:\n%s", b)
	}
	// Nearly full already: the summary takes what is left, no more.
	if err := os.WriteFile(p, []byte(strings.Repeat("x", SummaryLimit-2000)), 0o644); err != nil {
		t.Fatal(err)
	}
	big := sampleSummary()
	for i := range 1000 {
		big.Stats = append(big.Stats, SummaryStat{Name: fmt.Sprint("s", i), Current: "1"})
	}
	if _, err := AppendStepSummary(big); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Size() > SummaryLimit {
		t.Errorf("step summary grew to %d bytes, over %d", st.Size(), SummaryLimit)
	}
	// Full: refused, with the reason.
	if _, err := AppendStepSummary(big); err == nil || !strings.Contains(err.Error(), "no room") {
		t.Errorf("AppendStepSummary on a full file: %v, want a no-room error", err)
	}
	t.Setenv(EnvStepSummary, "")
	if got, err := AppendStepSummary(big); got != "" || err != nil {
		t.Errorf("unset: AppendStepSummary = %q, %v; want nothing written", got, err)
	}
}
