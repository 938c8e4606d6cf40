package check

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

func TestParseRule(t *testing.T) {
	for _, c := range []struct {
		text string
		want Rule // Source is set from text
	}{
		{"ttft_p99<=250ms", Rule{kind: ruleQuantile, metric: TTFT, p: 0.99, atMost: true, value: 0.25}},
		{" ttft_p99 <= 250ms ", Rule{kind: ruleQuantile, metric: TTFT, p: 0.99, atMost: true, value: 0.25}},
		// Bare latency numbers are ms, as AIPerf's.
		{"itl_p50<=20", Rule{kind: ruleQuantile, metric: ITL, p: 0.5, atMost: true, value: 0.02}},
		{"request_latency_p95<=1.5s", Rule{kind: ruleQuantile, metric: Latency, p: 0.95, atMost: true, value: 1.5}},
		{"output_tps_per_user_p10>=20", Rule{kind: ruleQuantile, metric: OutputTPS, p: 0.1, value: 20}},
		{"isl_p99.9<=600", Rule{kind: ruleQuantile, metric: ISL, p: 0.999, atMost: true, value: 600}},
		// The HTTP phases by AIPerf's names, in ms as every latency.
		{"http_req_waiting_p99<=200ms", Rule{kind: ruleQuantile, metric: HTTPWaiting, p: 0.99, atMost: true, value: 0.2}},
		{"http_req_tls_handshaking_p50<=5", Rule{kind: ruleQuantile, metric: HTTPTLSHandshaking, p: 0.5, atMost: true, value: 0.005}},
		{"error_rate<=0", Rule{kind: ruleErrorRate, atMost: true}},
		{"error_rate<=1%", Rule{kind: ruleErrorRate, atMost: true, value: 0.01}},
		{"goodput>=0.95", Rule{kind: ruleGoodput, value: 0.95}},
		{"goodput(ttft<=200ms, itl<=20ms) >= 95%", Rule{kind: ruleGoodput, value: 0.95, slo: &SLO{TTFT: 200 * time.Millisecond, ITL: 20 * time.Millisecond}}},
		{"output_token_throughput>=1000", Rule{kind: ruleRun, value: 1000, run: "output_token_throughput"}},
		{"request_throughput>=10", Rule{kind: ruleRun, value: 10, run: "request_throughput"}},
		{"request_throughput>=10 req/s", Rule{kind: ruleRun, value: 10, run: "request_throughput"}},
		{"tokenizer_match", Rule{kind: ruleTokenizerMatch}},
		{"tokenizer_match<=2", Rule{kind: ruleTokenizerMatch, atMost: true, value: 2}},
	} {
		got, err := ParseRule(c.text)
		c.want.Source = strings.TrimSpace(c.text)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) || fmt.Sprint(got.slo) != fmt.Sprint(c.want.slo) {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v", c.text, got, err, c.want)
		}
	}
}

