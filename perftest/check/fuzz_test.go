package check

import (
	"bufio"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
)

// seeds reads testdata/rules.txt, one seed a line.
func seeds(f *testing.F) {
	file, err := os.Open("testdata/rules.txt")
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			f.Add(line)
		}
	}
}

// FuzzParseRule feeds rule text (scenario files and --assert carry it) to ParseRule.
// Property: an error, or a rule whose String reads back to an equal rule, whose
// latency and SLO bounds are positive durations (never "no bound"), and that a
// QuantileRule rebuilt from its parts also reads back.
func FuzzParseRule(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseRule(text)
		if err != nil {
			return
		}
		back, err := ParseRule(r.String())
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Fatalf("ParseRule(%q) = %+v, whose String %q reads back as %+v, %v", text, r, r.String(), back, err)
		}
		if r.slo != nil {
			checkSLO(t, text, *r.slo)
			g := GoodputRule(*r.slo, r.value)
			if back, err := ParseRule(g.Source); err != nil || *back.slo != *r.slo || back.value != r.value {
				t.Fatalf("GoodputRule(%v, %v).Source = %q reads back as %+v, %v", *r.slo, r.value, g.Source, back, err)
			}
		}
		if r.kind == ruleQuantile {
			if math.IsNaN(r.value) || math.IsInf(r.value, 0) || !(r.value > 0) {
				t.Fatalf("ParseRule(%q) has the bound %v", text, r.value)
			}
			q := QuantileRule(r.metric, r.p, r.atMost, r.value)
			back, err := ParseRule(q.Source)
			if err != nil || !reflect.DeepEqual(back, q) {
				t.Fatalf("QuantileRule of ParseRule(%q) = %q reads back as %+v, %v; want %+v", text, q.Source, back, err, q)
			}
			if !strings.HasPrefix(q.Source, string(r.metric)) || back.value <= 0 {
				t.Fatalf("QuantileRule of ParseRule(%q) = %q", text, q.Source)
			}
		}
	})
}

// checkSLO fails unless every bound of s is a positive duration or unset.
func checkSLO(t *testing.T, text string, s SLO) {
	t.Helper()
	for _, d := range []time.Duration{s.TTFT, s.ITL, s.Latency} {
		if d < 0 {
			t.Fatalf("%q gives the SLO %+v, with a negative bound", text, s)
		}
	}
	if s.IsZero() {
		t.Fatalf("%q gives the zero SLO (no bound)", text)
	}
}

// FuzzParseSLO feeds SLO text in both syntaxes (AIPerf's --goodput NAME:MS, and rule
// terms NAME<=DURATION) to the one SLO parser. Property: an error, or an SLO with
// positive bounds whose Terms read back to the same SLO.
func FuzzParseSLO(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, text string) {
		s, err := metric.ParseSLO(text)
		if err != nil {
			return
		}
		checkSLO(t, text, s)
		back, err := metric.ParseSLO(s.Terms())
		if err != nil || back != s {
			t.Fatalf("ParseSLO(%q) = %+v, whose Terms %q read back as %+v, %v", text, s, s.Terms(), back, err)
		}
		if c, err := ParseSLO(text); err != nil || c != s {
			t.Fatalf("check.ParseSLO(%q) = %+v, %v; metric.ParseSLO %+v", text, c, err, s)
		}
	})
}

// The longest duration is written back as itself, not as a negative duration that
// ParseRule refuses (issue 26).
func TestQuantileRuleLongest(t *testing.T) {
	r := MustRule("ttft_p99<=2562047h47m16.854775807s")
	q := QuantileRule(TTFT, 0.99, true, r.value)
	if q.Source != "ttft_p99<=2562047h47m16.854775807s" {
		t.Errorf("QuantileRule = %q", q.Source)
	}
	if _, err := ParseRule(q.Source); err != nil {
		t.Error(err)
	}
	for text, want := range map[string]string{
		"ttft_p99<=1e300":         "ttft_p99 is a latency: 1e300 ms is beyond the longest duration",
		"ttft_p99<=1e-7":          "ttft_p99 is a latency: 1e-7 ms rounds to 0ns",
		"ttft_p99<=inf":           "ttft_p99 is a latency: inf ms is beyond the longest duration",
		"ttft_p99<=3000000h":      "ttft_p99 is a latency: 3000000h is beyond the longest duration",
		"goodput(itl:1e300)>=0.9": "column 13: itl: 1e300 ms is beyond the longest duration",
	} {
		if _, err := ParseRule(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRule(%q) = %v; want an error containing %q", text, err, want)
		}
	}
}
