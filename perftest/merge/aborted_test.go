package merge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/reportgen"
)

// TestMergeShardAborted: a merged run of shards one of which was stopped early says
// which and why, in Aborted, the aborted verdict (an objective failure for
// over-saturation) and the merged manifest, and so does the merged directory read
// back; with a second shard stopped by the failed-request threshold, the merged run
// is judged as its worst shard (invalid) and names both. Shards that ran to the end
// merge into a run that was not aborted.
func TestMergeShardAborted(t *testing.T) {
	root := t.TempDir()
	dirs := runShards(t, root, 2, func(sc *scenario.Scenario) {
		sc.Objectives = scenario.Objectives{}
		sc.Requests = 24
	}, nil)
	whole, _, err := Shards(filepath.Join(root, "whole"), dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Aborted() != "" || whole.AbortedBy() != "" || find(whole.Check(), run.CheckAborted) != nil {
		t.Errorf("no shard stopped, but the merged run says %q (%q)", whole.Aborted(), whole.AbortedBy())
	}
	stop := func(dir, by, why string) {
		editValidity(t, dir, func(d *validityDoc) { d.Self.Aborted, d.Self.AbortedBy = why, by })
	}
	stop(dirs[1], loadgen.AbortSaturation, "over-saturated at 31s: requests in flight rising")
	want := fmt.Sprintf("shard 1 (%s): over-saturated at 31s: requests in flight rising", dirs[1])
	out := filepath.Join(root, "one")
	one, _, err := Shards(out, dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]*run.Outcome{"merged": one, "loaded": mustLoad(t, out)} {
		if o.Aborted() != want || o.AbortedBy() != loadgen.AbortSaturation {
			t.Errorf("%s: aborted %q by %q, want %q", name, o.Aborted(), o.AbortedBy(), want)
		}
		if v := find(o.Check(), run.CheckAborted); v == nil || v.Pass || v.Status == check.Invalid || !strings.HasPrefix(v.Summary, "aborted: "+want) {
			t.Errorf("%s: aborted verdict %v", name, v)
		}
	}
	var m reportgen.Manifest
	if b, err := os.ReadFile(filepath.Join(out, reportgen.ManifestFile)); err != nil || json.Unmarshal(b, &m) != nil || m.Aborted != want {
		t.Errorf("merged manifest aborted = %q (%v)", m.Aborted, err)
	}

	stop(dirs[0], loadgen.AbortInvalid, "failed-request threshold: 13 of 20 requests failed")
	two, _, err := Shards(filepath.Join(root, "two"), dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := find(two.Verdicts(check.KindValidity), run.CheckAborted)
	if two.AbortedBy() != loadgen.AbortInvalid || v == nil || v.Pass || v.Status != check.Invalid ||
		!strings.Contains(v.Summary, "shard 0 (") || !strings.Contains(v.Summary, "; "+want) {
		t.Errorf("two shards stopped: by %q, verdict %v", two.AbortedBy(), v)
	}
}
