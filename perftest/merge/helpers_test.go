package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// validityDoc is validity.json as these tests read and edit it: every field a run
// writes (an edit must keep what it does not change).
type validityDoc struct {
	Pins     *run.Pins        `json:"pins,omitempty"`
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
	Pins     *run.Pins        `json:"pins,omitempty"`
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

func records(t testing.TB, o *run.Outcome) ([]record.Client, []record.Server) {
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

func mustLoad(t *testing.T, dir string) *run.Outcome {
	t.Helper()
	o, err := run.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// runShards runs mergeScenario as n shards under root (shard-0 …), each adjusted by
// adjust first and run with opts(i) when set, and returns their directories in shard
// order.
func runShards(t *testing.T, root string, n int, adjust func(*scenario.Scenario), opts func(i int) []run.RunOption) []string {
	t.Helper()
	var dirs []string
	for i := range n {
		sc := mergeScenario()
		if adjust != nil {
			adjust(&sc)
		}
		sc.Shards, sc.ShardIndex = n, i
		d := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		var ro []run.RunOption
		if opts != nil {
			ro = opts(i)
		}
		if _, err := run.Run(context.Background(), sc, d, ro...); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// editValidity rewrites a shard's validity.json through f.
func editValidity(t *testing.T, dir string, f func(*validityDoc)) {
	t.Helper()
	p := filepath.Join(dir, run.ValidityFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc validityDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	f(&doc)
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
