package run

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/reportgen"
)

// A run's directory stripped to what a killed run leaves (the scenario, written first,
// and the recordings, written as requests finished) loads back with the run's metrics
// and verdicts, and WriteReports rebuilds every export from it.
func TestLoadRebuildsReports(t *testing.T) {
	dir := t.TempDir()
	sc := scenario.Scenario{
		Name: "rebuild",
		Mock: mockserver.Config{Fast: true},
		//lint:ignore SA1019 the deprecated structured objectives must still be checked, as the rules they mean
		Objectives: scenario.Objectives{TokenizerMatch: true},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API: loadgen.EndpointChat,
			},
			Workload: loadgen.Workload{
				ISL:  distribution.Spec{Distribution: distribution.Fixed{Value: 24}},
				OSL:  distribution.Spec{Distribution: distribution.Fixed{Value: 6}},
				Seed: 3,
			},
			Load: loadgen.Load{
				Concurrency: 3,
			},
			Stop: loadgen.Stop{
				Requests: 30,
			},
		},
	}
	out, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, reportgen.RecordsFile)); err == nil {
		t.Errorf("%s written: the client recording is kept once, in %s", reportgen.RecordsFile, ClientFile)
	}
	want := out.Check()
	entries, _ := os.ReadDir(dir)
	keep := []string{ClientFile, ServerFile, ScenarioFile}
	for _, e := range entries {
		if !slices.Contains(keep, e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Interrupted {
		t.Error("Load(dir without a manifest).Interrupted = false; want true (the run never finished)")
	}
	bc, bs := records(t, back)
	if len(bc) != 30 || len(bs) != 30 {
		t.Errorf("Load = %d client, %d server records; want 30, 30", len(bc), len(bs))
	}
	if got, w := back.Metrics.String(), out.Metrics.String(); got != w {
		t.Errorf("metrics from the recording =\n%s\nwant the run's\n%s", got, w)
	}
	got := back.Check()
	if len(got) != len(want) {
		t.Fatalf("Load(dir).Check() = %d verdicts; want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Pass != want[i].Pass || got[i].Summary != want[i].Summary {
			t.Errorf("verdict %d = %v %q; want %v %q", i, got[i].Pass, got[i].Summary, want[i].Pass, want[i].Summary)
		}
	}
	if err := back.WriteReports("perfgate", "report", dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{MetricsFile, VerdictsFile, reportgen.RunReportFile, reportgen.AIPerfJSONFile, reportgen.AIPerfCSVFile, reportgen.AIPerfJSONLFile, reportgen.ManifestFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("WriteReports: %s: %v", f, err)
		}
	}
	if again, err := Load(dir); err != nil || again.Interrupted {
		t.Errorf("Load after WriteReports: interrupted=%v, %v; want a finished run", again != nil && again.Interrupted, err)
	}
}
