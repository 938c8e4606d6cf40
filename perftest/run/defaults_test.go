package run

import (
	"reflect"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// TestDefaultsAtTheBoundary: WithDefaults is applied once, where a scenario enters
// (Run, a scenario file, the sweeps), and an Outcome's methods read o.Scenario as it
// is. That holds because WithDefaults fills only what no Outcome method reads again:
// the name, the tokenizer, the request count and the mock's tokenizer and seed; the
// definitions the metrics, the verdicts and the run statistics read (usage-based
// lengths, model names, the SLO, the workload, the seed, the target) are the caller's.
// A default added to one of those must be applied where the Outcome is built, not in
// the methods: this test then fails.
func TestDefaultsAtTheBoundary(t *testing.T) {
	for _, sc := range []scenario.Scenario{
		{},
		{Name: "x", Config: loadgen.Config{
			Target:   loadgen.Target{URLs: []string{"http://127.0.0.1:1"}, ModelNames: []string{"a", "b"}},
			Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:8"), Seed: 3},
		}},
	} {
		d := sc.WithDefaults()
		if metricOptions(d.Config) != metricOptions(sc.Config) || d.SLO != sc.SLO {
			t.Errorf("WithDefaults changes the metrics' definitions: %+v → %+v", metricOptions(sc.Config), metricOptions(d.Config))
		}
		if !reflect.DeepEqual(d.Config.Workload, sc.Config.Workload) || d.Seed != sc.Seed || d.TargetName() != sc.TargetName() ||
			d.Model != sc.Model || d.Validity != sc.Validity || !reflect.DeepEqual(d.Objectives, sc.Objectives) {
			t.Errorf("WithDefaults changes what an Outcome's methods read:\n%+v\n%+v", sc, d)
		}
		// What it does fill, so that the test sees a new default.
		d.Name, d.Tokenizer, d.Requests, d.Mock.Tokenizer, d.Mock.Seed = sc.Name, sc.Tokenizer, sc.Requests, sc.Mock.Tokenizer, sc.Mock.Seed
		if !reflect.DeepEqual(d, sc) {
			t.Errorf("WithDefaults fills a field this test does not know; if an Outcome method reads it, apply the default where the Outcome is built:\n%+v\n%+v", sc, d)
		}
	}
}
