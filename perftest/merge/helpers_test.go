package merge

import (
	"testing"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// validityDoc is validity.json as these tests read and edit it: every field a run
// writes (an edit must keep what it does not change).
type validityDoc struct {
	Pins     *scenario.Pins   `json:"pins,omitempty"`
	Self     *loadgen.Self    `json:"client,omitempty"`
	Verdicts []validityRecord `json:"verdicts,omitempty"`
	Shards   []shardDoc       `json:"shards,omitempty"`
}

type validityRecord struct {
	Check   string  `json:"check"`
	Pass    bool    `json:"pass"`
	Status  string  `json:"status"`
	Summary string  `json:"summary"`
	Value   float64 `json:"value"`
	Text    string  `json:"text"`
}

type shardDoc struct {
	Index    int              `json:"index"`
	Dir      string           `json:"dir"`
	Self     *loadgen.Self    `json:"client,omitempty"`
	Pins     *scenario.Pins   `json:"pins,omitempty"`
	Verdicts []validityRecord `json:"verdicts,omitempty"`
}

func find(vs []check.Verdict, name string) *check.Verdict {
	for i := range vs {
		if vs[i].Check == name {
			return &vs[i]
		}
	}
	return nil
}

func records(t testing.TB, o *scenario.Outcome) ([]record.Client, []record.Server) {
	t.Helper()
	cs, err := o.Records()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := o.ServerRecords()
	if err != nil {
		t.Fatal(err)
	}
	return cs, ss
}

func mustLoad(t *testing.T, dir string) *scenario.Outcome {
	t.Helper()
	o, err := scenario.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
