package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/scenario"
)

func TestRunMock(t *testing.T) {
	dir := t.TempDir()
	sc := scenario.Scenario{
		Name: "smoke",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API:    loadgen.EndpointCompletions,
				APIKey: "sk-secret",
			},
			Workload: loadgen.Workload{
				ISL:  distribution.Spec{Distribution: distribution.Fixed{Value: 32}},
				OSL:  distribution.Spec{Distribution: distribution.Fixed{Value: 8}},
				Seed: 1,
			},
			Load: loadgen.Load{
				Concurrency: 4,
			},
			Stop: loadgen.Stop{
				Requests: 20,
			},
		},
	}
	out, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	cs, ss := records(t, out)
	if got := len(cs); got != 20 {
		t.Errorf("client records = %d, want 20", got)
	}
	if got := len(ss); got != 20 {
		t.Errorf("server records = %d, want 20", got)
	}
	for _, r := range out.Requests() {
		if r.Err != "" || r.ISL != 32 || r.ServerISL != 32 || r.OSL != 8 {
			t.Errorf("request %s: err=%q isl=%d server=%d osl=%d, want isl 32 = server, osl 8", r.ID, r.Err, r.ISL, r.ServerISL, r.OSL)
			break
		}
	}
	for _, f := range []string{ClientFile, ServerFile, MetricsFile, ScenarioFile, VerdictsFile, "report.html", "profile_export_aiperf.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("artifact %s: %v", f, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, ScenarioFile))
	if strings.Contains(string(b), "sk-secret") {
		t.Errorf("%s contains the API key:\n%s", ScenarioFile, b)
	}
	// The artifacts load back into the same requests.
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Requests()) != 20 || back.Scenario.Name != "smoke" || !back.Mocked {
		t.Errorf("Load: %d requests, name %q, mocked %v", len(back.Requests()), back.Scenario.Name, back.Mocked)
	}
	for _, v := range out.Check() {
		if !v.Pass {
			t.Errorf("default objectives failed on a clean run:\n%s", v)
		}
	}
}

func TestRunInvalid(t *testing.T) {
	_, err := Run(context.Background(), scenario.Scenario{Mock: mockserver.Config{Fast: true}, Config: loadgen.Config{Load: loadgen.Load{Concurrency: -1}}}, "")
	if !errors.Is(err, scenario.ErrInvalidScenario) {
		t.Errorf("Run(concurrency -1) = %v, want ErrInvalidScenario", err)
	}
	_, err = Run(context.Background(), scenario.Scenario{Tokenizer: "no-such-tokenizer-xyz", Mock: mockserver.Config{Fast: true}}, "")
	if err == nil || !strings.Contains(err.Error(), "tokenizer") {
		t.Errorf("Run(bad tokenizer) = %v, want a tokenizer error", err)
	}
}