func TestParseRuleErrors(t *testing.T) {
	for _, c := range []struct {
		text, want string
	}{
		{"ttft_p99<=25Oms", `check: rule "ttft_p99<=25Oms", column 11: ttft_p99 is a latency: want Go duration text such as 250ms or 1.5s (a bare number is ms)`},
		{"ttft_p99<250ms", `check: rule "ttft_p99<250ms", column 9: want <= or >= (a quantile or a rate is never exactly equal)`},
		{"tfft_p99<=1s", `check: rule "tfft_p99<=1s", column 1: unknown metric "tfft"; want ` + MetricNames()},
		{"ttft_p101<=1s", `check: rule "ttft_p101<=1s", column 7: the percentile after _p must be in [0, 100] (p100 = the maximum), e.g. ttft_p99`},
		{"goodput<=0.9", `check: rule "goodput<=0.9", column 8: want goodput>=FRACTION with a fraction in (0, 1], e.g. goodput>=0.95`},
		{"goodput(ttft<=200ms, tpot<=1ms)>=0.9", `check: rule "goodput(ttft<=200ms, tpot<=1ms)>=0.9", column 22: unknown SLO metric "tpot"; want ttft, itl or latency (or time_to_first_token, inter_token_latency, request_latency)`},
		{"goodput(ttft<=200ms>=0.9", `check: rule "goodput(ttft<=200ms>=0.9", column 15: ttft: want Go duration text such as 250ms or 1.5s (a bare number is ms)`},
		{"error_rate<=2", `check: rule "error_rate<=2", column 11: want error_rate<=FRACTION with a fraction in [0, 1], e.g. error_rate<=0.01`},
		{"error_rate", `check: rule "error_rate", column 11: want <= or >= and a value after the name`},
		{"throughput>=1", `check: rule "throughput>=1", column 1: unknown name "throughput"; want METRIC_pNN (METRIC: ` + MetricNames() + "), " + runRuleNames()},
		{"", `check: rule "", column 1: empty rule; want e.g. ttft_p99<=250ms, error_rate<=0 or goodput>=0.95`},
		{"tokenizer_match<=-1", `check: rule "tokenizer_match<=-1", column 16: want tokenizer_match or tokenizer_match<=TOKENS (a whole number >= 0)`},
	} {
		_, err := ParseRule(c.text)
		if err == nil || err.Error() != c.want || !errors.Is(err, ErrBadRule) {
			t.Errorf("ParseRule(%q) error =\n\t%v\nwant\n\t%s", c.text, err, c.want)
		}
	}
}

// The rules the per-metric methods build read back as the same rule.
func TestBuiltRulesParse(t *testing.T) {
	for _, r := range []Rule{
		QuantileRule(TTFT, 0.99, true, 0.2),
		QuantileRule(OutputTPS, 0.57, false, 20.5),
		GoodputRule(SLO{TTFT: 200 * time.Millisecond, Latency: 2 * time.Second}, 0.95),
	} {
		got, err := ParseRule(r.Source)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(r) || fmt.Sprint(got.slo) != fmt.Sprint(r.slo) {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v", r.Source, got, err, r)
		}
	}
}

func TestParseSLO(t *testing.T) {
	got, err := ParseSLO("time_to_first_token<=200, inter_token_latency<=20ms")
	if want := (SLO{TTFT: 200 * time.Millisecond, ITL: 20 * time.Millisecond}); err != nil || got != want {
		t.Errorf("ParseSLO = %v, %v; want %v", got, err, want)
	}
	// One parser reads both syntaxes: AIPerf's NAME:MS too.
	if got, err := ParseSLO("ttft:200 itl<=20ms"); err != nil || got != (SLO{TTFT: 200 * time.Millisecond, ITL: 20 * time.Millisecond}) {
		t.Errorf(`ParseSLO("ttft:200 itl<=20ms") = %v, %v`, got, err)
	}
	// The whole text is the SLO (issue 26: trailing text was ignored).
	if _, err := ParseSLO("ttft<=1s) trailing junk"); err == nil || err.Error() != `check: rule "ttft<=1s) trailing junk", column 9: want an SLO term such as ttft<=200ms or time_to_first_token:200, got ")"` {
		t.Errorf(`ParseSLO("ttft<=1s) trailing junk") = %v`, err)
	}
}

// A rule checks what the per-metric check it stands for checks, and says which rule it was.
func TestRuleCheck(t *testing.T) {
	var reqs []Request
	for i := range 100 {
		r := Request{ID: fmt.Sprint(i), TTFT: 0.1, Latency: 0.5, ISL: 10, ServerISL: 10, OSL: 5}
		if i == 99 {
			r.TTFT = 0.9
		}
		if i == 98 {
			r.Err = "http_status: 500"
		}
		reqs = append(reqs, r)
	}
	m := record.Metrics{}
	for _, c := range []struct {
		rule string
		pass bool
	}{
		{"ttft_p50<=150ms", true},
		{"ttft_max<=1s", false}, // not a form: checked below as a parse error
		{"ttft_p99.9<=500ms", false},
		{"error_rate<=0.05", true},
		{"error_rate<=0", false},
		{"goodput(ttft<=200ms)>=0.9", true},
		{"goodput(ttft<=50ms)>=0.5", false},
		{"tokenizer_match", true},
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			if c.rule != "ttft_max<=1s" {
				t.Errorf("ParseRule(%q): %v", c.rule, err)
			}
			continue
		}
		v := r.Check(reqs, m, SLO{}, 0)
		if v.Pass != c.pass || !strings.Contains(v.String(), "rule:") || !strings.Contains(v.String(), c.rule) {
			t.Errorf("%s: Check = pass %v, want %v:\n%s", c.rule, v.Pass, c.pass, v)
		}
	}
	golden(t, "rule_fail", MustRule("ttft_p99.9 <= 500ms").Check(reqs, m, SLO{}, 0).String())
	if v := (Rule{}).Check(reqs, m, SLO{}, 0); v.Pass {
		t.Error("the zero Rule passed; want a failing verdict")
	}
}

