package run

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/servermetrics"
)

func gpuScenario(urls ...string) scenario.Scenario {
	return scenario.Scenario{
		Name:         "gpu",
		Mock:         mockserver.Config{Fast: true},
		GPUTelemetry: servermetrics.Config{URLs: urls, Interval: 5_000_000},
		Config: loadgen.Config{
			Workload: loadgen.Workload{IgnoreEOS: true, OSL: distribution.Spec{Distribution: distribution.Fixed{Value: 8}}},
			Load:     loadgen.Load{Concurrency: 2},
			Stop:     loadgen.Stop{Requests: 20},
		},
	}
}

// TestRunGPUTelemetry: a run scraping the stub DCGM exporter (two GPUs at 300 W and
// 150 W) reports 450 W × the measured window as its energy, and the derived
// efficiencies from the run's own totals; rules bound them, the gate records the
// efficiencies, and Load reads the same numbers back from gpu_telemetry.jsonl.
func TestRunGPUTelemetry(t *testing.T) {
	d := testutil.NewDCGM(t, 300, 150)
	sc := gpuScenario(d.URL)
	sc.Objectives.Rules = []string{"tokens_per_joule>=0.000001", "energy_per_request<=1e9", "gpu_memory_used<=500"}
	for _, dir := range []string{"", t.TempDir()} {
		out, err := Run(context.Background(), sc, dir)
		if err != nil {
			t.Fatal(err)
		}
		m := out.Metrics
		dur, osl, n := m.Value(record.MetricBenchmarkDuration), m.Value(record.MetricTotalOSL), m.Value(record.MetricRequestCount)
		e := m.Value(record.MetricGPUEnergy)
		if out.GPU == nil || len(out.GPU.GPUs) != 2 || dur <= 0 || math.Abs(e-450*dur) > 1e-6*e {
			t.Fatalf("dir %q: GPU %+v; energy %v J over %v s, want 450 W × the window", dir, out.GPU, e, dur)
		}
		for name, want := range map[string]float64{
			record.MetricTokensPerJoule:   osl / e,
			record.MetricOutputTPSPerGPU:  osl / dur / 2,
			record.MetricEnergyPerRequest: e / n,
			record.MetricGPUPower:         450,
		} {
			if got := m.Value(name); math.Abs(got-want) > 1e-6*want {
				t.Errorf("dir %q: %s = %v, want %v", dir, name, got, want)
			}
		}
		var failed []string
		for _, v := range out.Check() {
			if !v.Pass {
				failed = append(failed, v.Check)
			}
		}
		if len(failed) != 1 || failed[0] != record.MetricGPUMemoryUsed {
			t.Errorf("dir %q: failed verdicts %v; want only gpu_memory_used (the stub's GPUs use 1,000 MiB and more)", dir, failed)
		}
		if rs := out.RunStats(); rs.Stats[record.MetricTokensPerJoule] != m.Value(record.MetricTokensPerJoule) || rs.Stats[record.MetricGPUEnergy] != 0 {
			t.Errorf("dir %q: run statistics %v; want tokens_per_joule, not gpu_energy", dir, rs.Stats)
		}
		if dir == "" {
			continue
		}
		back, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := back.Metrics.Value(record.MetricTokensPerJoule); math.Abs(got-m.Value(record.MetricTokensPerJoule)) > 1e-9*got || back.GPU == nil {
			t.Errorf("Load: tokens_per_joule %v, want %v", got, m.Value(record.MetricTokensPerJoule))
		}
		if out.File(servermetrics.GPUSummaryFile) == "" || out.File(servermetrics.GPUFile) == "" {
			t.Errorf("artifacts %v lack %s or %s", out.Files, servermetrics.GPUFile, servermetrics.GPUSummaryFile)
		}
	}
}

// TestRunGPUTelemetryBadEndpoint: an endpoint that answers without DCGM's names (the
// mock's own /metrics) is invalid before any request; one that does not answer is a
// warning, the run goes on, and a rule on a GPU metric is then invalid, not passed.
func TestRunGPUTelemetryBadEndpoint(t *testing.T) {
	_, err := Run(context.Background(), gpuScenario("/metrics"), "")
	if !errors.Is(err, scenario.ErrInvalidScenario) || !errors.Is(err, servermetrics.ErrNoDCGM) || !strings.Contains(err.Error(), "/metrics serves series such as") {
		t.Errorf("the mock's /metrics as GPU telemetry: %v; want an invalid scenario naming what it serves", err)
	}
	sc := gpuScenario("http://127.0.0.1:1/metrics?token=s3cret")
	sc.Objectives.Rules = []string{"tokens_per_joule>=1"}
	out, err := Run(context.Background(), sc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Warnings) == 0 || !strings.Contains(strings.Join(out.Warnings, "\n"), "gpu telemetry http://127.0.0.1:1/metrics?token=redacted") {
		t.Errorf("warnings %q; want the endpoint that is down, its token redacted", out.Warnings)
	}
	if strings.Contains(strings.Join(out.Warnings, "\n"), "s3cret") {
		t.Errorf("a warning carries the URL's token: %q", out.Warnings)
	}
	if _, ok := out.Metrics.Scalars[record.MetricGPUEnergy]; ok {
		t.Errorf("gpu_energy reported without telemetry: %v", out.Metrics.Scalars[record.MetricGPUEnergy])
	}
	found := false
	for _, v := range out.Check() {
		if v.Check == record.MetricTokensPerJoule {
			found = true
			if v.Pass || v.Status != check.Invalid {
				t.Errorf("tokens_per_joule>=1 without telemetry: %+v; want an invalid verdict", v)
			}
		}
	}
	if !found {
		t.Errorf("no verdict on tokens_per_joule: %+v", out.Check())
	}
}
