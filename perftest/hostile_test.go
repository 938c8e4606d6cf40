package perftest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/run"
)

// perftest.Load on a run or baseline directory whose scenario.json is corrupted fails
// the test with the file and line (issue 26: it crashed the test binary).
func TestLoadHostileScenario(t *testing.T) {
	paths, _ := filepath.Glob("scenario/testdata/hostile/*.json")
	if len(paths) < 3 {
		t.Fatalf("%d hostile scenario.json files, want 3", len(paths))
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		line := `{"index":0,"start":1767225600,"latency_s":0.1,"ttft_s":0.05,"isl":5,"osl":3,"status":200}` + "\n"
		os.WriteFile(filepath.Join(dir, run.ClientFile), []byte(line), 0o644)
		os.WriteFile(filepath.Join(dir, run.ScenarioFile), b, 0o644)
		c := Capture(t, func(t testing.TB) { Load(t, dir) })
		if want := run.ScenarioFile + ":1:2: client: the client block is gone"; !c.Stopped() || !strings.Contains(c.Text(), want) {
			t.Errorf("Load(%s): stopped %v, %q; want a fatal failure containing %q", filepath.Base(p), c.Stopped(), c.Text(), want)
		}
	}
}
