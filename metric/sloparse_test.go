package metric

import (
	"strings"
	"testing"
	"time"
)

// The one SLO parser reads both syntaxes, and a bound that would mean "no bound"
// (negative after overflow, or rounding to 0) is an error with the value and the
// limit (issue 26), never a silently dropped gate.
func TestParseSLO(t *testing.T) {
	for text, want := range map[string]SLO{
		"time_to_first_token:200 inter_token_latency:20": {TTFT: 200 * msec, ITL: 20 * msec},
		"ttft<=200ms, itl<=20ms":                         {TTFT: 200 * msec, ITL: 20 * msec},
		"ttft <= 1.5s,latency:2000":                      {TTFT: 1500 * msec, Latency: 2 * time.Second},
		"request_latency<=2562047h47m16.854775807s":      {Latency: MaxDuration},
		"itl:0.000001":                                   {ITL: time.Nanosecond},
		"itl<=9.2e12":                                    {ITL: 9.2e18},
	} {
		got, err := ParseSLO(text)
		if err != nil || got != want {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v", text, got, err, want)
		}
		if back, err := ParseSLO(got.Terms()); err != nil || back != got {
			t.Errorf("ParseSLO(%q).Terms() = %q reads back as %+v, %v", text, got.Terms(), back, err)
		}
	}
	for text, want := range map[string]string{
		"ttft:1e300":              `column 6: ttft: 1e300 ms is beyond the longest duration, 2562047h47m16.854775807s`,
		"ttft:inf":                `column 6: ttft: inf ms is beyond the longest duration`,
		"itl:9.3e12":              `column 5: itl: 9.3e12 ms is beyond the longest duration`,
		"latency:1e-7":            `column 9: latency: 1e-7 ms rounds to 0ns; the shortest bound is 1ns (1e-06 ms)`,
		"ttft<=3000000h":          `column 7: ttft: 3000000h is beyond the longest duration`,
		"ttft<=-5ms":              `column 7: ttft: -5ms: want a positive duration of at least 1ns`,
		"ttft:0":                  `column 6: ttft: 0 ms: want a positive duration`,
		"ttft:nan":                `column 6: ttft: nan: want a number of milliseconds`,
		"ttft<=1s) trailing junk": `column 9: want an SLO term such as ttft<=200ms or time_to_first_token:200, got ")"`,
		"ttft:200 ttft<=1s":       `column 10: ttft is bounded twice`,
		"ttft>=1s":                `column 5: an SLO term is an upper bound: want ttft<=DURATION`,
		"tpot:3":                  `column 1: unknown SLO metric "tpot"`,
		"ttft":                    `column 5: want ttft<=DURATION or ttft:MILLISECONDS`,
		"":                        `column 1: empty`,
		"ttft:x":                  `column 6: ttft: "x": want a number of milliseconds`,
	} {
		_, err := ParseSLO(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSLO(%q) = %v; want an error containing %s", text, err, want)
		}
	}
}

// A negative bound (which Miss would read as "no bound") or a percentile outside
// [0, 1] is an error of Err, which loadgen's and the scenario's Validate report.
func TestSLOErr(t *testing.T) {
	if err := (SLO{TTFT: 200 * msec}).Err(); err != nil {
		t.Errorf("Err = %v", err)
	}
	err := SLO{TTFT: -msec, Latency: -1, ITLPercentile: 2}.Err()
	for _, want := range []string{"slo ttft -1ms: want a positive duration (0 = no bound)", "slo latency -1ns", "slo itl_percentile 2: want within [0, 1]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Err = %v; want %q", err, want)
		}
	}
}
