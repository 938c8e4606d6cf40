package validity

import (
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
)

// TestClientBoundBands: the marginal and gross bands and the abort on constructed
// self-measurements, each at its mode: what fails, what warns, what is left out.
func TestClientBoundBands(t *testing.T) {
	ms := time.Millisecond
	self := func(p50 time.Duration, offered, achieved float64, n int) loadgen.Self {
		return loadgen.Self{SendLag: loadgen.LagStats{N: n, P50: p50, P99: 2 * p50, Max: 3 * p50}, OfferedRate: offered, AchievedRate: achieved, CPUs: 2, CPUFraction: 0.2, Elapsed: 10 * time.Second}
	}
	free := self(30*time.Microsecond, 2000, 2000, 20000)
	marginal := self(5*ms, 2000, 1990, 20000)
	grossLag := self(2300*ms, 2000, 1900, 20000)
	// 20,000 requests due over 10 s, sent over 17.9 s: 56% of the rate.
	grossRate := self(20*ms, 2000, 1120, 20000)
	// 40 requests due over 195 ms whose last went out 25 ms late: 89% of the rate, but
	// 25 ms behind at most: a stall, not a shortfall.
	stall := self(40*time.Microsecond, 200, 200*195.0/220, 40)
	aborted := marginal
	aborted.Aborted = "schedule 4.2s behind for 5s at 2,000 req/s offered, 1,120 achieved: the client cannot keep up"
	ruled := marginal // stopped by an abort rule: judged on its lag alone
	ruled.Aborted, ruled.AbortedBy = "error_rate>0.5 held for 5s", loadgen.AbortObjective
	for _, tc := range []struct {
		name     string
		s        loadgen.Self
		cfg      Config
		openLoop bool
		mode     Mode   // the mode the verdict takes (ModeOff: left out)
		pass     bool   // after the mode
		summary  string // the summary's start ("" = "client not the bottleneck")
	}{
		{"free", free, Config{}, true, ModeWarn, true, ""},
		{"marginal: warn by default", marginal, Config{}, true, ModeWarn, true, "client-bound: send lag p50 5ms > 1ms"},
		{"marginal: fail when asked", marginal, Config{ClientBound: ModeFail}, true, ModeFail, false, "client-bound: send lag p50 5ms > 1ms"},
		{"marginal: off", marginal, Config{ClientBound: ModeOff}, true, ModeOff, true, ""},
		{"gross lag: fail by default", grossLag, Config{}, true, ModeFail, false, "client-bound: send lag p50 2.3s > 50ms: the client could not keep up"},
		{"gross lag: warn-only", grossLag, Config{ClientBoundGross: ModeWarn}, true, ModeWarn, true, "client-bound: send lag p50 2.3s > 50ms"},
		{"gross lag: the band off, judged marginal", grossLag, Config{ClientBoundGross: ModeOff}, true, ModeWarn, true, "client-bound: send lag p50 2.3s > 50ms"},
		{"gross lag: a higher threshold", grossLag, Config{GrossSendLag: 3 * time.Second}, true, ModeWarn, true, "client-bound: send lag p50 2.3s > 1ms"},
		{"gross rate", grossRate, Config{}, true, ModeFail, false, "client-bound: achieved 1,120 req/s, 56% of the 2,000 offered < 90%; send lag p50 20ms > 1ms: the client could not keep up"},
		{"gross rate: a lower floor", grossRate, Config{MinAchievedRate: 0.5}, true, ModeWarn, true, "client-bound: send lag p50 20ms > 1ms"},
		{"a stall at the end of a short run", stall, Config{}, true, ModeWarn, true, ""},
		{"closed loop: no schedule to judge", grossRate, Config{}, false, ModeWarn, true, ""},
		{"stopped by an abort rule: judged on its lag", ruled, Config{}, true, ModeWarn, true, "client-bound: send lag p50 5ms > 1ms"},
		{"aborted: fails whatever the modes", aborted, Config{ClientBound: ModeOff, ClientBoundGross: ModeWarn}, true, ModeFail, false, "client-bound: the run was stopped early: schedule 4.2s behind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, m := ClientBound(tc.s, tc.cfg, tc.openLoop, false)
			if m != tc.mode {
				t.Errorf("mode %q, want %q", m, tc.mode)
			}
			if m == ModeOff {
				return
			}
			got := Apply(v, m)
			want := tc.summary
			if want == "" {
				want = "client not the bottleneck"
			}
			if got.Pass != tc.pass || !strings.HasPrefix(got.Summary, want) {
				t.Errorf("pass %v, summary %q; want %v, %q…", got.Pass, got.Summary, tc.pass, want)
			}
			if (want != "client not the bottleneck") != (got.Status == check.Invalid) {
				t.Errorf("status %v for %q", got.Status, got.Summary)
			}
		})
	}
}

