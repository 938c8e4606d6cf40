package run

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/record"
)

// TestRunStats: a run's statistics are metric.Quantile's over its measured requests
// (warm-up left out), its throughputs, and the goodput fraction against the scenario's
// SLO, written to runstats.json and kept when the records are let go.
func TestRunStats(t *testing.T) {
	sc := sweepScenario()
	sc.API = ""
	sc.Requests, sc.WarmupRequests, sc.Concurrency = 40, 3, 4
	sc.Mock.Fast = false
	sc.Mock.TTFT = distribution.MustSpec("lognormal:3,0.5")
	sc.Mock.ITL = distribution.MustSpec("fixed:0.5")
	sc.Objectives.SLO.TTFT = 25 * time.Millisecond
	sc.Mock.ServerTimings = record.ServerVLLM // the server-timing statistics too
	dir := t.TempDir()
	o, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := records(t, o)
	var ttft, lat []float64
	good := 0
	for i := range cs {
		q := metric.Of(&cs[i], metric.Options{})
		if q.Warmup {
			continue
		}
		ttft = append(ttft, q.TTFT.Seconds())
		lat = append(lat, q.Latency.Seconds())
		if q.TTFT <= sc.Objectives.SLO.TTFT {
			good++
		}
	}
	if len(ttft) != 40 {
		t.Fatalf("%d measured requests, want 40", len(ttft))
	}
	rs := o.RunStats()
	for name, want := range map[string]float64{
		"ttft_p50":         metric.Quantile(ttft, 0.5),
		"ttft_p99":         metric.Quantile(ttft, 0.99),
		"latency_p90":      metric.Quantile(lat, 0.9),
		"goodput_fraction": float64(good) / 40,
		"output_tps":       o.Metrics.Value(record.MetricOutputTokenThroughput),
		"request_tps":      o.Metrics.Value(record.MetricRequestThroughput),
	} {
		got, ok := rs.Stats[name]
		if !ok || math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("RunStats %s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	for _, s := range gate.RunStatList() {
		_, stat := o.Metrics.Stats[s.Metric]
		_, scalar := o.Metrics.Scalars[s.Metric]
		if s.Metric == record.MetricSpecDecodeAcceptanceRate && !stat {
			continue // the mock does no speculative decoding: a run without it has no such statistic
		}
		if slices.Contains(metric.GPUMetrics, s.Metric) {
			continue // GPU telemetry's: not scraped here (TestRunGPUTelemetry has them)
		}
		if slices.Contains(metric.JobMetricNames, s.Metric) {
			continue // agent jobs': plain requests here (cmd/perfgate's TestProfileAgentTrace and loadgen's TestAgentReplay have them)
		}
		if _, ok := rs.Stats[s.Name]; !ok {
			t.Errorf("RunStats has no %s (metrics have it: %v)", s.Name, stat || scalar)
		}
	}
	if rs.Requests != 40 || rs.Errors != 0 || rs.Seed != 5 || rs.Target != "the in-process mock server" {
		t.Errorf("RunStats = %+v; want 40 requests, seed 5, the mock as target", rs)
	}
	back, err := gate.ReadRunStats(dir)
	if err != nil || back.Stats["ttft_p50"] != rs.Stats["ttft_p50"] || len(back.Stats) != len(rs.Stats) {
		t.Errorf("ReadRunStats = %+v, %v; want what RunStats gave", back, err)
	}
	o.dropRecords()
	if kept := o.RunStats(); kept.Stats["itl_p99"] != rs.Stats["itl_p99"] || len(kept.Stats) != len(rs.Stats) {
		t.Errorf("after dropRecords, RunStats = %+v; want the same stats", kept)
	}
	// No SLO: no goodput fraction; nothing completed: no quantiles.
	o = &Outcome{Client: []record.Client{{Index: 0, ErrorKind: record.ErrConnect}}}
	if rs := o.RunStats(); len(rs.Stats) != 0 || rs.Errors != 1 {
		t.Errorf("a run with only a failure: RunStats = %+v, want no stats and 1 error", rs)
	}
	if _, err := gate.ReadRunStats(t.TempDir()); err == nil {
		t.Error("ReadRunStats of an empty directory: want an error")
	}
}
