package scenario

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/validity"
)

// TestClientBoundShards: a merged run judges each shard in its own band: one
// shard's marginal lag warns, another's gross lag fails the merged verdict, naming it.
func TestClientBoundShards(t *testing.T) {
	lag := func(p50 time.Duration) *loadgen.Self {
		return &loadgen.Self{SendLag: loadgen.LagStats{N: 1000, P50: p50, P99: p50, Max: p50}, CPUs: 1}
	}
	o := &Outcome{Scenario: Scenario{Config: loadgen.Config{Load: loadgen.Load{Rate: 100}}}}
	o.shards = []shardValidity{{Index: 0, Self: lag(20 * time.Microsecond)}, {Index: 1, Self: lag(5 * time.Millisecond)}}
	v := find(o.shardValidityVerdicts(), validity.CheckClientBound)
	if v == nil || !v.Pass || v.Status != check.Invalid || !strings.Contains(v.Summary, "shard 1: client-bound: send lag p50 5ms > 1ms") {
		t.Errorf("marginal shard: %+v", v)
	}
	o.shards = append(o.shards, shardValidity{Index: 2, Self: lag(2 * time.Second)})
	v = find(o.shardValidityVerdicts(), validity.CheckClientBound)
	if v == nil || v.Pass || !strings.Contains(v.Summary, "shard 2: client-bound: send lag p50 2s > 50ms") {
		t.Errorf("gross shard: %+v", v)
	}
	o.Scenario.Validity.ClientBoundGross = validity.ModeWarn
	if v = find(o.shardValidityVerdicts(), validity.CheckClientBound); v == nil || !v.Pass {
		t.Errorf("gross shard under warn: %+v", v)
	}
}

// TestGrossKeysYAML: the gross band's keys and max_schedule_lag read from a scenario
// file; a bad mode is refused naming the key.
func TestGrossKeysYAML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.yaml")
	writeFile(t, path, "rate: 100\nrequests: 10\nmax_schedule_lag: 10s\nvalidity:\n  client_bound_gross: warn\n  gross_send_lag: 200ms\n  min_achieved_rate: 0.8\n")
	got, err := ReadFile(path)
	if err != nil || got.MaxScheduleLag != 10*time.Second || got.Validity.ClientBoundGross != validity.ModeWarn ||
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