func TestRuleNeedsGaps(t *testing.T) {
	p99 := SLO{ITL: 20 * time.Millisecond, ITLPercentile: 0.99}
	for _, c := range []struct {
		rule string
		slo  SLO
		want bool
	}{
		{"goodput>=0.9", p99, true},                    // the scenario's SLO bounds a quantile of the gaps
		{"goodput>=0.9", SLO{ITL: time.Second}, false}, // the mean ITL needs no gaps
		{"goodput(itl<=20ms)>=0.9", p99, false},        // its own SLO, without a percentile
		{"itl_p99<=20ms", p99, false},
	} {
		if got := MustRule(c.rule).NeedsGaps(c.slo); got != c.want {
			t.Errorf("%s.NeedsGaps(%v) = %v, want %v", c.rule, c.slo, got, c.want)
		}
	}
	if !GoodputRule(p99, 0.9).NeedsGaps(SLO{}) {
		t.Error("GoodputRule(ITL p99).NeedsGaps = false, want true")
	}
}

// TestRunRuleFromCatalogue: the run-level rule names are the run statistics the
// catalogue derives: a run-level metric added to it is a floor rule by its name, in its
// unit, with no other edit, and is listed among the names; a built-in metric runs do
// not record (NoRunStat) is not a rule.
func TestRunRuleFromCatalogue(t *testing.T) {
	if _, err := ParseRule("total_token_throughput>=10"); err == nil {
		t.Error("total_token_throughput>=10 parsed: a metric runs do not record is not a rule")
	}
	restore := metric.Extend(metric.Def{Name: "test_image_rate", Header: "Test Image Rate", Unit: metric.UnitImgPerSec,
		Better: metric.Higher, Kind: metric.PerRun, Origin: "test", Help: "Images a second.",
		Total: func(t *metric.Totals) (float64, bool) { return float64(t.Images) / t.Duration, t.Duration > 0 }})
	defer restore()
	r, err := ParseRule("test_image_rate>=2 img/s")
	if err != nil || r.value != 2 || r.run != "test_image_rate" {
		t.Fatalf("ParseRule(test_image_rate>=2 img/s) = %+v, %v; want a floor of 2 on test_image_rate", r, err)
	}
	m := record.Metrics{Scalars: map[string]record.Scalar{"test_image_rate": {Unit: metric.UnitImgPerSec, Value: 1.5}, record.MetricBenchmarkDuration: {Unit: "sec", Value: 10}}}
	v := r.Check(nil, m, SLO{}, 0)
	if v.Pass || v.Unit != ImgPerSec || !strings.Contains(v.Summary, "test image rate = 1.5 img/s") {
		t.Errorf("test_image_rate>=2 on 1.5 img/s: pass %v, unit %q, summary %q; want a failure in img/s", v.Pass, v.Unit, v.Summary)
	}
	if _, err := ParseRule("test_image_rate<=2"); err == nil || !strings.Contains(err.Error(), "want test_image_rate>=VALUE") {
		t.Errorf("test_image_rate<=2: %v, want the floor form", err)
	}
	if _, err := ParseRule("nope>=1"); err == nil || !strings.Contains(err.Error(), ", test_image_rate or tokenizer_match") {
		t.Errorf("unknown name: %v, want the added metric among the names", err)
	}
	restore()
	if _, err := ParseRule("test_image_rate>=2"); err == nil {
		t.Error("test_image_rate>=2 parsed after the metric was removed")
	}
}
