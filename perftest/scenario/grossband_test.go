package scenario

import (
	"path/filepath"
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
	for _, tc := range []struct {
		name     string
		s        loadgen.Self
		cfg      Validity
		openLoop bool
		mode     Mode   // the mode the verdict takes (ModeOff: left out)
		pass     bool   // after the mode
		summary  string // the summary's start ("" = "client not the bottleneck")
	}{
		{"free", free, Validity{}, true, ModeWarn, true, ""},
		{"marginal: warn by default", marginal, Validity{}, true, ModeWarn, true, "client-bound: send lag p50 5ms > 1ms"},
		{"marginal: fail when asked", marginal, Validity{ClientBound: ModeFail}, true, ModeFail, false, "client-bound: send lag p50 5ms > 1ms"},
		{"marginal: off", marginal, Validity{ClientBound: ModeOff}, true, ModeOff, true, ""},
		{"gross lag: fail by default", grossLag, Validity{}, true, ModeFail, false, "client-bound: send lag p50 2.3s > 50ms: the client could not keep up"},
		{"gross lag: warn-only", grossLag, Validity{ClientBoundGross: ModeWarn}, true, ModeWarn, true, "client-bound: send lag p50 2.3s > 50ms"},
		{"gross lag: the band off, judged marginal", grossLag, Validity{ClientBoundGross: ModeOff}, true, ModeWarn, true, "client-bound: send lag p50 2.3s > 50ms"},
		{"gross lag: a higher threshold", grossLag, Validity{GrossSendLag: 3 * time.Second}, true, ModeWarn, true, "client-bound: send lag p50 2.3s > 1ms"},
		{"gross rate", grossRate, Validity{}, true, ModeFail, false, "client-bound: achieved 1,120 req/s, 56% of the 2,000 offered < 90%; send lag p50 20ms > 1ms: the client could not keep up"},
		{"gross rate: a lower floor", grossRate, Validity{MinAchievedRate: 0.5}, true, ModeWarn, true, "client-bound: send lag p50 20ms > 1ms"},
		{"a stall at the end of a short run", stall, Validity{}, true, ModeWarn, true, ""},
		{"closed loop: no schedule to judge", grossRate, Validity{}, false, ModeWarn, true, ""},
		{"aborted: fails whatever the modes", aborted, Validity{ClientBound: ModeOff, ClientBoundGross: ModeWarn}, true, ModeFail, false, "client-bound: the run was stopped early: schedule 4.2s behind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, m := clientBound(tc.s, tc.cfg, tc.openLoop, false)
			if m != tc.mode {
				t.Errorf("mode %q, want %q", m, tc.mode)
			}
			if m == ModeOff {
				return
			}
			got := apply(v, m)
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

// TestClientBoundShards: a merged run judges each shard in its own band: one
// shard's marginal lag warns, another's gross lag fails the merged verdict, naming it.
func TestClientBoundShards(t *testing.T) {
	lag := func(p50 time.Duration) *loadgen.Self {
		return &loadgen.Self{SendLag: loadgen.LagStats{N: 1000, P50: p50, P99: p50, Max: p50}, CPUs: 1}
	}
	o := &Outcome{Scenario: Scenario{Config: loadgen.Config{Load: loadgen.Load{Rate: 100}}}}
	o.shards = []shardValidity{{Index: 0, Self: lag(20 * time.Microsecond)}, {Index: 1, Self: lag(5 * time.Millisecond)}}
	v := find(o.shardValidityVerdicts(), CheckClientBound)
	if v == nil || !v.Pass || v.Status != check.Invalid || !strings.Contains(v.Summary, "shard 1: client-bound: send lag p50 5ms > 1ms") {
		t.Errorf("marginal shard: %+v", v)
	}
	o.shards = append(o.shards, shardValidity{Index: 2, Self: lag(2 * time.Second)})
	v = find(o.shardValidityVerdicts(), CheckClientBound)
	if v == nil || v.Pass || !strings.Contains(v.Summary, "shard 2: client-bound: send lag p50 2s > 50ms") {
		t.Errorf("gross shard: %+v", v)
	}
	o.Scenario.Validity.ClientBoundGross = ModeWarn
	if v = find(o.shardValidityVerdicts(), CheckClientBound); v == nil || !v.Pass {
		t.Errorf("gross shard under warn: %+v", v)
	}
}

// TestValidityGrossFields: the gross band's settings are checked like the others.
func TestValidityGrossFields(t *testing.T) {
	var got []string
	bad := func(f string, a ...any) { got = append(got, f) }
	Validity{ClientBoundGross: "maybe", GrossSendLag: -1, MinAchievedRate: 1.5}.validate(bad)
	want := []string{"validity.%s %q: want fail, warn or off", "validity.gross_send_lag %v: want a duration >= 0", "validity.min_achieved_rate %v: want a fraction in [0, 1]"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("problems %q, want %q", got, want)
	}
}

// TestGrossKeysYAML: the gross band's keys and max_schedule_lag read from a scenario
// file; a bad mode is refused naming the key.
func TestGrossKeysYAML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.yaml")
	writeFile(t, path, "rate: 100\nrequests: 10\nmax_schedule_lag: 10s\nvalidity:\n  client_bound_gross: warn\n  gross_send_lag: 200ms\n  min_achieved_rate: 0.8\n")
	got, err := ReadFile(path)
	if err != nil || got.MaxScheduleLag != 10*time.Second || got.Validity.ClientBoundGross != ModeWarn ||
		got.Validity.GrossSendLag != 200*time.Millisecond || got.Validity.MinAchievedRate != 0.8 {
		t.Errorf("ReadFile: %+v, max_schedule_lag %v, %v", got.Validity, got.MaxScheduleLag, err)
	}
	writeFile(t, path, "rate: 100\nrequests: 10\nvalidity:\n  client_bound_gross: maybe\n")
	if sc, err := ReadFile(path); err == nil {
		if err = sc.Validate(); err == nil || !strings.Contains(err.Error(), `validity.client_bound_gross "maybe"`) {
			t.Errorf("bad mode: %v", err)
		}
	} else if !strings.Contains(err.Error(), "client_bound_gross") {
		t.Errorf("bad mode: %v", err)
	}
}
