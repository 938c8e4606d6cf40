package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
)

// TestRunStatListFromCatalogue: the statistics derived from the built-in catalogue are
// the ones runs recorded before the derivation, with the same names, labels, units,
// directions, primary flags and order, so runs.json, the history and the gate's
// reports do not change; and the prefix-cache hit rate, added to the catalogue since.
func TestRunStatListFromCatalogue(t *testing.T) {
	lat := func(name, label, m string, p float64, primary bool) RunStat {
		return RunStat{Name: name, Label: label, Unit: check.Seconds, Primary: primary, Metric: m, Quantile: p}
	}
	// The server's per-request timings and the client's overhead (docs/measurement.md),
	// recorded only by runs whose server reported them, so other runs' runs.json is as
	// it was: at each quantile, after the built-in latencies.
	server := func(p float64) []RunStat {
		q := fmt.Sprintf("p%.0f", 100*p)
		return []RunStat{
			lat("server_ttft_"+q, "server TTFT "+q, record.MetricServerTTFT, p, false),
			lat("server_queue_time_"+q, "server queue time "+q, record.MetricServerQueueTime, p, false),
			lat("server_prefill_time_"+q, "server prefill time "+q, record.MetricServerPrefillTime, p, false),
			lat("server_decode_time_"+q, "server decode time "+q, record.MetricServerDecodeTime, p, false),
			lat("server_request_latency_"+q, "server request latency "+q, record.MetricServerRequestLatency, p, false),
			{Name: "spec_decode_acceptance_rate_" + q, Label: "spec-decode acceptance rate " + q, Unit: check.None, HigherIsBetter: true,
				Metric: record.MetricSpecDecodeAcceptanceRate, Quantile: p},
			lat("client_overhead_"+q, "client overhead "+q, record.MetricClientOverhead, p, false),
		}
	}
	want := []RunStat{
		lat("ttft_p50", "TTFT p50", record.MetricTTFT, 0.5, true),
		lat("itl_p50", "ITL p50", record.MetricITL, 0.5, true),
		lat("latency_p50", "request latency p50", record.MetricRequestLatency, 0.5, true),
		{Name: "output_tps", Label: "output token throughput", Unit: check.TokPerSec, HigherIsBetter: true, Primary: true, Metric: record.MetricOutputTokenThroughput},
	}
	want = append(want, server(0.5)...)
	want = append(want,
		lat("ttft_p90", "TTFT p90", record.MetricTTFT, 0.9, false),
		lat("itl_p90", "ITL p90", record.MetricITL, 0.9, false),
		lat("latency_p90", "request latency p90", record.MetricRequestLatency, 0.9, false))
	want = append(want, server(0.9)...)
	want = append(want,
		lat("ttft_p99", "TTFT p99", record.MetricTTFT, 0.99, false),
		lat("itl_p99", "ITL p99", record.MetricITL, 0.99, false),
		lat("latency_p99", "request latency p99", record.MetricRequestLatency, 0.99, false))
	want = append(want, server(0.99)...)
	want = append(want, []RunStat{
		{Name: "request_tps", Label: "request throughput", Unit: check.ReqPerSec, HigherIsBetter: true, Metric: record.MetricRequestThroughput},
		// Recorded only by runs that report it (docs/prefix-cache.md), so other runs'
		// runs.json is as it was.
		{Name: "prefix_cache_hit_rate", Label: "prefix cache hit rate", Unit: check.Fraction, HigherIsBetter: true, Metric: record.MetricPrefixCacheHitRate},
		// GPU telemetry's efficiencies: recorded only by runs with --gpu-telemetry.
		{Name: "tokens_per_joule", Label: "tokens per joule", Unit: check.TokPerJ, HigherIsBetter: true, Metric: record.MetricTokensPerJoule},
		{Name: "output_tps_per_gpu", Label: "output token throughput per GPU", Unit: check.TokPerGPU, HigherIsBetter: true, Metric: record.MetricOutputTPSPerGPU},
		{Name: "energy_per_request", Label: "energy per request", Unit: check.JPerReq, Metric: record.MetricEnergyPerRequest},
		// Recorded only by runs of agent jobs (docs/agents.md).
		{Name: "job_latency_p50", Label: "job latency p50", Unit: check.Seconds, Metric: record.MetricJobLatencyP50},
		{Name: "job_latency_p90", Label: "job latency p90", Unit: check.Seconds, Metric: record.MetricJobLatencyP90},
		{Name: "job_latency_p99", Label: "job latency p99", Unit: check.Seconds, Metric: record.MetricJobLatencyP99},
		{Name: "job_ttft_p50", Label: "job TTFT p50", Unit: check.Seconds, Metric: record.MetricJobTTFTP50},
		{Name: "job_ttft_p99", Label: "job TTFT p99", Unit: check.Seconds, Metric: record.MetricJobTTFTP99},
		{Name: "jobs_per_hour", Label: "jobs per hour", Unit: check.JobsPerHour, HigherIsBetter: true, Metric: record.MetricJobsPerHour},
		{Name: "jobs_per_hour_per_user", Label: "jobs per hour per user", Unit: check.JobsPerHour, HigherIsBetter: true, Metric: record.MetricJobsPerHourPerUser},
		{Name: "job_goodput", Label: "job goodput", Unit: check.Fraction, HigherIsBetter: true, Metric: record.MetricJobGoodput},
		{Name: "tool_wait_share", Label: "tool wait share", Unit: check.Fraction, Metric: record.MetricToolWaitShare},
		{Name: "goodput_fraction", Label: "goodput fraction", Unit: check.Fraction, HigherIsBetter: true},
	}...)
	got := RunStatList()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("RunStatList() =\n%s\nwant\n%s", statLines(got), statLines(want))
	}
}

