package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Load on a run directory whose scenario.json is corrupted returns the positioned
// error.
func TestLoadHostileScenario(t *testing.T) {
	for _, name := range []string{"client-number.json", "client-null.json", "client-list.json"} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ClientFile), nil, 0o644)
		b, _ := os.ReadFile(filepath.Join("../scenario/testdata/hostile", name))
		os.WriteFile(filepath.Join(dir, ScenarioFile), b, 0o644)
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), ScenarioFile+":1:2: client") {
			t.Errorf("Load(%s) = %v", name, err)
		}
	}
}
