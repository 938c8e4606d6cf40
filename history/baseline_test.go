package history

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/perftest/gate"
)

func TestParseBaselineSpec(t *testing.T) {
	for in, want := range map[string]BaselineSpec{
		"history:nightly":                               {Scenario: "nightly"},
		"history:nightly?last=8&branch=release":         {Scenario: "nightly", Last: 8, Branch: "release"},
		"history:nightly?since=change":                  {Scenario: "nightly", SinceChange: true},
		"history:nightly?since=change&last=10&branch=*": {Scenario: "nightly", SinceChange: true, Last: 10, Branch: "*"},
	} {
		got, err := ParseBaselineSpec(in)
		if err != nil || got != want {
			t.Errorf("ParseBaselineSpec(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if again, _ := ParseBaselineSpec(got.String()); again != got {
			t.Errorf("%q does not round-trip: %q", in, got.String())
		}
	}
	for in, want := range map[string]string{
		"nightly":                   "want history:SCENARIO",
		"history:":                  "no scenario name",
		"history:n?last=0":          "last=0",
		"history:n?since=yesterday": "since=yesterday",
		"history:n?frob=1":          `unknown option "frob"`,
	} {
		if _, err := ParseBaselineSpec(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseBaselineSpec(%q): %v, want %q", in, err, want)
		}
	}
}

// baselineHistory stores 20 main-branch results of "nightly" (2 runs each, ttft_p50
// 100 ms, 110 ms from result 14 on), 3 on a feature branch, and one of an older
// workload of the same name.
func baselineHistory(t *testing.T) Store {
	s := open(t, filepath.Join(t.TempDir(), "h.db"))
	cfg := json.RawMessage(`{"name":"nightly","seed":42}`)
	rng := rand.New(rand.NewPCG(4, 4))
	add := func(i int, branch, fp string, level float64) {
		r := &Result{Fingerprint: fp, Scenario: "nightly", Branch: branch, Commit: fmt.Sprintf("c%02d-%s", i, branch),
			Created: t0.Add(time.Duration(i) * time.Hour), Config: cfg, Artifacts: fmt.Sprintf("/art/%d", i)}
		for k := range 2 {
			r.Runs = append(r.Runs, Run{Run: k + 1, Stats: map[string]float64{"ttft_p50": level * (1 + 0.01*rng.NormFloat64()), "output_tps": 800}})
		}
		if _, err := s.Add(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	add(-1, "main", "old-workload", 0.5)
	for i := range 20 {
		level := 0.100
		if i >= 14 {
			level = 0.110
		}
		add(i, "main", "fp", level)
	}
	for i := range 3 {
		add(30+i, "feature", "fp", 0.2)
	}
	return s
}

func TestLoadBaseline(t *testing.T) {
	s := baselineHistory(t)
	commits := func(rs []Result) string {
		var c []string
		for _, r := range rs {
			c = append(c, r.Commit)
		}
		return strings.Join(c, " ")
	}
	// Default: the last 10 results on main, every run of each, each result a session.
	series, rs, err := LoadBaseline(t.Context(), s, BaselineSpec{Scenario: "nightly"})
	if err != nil {
		t.Fatal(err)
	}
	if commits(rs) != "c10-main c11-main c12-main c13-main c14-main c15-main c16-main c17-main c18-main c19-main" || len(series.Runs) != 20 || string(series.Scenario) != `{"name":"nightly","seed":42}` || series.Runs[0].Seed != 42 || series.Workload != nil {
		t.Errorf("default baseline: %s, %d runs, scenario %s, seed %d, workload %v; want the stored scenario as it is, its seed, the workload left to the caller",
			commits(rs), len(series.Runs), series.Scenario, series.Runs[0].Seed, series.Workload)
	}
	if series.Runs[19].Run != 20 || series.Dirs[1] != "/art/10/run-002" {
		t.Errorf("runs numbered %d, dirs %v", series.Runs[19].Run, series.Dirs[:2])
	}
	if n := series.Sessions(); n != 10 || series.Runs[0].Session != fmt.Sprintf("history-%d", rs[0].ID) || series.Runs[1].Session != series.Runs[0].Session {
		t.Errorf("%d sessions, runs 1 and 2 in %q and %q; want 10, one a result", n, series.Runs[0].Session, series.Runs[1].Session)
	}
	// Since the last change point: results 14 to 19, all at the new level.
	_, rs, err = LoadBaseline(t.Context(), s, BaselineSpec{Scenario: "nightly", SinceChange: true})
	if err != nil || commits(rs) != "c14-main c15-main c16-main c17-main c18-main c19-main" {
		t.Errorf("since=change: %s, %v", commits(rs), err)
	}
	// Another branch; any branch.
	_, rs, _ = LoadBaseline(t.Context(), s, BaselineSpec{Scenario: "nightly", Branch: "feature", Last: 3})
	if commits(rs) != "c30-feature c31-feature c32-feature" {
		t.Errorf("branch feature: %s", commits(rs))
	}
	// More results asked for than the branch has: an error naming both counts.
	if _, _, err := LoadBaseline(t.Context(), s, BaselineSpec{Scenario: "nightly", Branch: "feature", Last: 10}); err == nil ||
		!strings.Contains(err.Error(), `scenario "nightly" has 3 results on branch "feature"; last=10 needs 10 (record more, or ask for last=3)`) {
		t.Errorf("last=10 of 3 results: %v", err)
	}
	if _, rs, _ = LoadBaseline(t.Context(), s, BaselineSpec{Scenario: "nightly", Branch: "*", Last: 2}); commits(rs) != "c31-feature c32-feature" {
		t.Errorf("branch *: %s", commits(rs))
	}
	// The baseline directory reads back with gate.LoadSeries, as the gate reads it.
	dir := filepath.Join(t.TempDir(), "baseline")
	series, _, _ = LoadBaseline(t.Context(), s, BaselineSpec{Scenario: "nightly"})
	if err := WriteBaseline(dir, series); err != nil {
		t.Fatal(err)
	}
	back, err := gate.LoadSeries(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sc struct{ Name string }
	if !reflect.DeepEqual(back.Runs, series.Runs) || json.Unmarshal(back.Scenario, &sc) != nil || sc.Name != "nightly" {
		t.Errorf("LoadSeries of the written baseline: %+v", back.Runs)
	}
	// Failure paths.
	if _, _, err := LoadBaseline(t.Context(), s, BaselineSpec{Scenario: "nope"}); err == nil || !strings.Contains(err.Error(), `no results of scenario "nope" on branch "main"`) {
		t.Errorf("unknown scenario: %v", err)
	}
}

func TestLoadBaselineWithoutScenario(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "h.db"))
	if _, err := s.Add(t.Context(), sample("old", 0, 2)); err != nil { // no Config: an old perfgate's result
		t.Fatal(err)
	}
	_, _, err := LoadBaseline(t.Context(), s, BaselineSpec{Scenario: "old"})
	if err == nil || !strings.Contains(err.Error(), "has no scenario") {
		t.Errorf("a result without its scenario: %v", err)
	}
}
