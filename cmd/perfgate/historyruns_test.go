package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/perftest/gate"
)

// historyFromDir (what `history add` reads) trusts nothing in an artifact directory's
// runs.json: a run directory outside the artifact directory, a run without statistics
// (which the store would drop while keeping its verdicts) and a statistic no run can
// have are errors naming the file and the field, before any run is read.
func TestHistoryFromDirRefusesHostileIndex(t *testing.T) {
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		runs  string // the second run's statistics
		dirs  string
		setup func(dir string)
		want  func(dir string) string
	}{
		{name: "dotdot", runs: `{"ttft_p50":0.1}`, dirs: `["run-001","../x"]`,
			want: func(dir string) string { return `runs.json: dirs[1]: "../x" leaves the artifact directory ` + dir }},
		{name: "nested dotdot", runs: `{"ttft_p50":0.1}`, dirs: `["run-001","run-002/../../x"]`,
			want: func(dir string) string { return `runs.json: dirs[1]: "run-002/../../x" leaves the artifact directory` }},
		{name: "absolute", runs: `{"ttft_p50":0.1}`, dirs: `["` + outside + `","run-002"]`,
			want: func(dir string) string { return `runs.json: dirs[0]: "` + outside + `" leaves the artifact directory` }},
		{name: "symlink", runs: `{"ttft_p50":0.1}`, dirs: `["run-001","run-002"]`,
			setup: func(dir string) {
				if err := os.Symlink(outside, filepath.Join(dir, "run-002")); err != nil {
					t.Fatal(err)
				}
			},
			want: func(dir string) string {
				return `runs.json: dirs[1]: "run-002" leaves the artifact directory ` + dir + " (a symbolic link to " + outside + ")"
			}},
		{name: "empty stats", runs: `{}`, dirs: `["run-001","run-002"]`,
			want: func(dir string) string { return "runs.json: runs[1].stats: no statistics" }},
		{name: "null stats", runs: `null`, dirs: `["run-001","run-002"]`,
			want: func(dir string) string { return "runs.json: runs[1].stats: no statistics" }},
		{name: "negative", runs: `{"ttft_p50":-0.5}`, dirs: `["run-001","run-002"]`,
			want: func(dir string) string { return "runs.json: runs[1].stats.ttft_p50: -0.5: want a number >= 0" }},
		{name: "huge", runs: `{"ttft_p50":0.1,"output_tps":1e308}`, dirs: `["run-001","run-002"]`,
			want: func(dir string) string { return "runs.json: runs[1].stats.output_tps: 1e+308: want at most 1e+12" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			idx := `{"scenario":{"name":"x"},"runs":[{"run":1,"stats":{"ttft_p50":0.1}},{"run":2,"stats":` + c.runs + `}],"dirs":` + c.dirs + `}`
			if err := os.WriteFile(filepath.Join(dir, gate.RunsFile), []byte(idx), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.setup != nil {
				c.setup(dir)
			}
			want := dir + string(filepath.Separator) + c.want(dir)
			if _, err := historyFromDir(dir, history.Identity{}); err == nil || !strings.HasPrefix(err.Error(), "history: ") || !strings.Contains(err.Error(), want) {
				t.Errorf("historyFromDir = %v\nwant an error with %s", err, want)
			}
		})
	}
}

// A symbolic link to the artifact directory itself, and run directories inside it, are
// no reason to refuse: the check reaches the runs (here absent, so Load's error).
func TestHistoryFromDirLocalRuns(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "latest")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	idx := `{"scenario":{"name":"x"},"runs":[{"run":1,"stats":{"ttft_p50":0.1}},{"run":2,"stats":{"ttft_p50":0.1}}],"dirs":["run-001","sub/../run-002"]}`
	os.WriteFile(filepath.Join(real, gate.RunsFile), []byte(idx), 0o644)
	os.Mkdir(filepath.Join(real, "run-001"), 0o755)
	if _, err := historyFromDir(link, history.Identity{}); err == nil || strings.Contains(err.Error(), "leaves the artifact directory") || !strings.Contains(err.Error(), "run-001") {
		t.Errorf("historyFromDir(a link to the directory) = %v; want run-001's own error", err)
	}
}
