package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/reportgen"
)

type sentKey struct{ Index, ISL, OSL int }

func mergeScenario() scenario.Scenario {
	return scenario.Scenario{
		Name: "sharded",
		Mock: mockserver.Config{Fast: true},
		Objectives: scenario.Objectives{
			ISLFit: distribution.Spec{Distribution: distribution.Normal{Mu: 48, Sigma: 8}},
			Rules:  []string{"tokenizer_match"},
		},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL:  distribution.Spec{Distribution: distribution.Normal{Mu: 48, Sigma: 8}},
				OSL:  distribution.Spec{Distribution: distribution.Fixed{Value: 4}},
				Seed: 21,
			},
			Load: loadgen.Load{
				Concurrency: 4,
			},
			Stop: loadgen.Stop{
				Requests: 120,
			},
		},
	}
}

// TestMergeParity: a scenario run as 4 shards (each with its own in-process mock)
// and merged equals the single run: the same (global index, ISL, requested OSL)
// multiset, the same server-recorded ISLs, the same verdicts (the ISL fit's KS
// included), and the merged directory has every export a single run has.
func TestMergeParity(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	single, err := run.Run(ctx, mergeScenario(), filepath.Join(root, "single"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for i := range 4 {
		sc := mergeScenario()
		sc.Shards, sc.ShardIndex = 4, i
		d := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		if _, err := run.Run(ctx, sc, d); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	slices.Reverse(dirs) // the order given does not matter
	merged, rep, err := Shards(filepath.Join(root, "merged"), dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := func(o *run.Outcome) (ks []sentKey, isl []int) {
		cs, ss := records(t, o)
		for _, c := range cs {
			ks = append(ks, sentKey{c.Index, c.ISL, c.RequestedOSL})
		}
		for _, s := range ss {
			isl = append(isl, s.ISL)
		}
		slices.SortFunc(ks, func(a, b sentKey) int { return a.Index - b.Index })
		slices.Sort(isl)
		return ks, isl
	}
	k1, s1 := keys(single)
	k4, s4 := keys(merged)
	if !slices.Equal(k1, k4) {
		t.Errorf("merged client records differ from the single run's (%d vs %d)", len(k4), len(k1))
	}
	if !slices.Equal(s1, s4) || len(s4) != 120 {
		t.Errorf("merged server ISLs differ from the single run's (%d vs %d records)", len(s4), len(s1))
	}
	mc, _ := records(t, merged)
	for i := 1; i < len(mc); i++ {
		if mc[i].Index < mc[i-1].Index {
			t.Fatalf("merged client.jsonl not in global order at line %d", i+1)
		}
	}
	v1, v4 := single.Check(), merged.Check()
	if len(v1) != len(v4) {
		t.Fatalf("%d verdicts merged, %d single", len(v4), len(v1))
	}
	for i := range v1 {
		// The evidence names each run's own directory; everything else must agree.
		a := strings.ReplaceAll(v1[i].String(), filepath.Join(root, "single"), "DIR")
		b := strings.ReplaceAll(v4[i].String(), filepath.Join(root, "merged"), "DIR")
		if v1[i].Pass != v4[i].Pass || a != b {
			t.Errorf("verdict %d:\n  single: %v\n  merged: %v", i, v1[i], v4[i])
		}
	}
	if rep.Records != 120 || rep.ServerRecords != 120 || rep.Shards != 4 {
		t.Errorf("merge report %+v; want 4 shards, 120 records of each kind", rep)
	}
	for _, f := range []string{reportgen.ManifestFile, reportgen.RunReportFile, run.MetricsFile, run.VerdictsFile, run.MergeFile} {
		if _, err := os.Stat(filepath.Join(root, "merged", f)); err != nil {
			t.Errorf("merged directory lacks %s: %v", f, err)
		}
	}
	if merged.Interrupted {
		t.Error("merged run marked interrupted; every shard finished")
	}

	// Refusals, each naming what is wrong.
	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"missing", dirs[1:], "missing shard(s) 3"},
		{"duplicate", append(slices.Clone(dirs), dirs[0]), "duplicate shard(s) 3"},
		{"other scenario", append(slices.Clone(dirs[1:]), filepath.Join(root, "single")), "not one scenario"},
	} {
		_, _, err := Shards(filepath.Join(root, "bad"), tc.dirs, Options{})
		if !errors.Is(err, ErrShards) || !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Errorf("%s: Merge = %v; want ErrShards saying %q", tc.name, err, tc.want)
		}
	}
}

// TestMergeFlagsSkew: a shard that started later than the bound is listed.
func TestMergeFlagsSkew(t *testing.T) {
	root := t.TempDir()
	dirs := runShards(t, root, 2, func(sc *scenario.Scenario) { sc.Requests, sc.Concurrency = 10, 2 }, func(i int) []run.RunOption {
		info := run.ShardInfo{RTT: 200e3}
		if i == 1 {
			info.RTT = 40e6 // 20 ms of clock-offset uncertainty
		}
		return []run.RunOption{run.WithShard(info)}
	})
	_, rep, err := Shards(filepath.Join(root, "m"), dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skewed) != 1 || !strings.HasPrefix(rep.Skewed[0], "shard 1 ") {
		t.Errorf("Skewed = %q; want shard 1 alone", rep.Skewed)
	}
}

// TestMergeLinesLongLines: lines longer than the merge's read buffer (1 MiB) are
// copied whole, in key order.
func TestMergeLinesLongLines(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("x", 3<<20)
	var shards []shardDir
	for i, lines := range [][]string{
		{`{"ts":3,"pad":"` + long + `"}`, `{"ts":1}`},
		{`{"ts":2,"pad":"` + long + `"}`},
	} {
		dir := filepath.Join(root, fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, run.ServerFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, shardDir{dir: dir})
	}
	out := filepath.Join(root, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	n, err := mergeServer(out, shards)
	if err != nil || n != 3 {
		t.Fatalf("mergeServer = %d, %v; want 3 lines", n, err)
	}
	b, err := os.ReadFile(filepath.Join(out, run.ServerFile))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	want := []string{`{"ts":1}`, `{"ts":2,"pad":"` + long + `"}`, `{"ts":3,"pad":"` + long + `"}`}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("merged lines (lengths %d) are not the inputs in ts order", len(b))
	}
}

// TestMergeValidity: a merged run's validity combines its shards'. Client-bound is
// judged on each shard's own self-measurement (shard 1's client fell 4 s behind its
// open-loop schedule: the merged run is client-bound, failing under mode fail, and
// names shard 1); a warm cache one shard recorded makes the merged run invalid;
// steady state is evaluated on the merged data; validity.json keeps each shard's
// section, and run.Load of the merged directory gives the same verdicts.
func TestMergeValidity(t *testing.T) {
	root := t.TempDir()
	dirs := runShards(t, root, 2, func(sc *scenario.Scenario) {
		sc.Objectives = scenario.Objectives{}
		sc.Concurrency, sc.Rate, sc.Requests = 0, 200, 60
		sc.Validity.ClientBound = validity.ModeFail
		sc.Validity.MaxSendLag = 2 * time.Second // a clean run on a busy machine
	}, nil)
	clean, _, err := Shards(filepath.Join(root, "clean"), dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byCheck := func(vs []check.Verdict) map[string]check.Verdict {
		m := map[string]check.Verdict{}
		for _, v := range vs {
			m[v.Check] = v
		}
		return m
	}
	cv := byCheck(clean.Verdicts(check.KindValidity))
	if v, ok := cv[validity.CheckClientBound]; !ok || !v.Pass || v.Status == check.Invalid || len(v.Evidence) != 2 {
		t.Errorf("clean shards: client-bound = %v (present %v); want a valid verdict with one line per shard", v, ok)
	}
	if _, ok := cv[validity.CheckSteady]; !ok {
		t.Errorf("clean shards: no steady-state verdict on the merged data: %v", clean.Verdicts(check.KindValidity))
	}

	// Shard 1's client was late; shard 0 saw a warm cache.
	editValidity(t, dirs[1], func(d *validityDoc) {
		d.Self.SendLag = loadgen.LagStats{N: 30, P50: 4 * time.Second, P99: 5 * time.Second, Max: 5 * time.Second}
	})
	editValidity(t, dirs[0], func(d *validityDoc) {
		d.Verdicts = append(d.Verdicts, validityRecord{Check: validity.CheckWarmCache, Status: "invalid", Value: 0.3,
			Summary: "warm cache: prefix-cache hit rate 30.0% >= 1% on a workload with no designed reuse"})
	})
	bad, _, err := Shards(filepath.Join(root, "bad"), dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]*run.Outcome{"merged": bad, "loaded": mustLoad(t, filepath.Join(root, "bad"))} {
		bv := byCheck(o.Verdicts(check.KindValidity))
		if v := bv[validity.CheckClientBound]; v.Pass || v.Status != check.Invalid || !strings.Contains(v.Summary, "shard 1: client-bound: send lag p50 4s") {
			t.Errorf("%s: client-bound = %v; want invalid and failing, naming shard 1's send lag", name, v)
		}
		if v := bv[validity.CheckWarmCache]; v.Pass || v.Status != check.Invalid || !strings.Contains(v.Summary, "shard 0: warm cache") {
			t.Errorf("%s: warm cache = %v; want invalid and failing, naming shard 0", name, v)
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "bad", run.ValidityFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc validityDoc
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Shards) != 2 || doc.Shards[1].Self == nil || doc.Shards[0].Pins == nil || doc.Self != nil {
		t.Errorf("merged validity.json: %d shards (err %v), want both with their client and pins and no client of its own:\n%s", len(doc.Shards), err, b)
	}
	if doc.Pins == nil || doc.Pins.Topology == nil || doc.Pins.Topology.Shards != 2 || doc.Pins.Dataset != nil {
		t.Errorf("merged pins = %+v; want the shards' topology with 2 shards and no dataset fingerprint", doc.Pins)
	}
}