// TestClientBoundConstructed: the thresholds on constructed self-measurements.
func TestClientBoundConstructed(t *testing.T) {
	ok := loadgen.Self{SendLag: loadgen.LagStats{N: 1000, P50: 20 * time.Microsecond, P99: 300 * time.Microsecond, Max: time.Millisecond}, CPUs: 2, CPUFraction: 0.3, Elapsed: time.Second}
	if v, _ := ClientBound(ok, Config{}, true, false); !v.Pass || v.Status != check.Decided || !strings.Contains(v.String(), "send lag:") {
		t.Errorf("a healthy client:\n%s", v)
	}
	// A free client on a busy machine: stalls of tens of ms now and then (p99), on
	// time for most requests (p50): not client-bound (measured: docs/validity.md).
	stalls := ok
	stalls.SendLag.P99, stalls.SendLag.Max = 80*time.Millisecond, 100*time.Millisecond
	if v, _ := ClientBound(stalls, Config{}, true, false); !v.Pass || v.Status != check.Decided {
		t.Errorf("p50 20µs, p99 80ms (scheduler stalls):\n%s", v)
	}
	lag := ok
	lag.SendLag.P50, lag.SendLag.P99 = 4*time.Millisecond, 9*time.Millisecond
	v, _ := ClientBound(lag, Config{}, true, false)
	if v.Pass || v.Status != check.Invalid || !strings.Contains(v.Summary, "send lag p50 4ms > 1ms") {
		t.Errorf("lag p50 4ms:\n%s", v)
	}
	if v, _ := ClientBound(lag, Config{MaxSendLag: 5 * time.Millisecond}, true, false); !v.Pass {
		t.Errorf("lag 4ms under a 5ms threshold:\n%s", v)
	}
	if v, _ := ClientBound(lag, Config{}, false, false); !v.Pass {
		t.Errorf("a closed loop is not judged by lag:\n%s", v)
	}
	cpu := ok
	cpu.CPUFraction = 0.97
	if v, _ := ClientBound(cpu, Config{}, false, false); v.Pass || !strings.Contains(v.Summary, "client CPU 97% of 2 CPUs > 90%") {
		t.Errorf("CPU 97%%:\n%s", v)
	}
	if v, _ := ClientBound(cpu, Config{}, false, true); !v.Pass {
		t.Errorf("the in-process mock shares the CPU: not judged:\n%s", v)
	}
	if v, m := ClientBound(cpu, Config{ClientBound: ModeWarn}, false, false); m != ModeWarn || !Apply(v, m).Pass || v.Status != check.Invalid {
		t.Errorf("warn mode: %+v, mode %q", v, m)
	}
}

// TestValidityGrossFields: the gross band's settings are checked like the others.
func TestValidityGrossFields(t *testing.T) {
	var got []string
	bad := func(f string, a ...any) { got = append(got, f) }
	Config{ClientBoundGross: "maybe", GrossSendLag: -1, MinAchievedRate: 1.5}.Validate(bad)
	want := []string{"validity.%s %q: want fail, warn or off", "validity.gross_send_lag %v: want a duration >= 0", "validity.min_achieved_rate %v: want a fraction in [0, 1]"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("problems %q, want %q", got, want)
	}
}