// TestRunStatListAddsAMetric: a metric added to the catalogue gives its run statistics
// (a per-request metric its p50, p90 and p99, a run-level one itself) with no other
// edit, in its unit and direction, after the built-in ones of its block; a gate can
// name them and the values are checked by their unit.
func TestRunStatListAddsAMetric(t *testing.T) {
	before := len(RunStatList())
	restore := metric.Extend(metric.Def{Name: "decode_time", Header: "Decode Time", Label: "decode time", Unit: metric.UnitMS,
		Better: metric.Lower, Kind: metric.PerRequest, Origin: "test",
		Value: func(q *metric.Request) (float64, bool) { return metric.MS(q.Latency - q.TTFT), q.HasTTFT }},
		metric.Def{Name: "test_hit_rate", Header: "Test Hit Rate", Unit: metric.UnitRatio, Better: metric.Higher, Kind: metric.PerRun, Origin: "test",
			Total: func(*metric.Totals) (float64, bool) { return 0.5, true }})
	defer restore()
	l := RunStatList()
	if len(l) != before+4 {
		t.Fatalf("RunStatList has %d statistics with two metrics added, want %d:\n%s", len(l), before+4, statLines(l))
	}
	for _, w := range []RunStat{
		{Name: "decode_time_p50", Label: "decode time p50", Unit: check.Seconds, Metric: "decode_time", Quantile: 0.5},
		{Name: "decode_time_p90", Label: "decode time p90", Unit: check.Seconds, Metric: "decode_time", Quantile: 0.9},
		{Name: "decode_time_p99", Label: "decode time p99", Unit: check.Seconds, Metric: "decode_time", Quantile: 0.99},
		{Name: "test_hit_rate", Label: "test hit rate", Unit: check.Fraction, HigherIsBetter: true, Metric: "test_hit_rate"}, // a run-level ratio
	} {
		if got, ok := LookupRunStat(w.Name); !ok || got != w {
			t.Errorf("LookupRunStat(%q) = %+v, %v; want %+v", w.Name, got, ok, w)
		}
	}
	// decode_time_p50 ends the p50 block: after the primaries, before the p90 block.
	at := func(name string) int {
		for i, s := range l {
			if s.Name == name {
				return i
			}
		}
		return -1
	}
	if d := at("decode_time_p50"); d < 4 || d+1 != at("ttft_p90") || l[len(l)-2].Name != "test_hit_rate" {
		t.Errorf("order:\n%s\nwant decode_time_p50 just before ttft_p90, after the primaries, and test_hit_rate before goodput_fraction", statLines(l))
	}
	if err := (Gate{Primary: []string{"decode_time_p99"}}).Validate(); err != nil {
		t.Errorf("a gate naming decode_time_p99: %v", err)
	}
	restore()
	if _, ok := LookupRunStat("decode_time_p50"); ok {
		t.Error("decode_time_p50 is still a run statistic after the metric was removed")
	}
}

func statLines(l []RunStat) string {
	var b strings.Builder
	for _, s := range l {
		fmt.Fprintf(&b, "\t%+v\n", s)
	}
	return b.String()
}
