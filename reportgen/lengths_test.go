package reportgen

import (
	"bytes"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/record"
)

// chatRun is syntheticRun with each request's chat-template count (27 tokens more
// than the content, in the fallback mode) and the server's counts of the same requests.
func chatRun(n int) ([]record.Client, []int, []int) {
	recs := syntheticRun(n, 3)
	var sisl, sosl []int
	for i := range recs {
		r := &recs[i]
		r.ISLTemplate, r.TokenizationMode = r.ISL+27, record.ModeChatTemplateFallback
		if r.OK() {
			sisl, sosl = append(sisl, r.ISL+27), append(sosl, r.OSL)
		}
	}
	return recs, sisl, sosl
}

// TestRunReportLengths: the run report draws ISL and OSL as both sides counted them,
// the template overhead apart with its mode, the target over the checked lengths'
// ECDF with the KS gap marked, and says in one line why the two ISL counts differ.
func TestRunReportLengths(t *testing.T) {
	recs, sisl, sosl := chatRun(300)
	target := distribution.Length{Dist: distribution.MustSpec("normal:100,10").Distribution}
	checked := make([]int, len(sisl))
	for i := range sisl {
		checked[i] = sisl[i] - 27
	}
	l := &RunLengths{ServerISL: sisl, ServerOSL: sosl, ServerModes: map[string]int{record.ModeChatTemplateFallback: len(sisl)},
		ISL: LengthFit{Source: "server count", Lengths: checked, Target: target, Verdict: &Verdict{Pass: true, Text: "ISL fits normal:100,10"}, Asserted: true}}
	var b bytes.Buffer
	if err := WriteRunReport(&b, recs, nil, RunReportOptions{Lengths: l}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`id="isl-hist"`, `id="isl-ecdf"`, `id="osl-hist"`, `id="osl-ecdf"`, `id="isl-template"`, `class="line target-cdf"`,
		`class="ks-d"`, "server received", "server generated", "chat_template_fallback", "PASS ISL fits normal:100,10", `id="isl-note"`,
		"the server counted", "27.00 tokens of chat template"} {
		if !strings.Contains(out, want) {
			t.Errorf("run report lacks %s", want)
		}
	}
	// The D drawn is the discrete KS statistic the length check computes.
	m := regexp.MustCompile(`class="ks-d" data-x="([0-9.]+)" data-d="([0-9.]+)"`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("no KS mark")
	}
	d, _ := strconv.ParseFloat(m[2], 64)
	want := distribution.FitLength(checked, target).Statistic
	if math.Abs(d-want) > 1e-4 {
		t.Errorf("marked D = %v, FitLength's D = %v", d, want)
	}
	if strings.Contains(out, `id="error-timeline"`) == false {
		t.Error("a run with failures lacks its error timeline")
	}
}

// TestKSToTargetMatchesFitLength compares the drawn gap with distribution.FitLength's
// statistic on samples that fit and samples that do not.
func TestKSToTargetMatchesFitLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	target := distribution.Length{Dist: distribution.MustSpec("normal:128,20").Distribution}
	for _, shift := range []float64{0, 5, 30} {
		v := make([]int, 500)
		for i := range v {
			v[i] = max(1, int(math.Round(128+shift+20*rng.NormFloat64())))
		}
		got := ksToTarget(sortedInts(v), target)
		want := distribution.FitLength(v, target).Statistic
		if d := math.Abs(got.Y2 - got.Y1); math.Abs(d-want) > 1e-9 {
			t.Errorf("shift %v: D = %v at %v, FitLength says %v", shift, d, got.X, want)
		}
	}
}

func sortedInts(v []int) []float64 {
	f := ints(v)
	slices.Sort(f)
	return f
}

// TestNoErrorChartWhenNothingFailed: a run without failures draws no error timeline
// (the failure path of the golden test, whose run has failures and draws one).
func TestNoErrorChartWhenNothingFailed(t *testing.T) {
	var ok []record.Client
	for _, r := range syntheticRun(200, 1) {
		if r.OK() {
			ok = append(ok, r)
		}
	}
	var b bytes.Buffer
	if err := WriteRunReport(&b, ok, nil, RunReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, `error-timeline`) || !strings.Contains(out, `id="no-errors"`) {
		t.Error("a run without failures draws an error timeline, or does not say nothing failed")
	}
}

func TestISLCountsNote(t *testing.T) {
	for _, c := range []struct {
		c    ISLCounts
		want string
	}{
		{ISLCounts{Content: 128.13}, ""},
		{ISLCounts{Content: 128.13, Server: 128.13, HasServer: true}, ""},
		{ISLCounts{Content: 128.13, Template: 27, TemplateN: 5, Modes: []string{"chat_template_fallback"}, Server: 155.13, HasServer: true},
			"ISL counts message contents: 128.13 tokens a request; the server counted 155.13: + 27.00 tokens of chat template (chat_template_fallback)"},
		{ISLCounts{Content: 128.13, Server: 150, HasServer: true}, "ISL counts message contents: 128.13 tokens a request; the server counted 150.00 (+21.87 more; the client did not count the chat template)"},
		{ISLCounts{Content: 100, Template: 27, TemplateN: 5, Modes: []string{"chat_template"}}, "ISL counts message contents: 100.00 tokens a request; with the chat template a server counts 127.00 (+ 27.00 tokens (chat_template))"},
	} {
		if got := c.c.Note(); got != c.want {
			t.Errorf("%+v.Note() =\n%q, want\n%q", c.c, got, c.want)
		}
	}
}

// TestCountNouns: the pooled gap metrics say they count gaps, so an n above the
// request (or token) count reads as what it is.
func TestCountNouns(t *testing.T) {
	m := record.Metrics{Stats: map[string]record.Stat{
		record.MetricITLVLLM: {Unit: "ms", Count: 644404}, record.MetricTTFT: {Unit: "ms", Count: 5000}}}
	rows, _ := metricRows(m)
	got := map[string]string{}
	for _, r := range rows {
		got[r.Name] = r.Counts
	}
	if got[info(record.MetricITLVLLM).Header] != "gaps between chunks" || got[info(record.MetricTTFT).Header] != "requests" {
		t.Errorf("count nouns = %v", got)
	}
}
