package run

import (
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/perftest/validity"
)

// TestClientBoundShards: a merged run judges each shard in its own band: one
// shard's marginal lag warns, another's gross lag fails the merged verdict, naming it.
func TestClientBoundShards(t *testing.T) {
	lag := func(p50 time.Duration) *loadgen.Self {
		return &loadgen.Self{SendLag: loadgen.LagStats{N: 1000, P50: p50, P99: p50, Max: p50}, CPUs: 1}
	}
	o := &Outcome{Scenario: scenario.Scenario{Config: loadgen.Config{Load: loadgen.Load{Rate: 100}}}}
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
