// Package external is a module outside perfgate that uses its public API the way a
// user's module does: through the replace directive in go.mod, with no access to
// perfgate's internal packages. It fails to build if a type that a public signature
// exposes (run.OnRecord's record.Client) moves back under internal/. Its
// quickstart/ package is README.md's quick start, as written (kept in sync by
// examples_test's TestREADMEQuickStart).
package external

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// OnRecord hands this module each record.Client as its request finishes, and they are
// the records the run kept on disk.
func TestOnRecordFromAnotherModule(t *testing.T) {
	const n = 25
	var (
		mu   sync.Mutex
		seen = map[string]record.Client{}
	)
	onRecord := run.OnRecord(func(c record.Client) {
		mu.Lock()
		defer mu.Unlock()
		seen[c.RequestID] = c
	})
	dir := filepath.Join(t.TempDir(), "run")
	sc := scenario.Scenario{
		Name: "external",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:  distribution.Spec{Distribution: distribution.Fixed{Value: 16}},
				OSL:  distribution.Spec{Distribution: distribution.Fixed{Value: 4}},
				Seed: 9,
			},
			Load: loadgen.Load{
				Concurrency: 2,
			},
			Stop: loadgen.Stop{
				Requests: n,
			},
		},
	}
	out, err := run.Run(context.Background(), sc, dir, onRecord)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("OnRecord saw %d requests; want %d", len(seen), n)
	}
	f, err := os.Open(filepath.Join(dir, run.ClientFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	onDisk, err := record.ReadClient(f)
	if err != nil {
		t.Fatal(err)
	}
	back, err := out.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) != n || len(back) != n {
		t.Fatalf("%s holds %d records and the outcome %d; want %d each", run.ClientFile, len(onDisk), len(back), n)
	}
	for _, d := range onDisk {
		c, ok := seen[d.RequestID]
		if !ok || !c.OK() || c.OSL != d.OSL || c.ISL != d.ISL || c.Done != d.Done {
			t.Errorf("request %s: OnRecord gave ok=%v %+v; the file has ISL=%d OSL=%d done=%v", d.RequestID, ok, c, d.ISL, d.OSL, d.Done)
		}
	}
	if got := out.Metrics.Value(record.MetricRequestCount); got != n {
		t.Errorf("metrics %s = %v; want %d", record.MetricRequestCount, got, n)
	}
}
