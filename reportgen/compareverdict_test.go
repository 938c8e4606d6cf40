package reportgen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
)

// TestCompareVerdicts: the same lengths in another order are identical; two seeds of
// one distribution are the same distribution at alpha 0.05; a 12-token ISL shift is
// different. Each verdict is checked against what --assert identical and same accept.
func TestCompareVerdicts(t *testing.T) {
	a := RecordingFromServer("a", serverRecording(300, 128, 3, record.ModeChatTemplate), nil)
	perm := a
	perm.ISL, perm.OSL = slices.Clone(a.ISL), slices.Clone(a.OSL)
	slices.Reverse(perm.ISL)
	rng := rand.New(rand.NewPCG(1, 1))
	rng.Shuffle(len(perm.OSL), func(i, j int) { perm.OSL[i], perm.OSL[j] = perm.OSL[j], perm.OSL[i] })
	same := RecordingFromServer("same", serverRecording(300, 128, 4, record.ModeChatTemplate), nil)
	shifted := RecordingFromServer("shifted", serverRecording(300, 140, 4, record.ModeChatTemplate), nil)
	oneOff := perm
	oneOff.OSL = slices.Clone(perm.OSL)
	oneOff.OSL[0]++ // one length differs: not identical, still one distribution
	for _, c := range []struct {
		b                   Recording
		kind                string
		identical, sameDist bool
	}{
		{perm, Identical, true, true},
		{oneOff, SameDistribution, false, true},
		{same, SameDistribution, false, true},
		{shifted, Different, false, false},
	} {
		v := Compare(a, c.b, 0.05)
		if v.Kind != c.kind || v.Holds(Identical) != c.identical || v.Holds(SameDistribution) != c.sameDist {
			t.Errorf("a vs %s: %s (holds identical %v, same %v), want %s", c.b.Label, v.Text, v.Holds(Identical), v.Holds(SameDistribution), c.kind)
		}
		if !strings.HasPrefix(v.Text, c.kind) {
			t.Errorf("verdict text %q does not start with %q", v.Text, c.kind)
		}
	}
}

// TestCompareVerdictFalseAlarms measures how often two recordings of one distribution
// are called different (the verdict's false-alarm rate, bounded by alpha through the
// Bonferroni split) and how often a 5-token ISL shift is caught (power), on 200 seeded
// pairs of 200 requests each.
func TestCompareVerdictFalseAlarms(t *testing.T) {
	const pairs, alpha = 200, 0.05
	falseAlarms, caught := 0, 0
	for i := range pairs {
		s := uint64(1000 + 2*i)
		a := RecordingFromServer("a", serverRecording(201, 128, s, record.ModeChatTemplate), nil)
		b := RecordingFromServer("b", serverRecording(201, 128, s+1, record.ModeChatTemplate), nil)
		c := RecordingFromServer("c", serverRecording(201, 133, s+1, record.ModeChatTemplate), nil)
		if Compare(a, b, alpha).Kind == Different {
			falseAlarms++
		}
		if Compare(a, c, alpha).Kind == Different {
			caught++
		}
	}
	t.Logf("'different' on one distribution: %d/%d (alpha %g); on a 5-token ISL shift (0.42 sd): %d/%d", falseAlarms, pairs, alpha, caught, pairs)
	if float64(falseAlarms) > alpha*pairs+3*4 { // alpha plus three binomial standard deviations (sqrt(200*.05*.95) ≈ 3.1)
		t.Errorf("false alarms %d/%d exceed alpha %g", falseAlarms, pairs, alpha)
	}
	if caught < pairs/2 {
		t.Errorf("a 5-token shift caught %d/%d times, want most", caught, pairs)
	}
}

// TestCompareReportCharts: the comparison draws share-normalised histograms and ECDF
// overlays with the two-sample D marked where KS finds it, states the verdict, and
// decodes the vocabulary with the given tokenizer, template tokens apart.
func TestCompareReportCharts(t *testing.T) {
	a, b := compareFixture()
	decode := func(id int) string { return fmt.Sprintf("tok%d", id) }
	var buf bytes.Buffer
	if err := WriteCompareReport(&buf, a, b, CompareOptions{Decode: decode, TemplateIDs: map[int]bool{13: true}}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`id="isl-ecdf"`, `id="osl-ecdf"`, `% of requests`, `class="ks-d"`, `id="verdict"`, `data-kind="different"`,
		`&#34;tok286&#34;`, `id="vocab-template"`, "decoded with the recordings' tokenizer"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare report lacks %s", want)
		}
	}
	// Token 13 is a template token: listed in the template table, not the prompt one.
	vocab := out[strings.Index(out, `id="vocab"`):strings.Index(out, `id="vocab-template"`)]
	if strings.Contains(vocab, "tok13") || !strings.Contains(out[strings.Index(out, `id="vocab-template"`):], "tok13") {
		t.Error("template token 13 is not listed apart from the prompt tokens")
	}
	v := Compare(a, b, 0.05)
	m := regexp.MustCompile(`class="ks-d" data-x="([0-9.]+)" data-d="([0-9.]+)"`).FindStringSubmatch(out)
	if m == nil || m[1] != fmt.Sprint(v.ISL.At) || m[2] != fmt.Sprintf("%.4f", v.ISL.Statistic) {
		t.Errorf("ISL KS mark %v, want at %v with D %.4f", m, v.ISL.At, v.ISL.Statistic)
	}
}

// TestShareHistogramCutsASpike: a point mass next to a spread sample does not flatten
// the spread one: the y axis is cut and the spike's bar says its value.
func TestShareHistogramCutsASpike(t *testing.T) {
	spike := make([]float64, 500)
	for i := range spike {
		spike[i] = 128
	}
	rng := rand.New(rand.NewPCG(2, 2))
	spread := make([]float64, 500)
	for i := range spread {
		spread[i] = 128 + 30*rng.NormFloat64()
	}
	svg := histogramShareSVG("OSL", "tokens", []histSet{{"fixed", spike}, {"spread", spread}}, 2)
	if !strings.Contains(svg, `class="bar cut"`) || !strings.Contains(svg, "↑100.00%") {
		t.Error("the spike is not cut and labelled")
	}
	if strings.Contains(histogramShareSVG("OSL", "tokens", []histSet{{"a", spread}, {"b", spread}}, 2), "bar cut") {
		t.Error("two similar samples are cut")
	}
}
