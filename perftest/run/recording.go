package run

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
)

// A Recording is what a history keeps of finished runs of one scenario, as data: the
// series (its workload described: the name and settings a history files the result
// under, and the scenario as JSON), each run's verdicts, and what was measured. Package
// history's FromSeries takes its fields, so history reads no scenario itself.
type Recording struct {
	// Series holds each run's statistics (its runstats.json when on disk, else
	// [Outcome.RunStats]) and directory, in run order.
	Series *gate.Series
	// Verdicts are each run's verdicts ([Outcome.Check]), in run order.
	Verdicts [][]check.Verdict
	// Topology is what the first run measured: "mock", "1 url", "4 urls", or
	// "N shards × …" for a merged run.
	Topology string
}

// RecordingOf returns what a history keeps of outs (K runs of one scenario, in order).
func RecordingOf(outs ...*Outcome) Recording {
	rec := Recording{Series: &gate.Series{}}
	for i, o := range outs {
		d := "."
		rs, err := gate.RunStats{}, error(nil)
		if o.Dir != "" {
			d = o.Dir
			rs, err = gate.ReadRunStats(o.Dir)
		}
		if o.Dir == "" || err != nil {
			rs = o.RunStats()
		}
		if i == 0 {
			setScenario(rec.Series, o.Scenario)
		}
		rec.Series.Add(rs, d)
		rec.Verdicts = append(rec.Verdicts, o.Check())
	}
	if len(outs) > 0 {
		rec.Topology = outs[0].topology()
	}
	return rec
}

// topology describes what the run measured: the mock, or how many servers, and shards.
func (o *Outcome) topology() string {
	t := "mock"
	if n := len(o.Scenario.URLs); !o.Mocked && n > 0 {
		t = fmt.Sprintf("%d url", n)
		if n > 1 {
			t += "s"
		}
	}
	if b, err := os.ReadFile(filepath.Join(o.Dir, MergeFile)); err == nil {
		var m struct {
			Shards []json.RawMessage `json:"shards"`
		}
		if json.Unmarshal(b, &m) == nil && len(m.Shards) > 0 {
			t = fmt.Sprintf("%d shards × %s", len(m.Shards), t)
		}
	}
	return t
}
