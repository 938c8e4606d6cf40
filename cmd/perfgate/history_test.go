package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/internal/testutil/pgtest"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
)

// seedSeries adds n synthetic results to the series of scenario sc: ttft_p50 at 100 ms
// (2% noise), stepping up by step from result at on.
func seedSeries(t *testing.T, addr, sc string, n, at int, step float64) {
	t.Helper()
	s, err := history.Open(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 10, 1, 2, 0, 0, 0, time.UTC)
	for i := range n {
		level := 0.100
		if i >= at {
			level *= 1 + step
		}
		r := &history.Result{Fingerprint: "synthetic", Scenario: sc, Commit: fmt.Sprintf("%07x%033d", i+1, 0), Branch: "main",
			Created: t0.Add(time.Duration(i) * 24 * time.Hour)}
		for k := range 3 {
			r.Runs = append(r.Runs, history.Run{Run: k + 1, Stats: map[string]float64{"ttft_p50": level * (1 + 0.02*rng.NormFloat64()), "output_tps": 900 * (1 + 0.02*rng.NormFloat64())}})
		}
		if _, err := s.Add(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHistoryRecipe is the CI recipe of docs/history.md end to end, on both backends:
// profile --history, history add, list, show, export, report and check.
func TestHistoryRecipe(t *testing.T) {
	testutil.Long(t) // make test-long
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "history.db")
			if backend == "postgres" {
				c, err := pgtest.Start()
				if err != nil {
					if os.Getenv("CI") == "true" {
						t.Fatal(err)
					}
					t.Skip(err)
				}
				t.Cleanup(c.Stop)
				db = c.NewDatabase(t)
			}
			art := filepath.Join(dir, "nightly-1")
			code, out, errOut := cli(t, "profile", "--mock", "--request-count", "30", "--concurrency", "4", "--name", "nightly",
				"--artifact-dir", art, "--history", db, "--commit", "aaaaaaa1111", "--branch", "main", "--build", "17")
			if code != ExitOK || !strings.Contains(out, "history: recorded result 1: nightly, commit aaaaaaa111, 1 run(s)") {
				t.Fatalf("profile --history: exit %d\n%s\n%s", code, out, errOut)
			}
			// The same directory again: already there. A second night: a new result.
			code, out, errOut = cli(t, "history", "add", "--db", db, art)
			if code != ExitOK || !strings.Contains(out, "already recorded result 1") {
				t.Errorf("history add of a recorded run: exit %d\n%s\n%s", code, out, errOut)
			}
			art2 := filepath.Join(dir, "nightly-2")
			if code, out, errOut = cli(t, "profile", "--mock", "--request-count", "30", "--concurrency", "4", "--name", "nightly", "--artifact-dir", art2, "--quiet"); code != ExitOK {
				t.Fatalf("profile: %d %s %s", code, out, errOut)
			}
			t.Setenv("GITHUB_SHA", "bbbbbbb2222")
			t.Setenv("GITHUB_REF_NAME", "main")
			if code, out, errOut = cli(t, "history", "add", art2, "--db", db); code != ExitOK || !strings.Contains(out, "history: recorded result") || !strings.Contains(out, "nightly, commit bbbbbbb222, 1 run(s)") {
				t.Errorf("history add with CI variables: exit %d\n%s\n%s", code, out, errOut)
			}
			code, out, _ = cli(t, "history", "list", "--db", db)
			if code != ExitOK || !strings.Contains(out, "series nightly") || !strings.Contains(out, "aaaaaaa111") || !strings.Contains(out, "bbbbbbb222") {
				t.Errorf("history list: %d\n%s", code, out)
			}
			code, out, _ = cli(t, "history", "show", "--db", db, "1")
			if code != ExitOK || !strings.Contains(out, "ttft_p50") || !strings.Contains(out, "build 17") || !strings.Contains(out, "topology mock") {
				t.Errorf("history show 1: %d\n%s", code, out)
			}
			if code, _, errOut = cli(t, "history", "show", "--db", db, "99"); code != ExitInvalidConfig || !strings.Contains(errOut, "no such result") {
				t.Errorf("history show 99: %d %s", code, errOut)
			}
			// Nightly check on a real two-result series: nothing to say yet.
			if code, out, errOut = cli(t, "history", "check", "--db", db, "--scenario", "nightly"); code != ExitOK {
				t.Errorf("history check, two results: %d\n%s\n%s", code, out, errOut)
			}
			// A synthetic history with a 12% slowdown in its newest 6 results fails, naming the commit.
			seedSeries(t, db, "drifting", 40, 34, 0.12)
			code, out, errOut = cli(t, "history", "check", "--db", db, "--scenario", "drifting")
			if code != ExitAssertFailed || !strings.Contains(out, "REGRESSION: drifting ttft_p50 regressed by 1") || !strings.Contains(out, "commit 0000023000") {
				t.Errorf("history check of a 12%% step: exit %d\n%s\n%s", code, out, errOut)
			}
			if code, out, _ = cli(t, "history", "check", "--db", db, "--scenario", "drifting", "--margin", "20%"); code != ExitOK {
				t.Errorf("history check --margin 20%%: exit %d\n%s", code, out)
			}
			html := filepath.Join(dir, "history.html")
			if code, out, errOut = cli(t, "history", "report", "--db", db, "--out", html); code != ExitOK {
				t.Fatalf("history report: %d %s %s", code, out, errOut)
			}
			page, _ := os.ReadFile(html)
			if n := strings.Count(string(page), `class="change-point"`); n < 1 || !strings.Contains(string(page), "nightly") || !strings.Contains(string(page), "regressed by") {
				t.Errorf("report: %d change points drawn, page of %d bytes", n, len(page))
			}
			csvPath := filepath.Join(dir, "h.csv")
			if code, _, errOut = cli(t, "history", "export", "--db", db, "--out", csvPath); code != ExitOK {
				t.Fatalf("export csv: %d %s", code, errOut)
			}
			f, _ := os.Open(csvPath)
			rows, err := csv.NewReader(f).ReadAll()
			f.Close()
			if err != nil || len(rows) < 1+40*3*2 || strings.Join(rows[0], ",") != strings.Join(history.CSVHeader, ",") {
				t.Errorf("export csv: %d rows, %v", len(rows), err)
			}
			code, out, _ = cli(t, "history", "export", "--db", db, "--format", "json", "--scenario", "nightly")
			var rs []history.Result
			if code != ExitOK || json.Unmarshal([]byte(out), &rs) != nil || len(rs) != 2 || rs[1].Commit != "bbbbbbb2222" {
				t.Errorf("export json: %d, %d results", code, len(rs))
			}
			// The regression gate's baseline, from the history: both nightly results' runs.
			base := filepath.Join(dir, "baseline")
			code, out, errOut = cli(t, "history", "baseline", "--db", db, "--out", base, "history:nightly?last=2")
			if code != ExitOK || !strings.Contains(out, "2 runs of 2 results (commits aaaaaaa111 … bbbbbbb222)") {
				t.Errorf("history baseline: exit %d\n%s\n%s", code, out, errOut)
			}
			// More results asked for than the history holds: exit 2, saying how many.
			if code, _, errOut = cli(t, "history", "baseline", "--db", db, "--out", base+"5", "history:nightly?last=5"); code != ExitInvalidConfig ||
				!strings.Contains(errOut, `scenario "nightly" has 2 results on branch "main"; last=5 needs 5`) {
				t.Errorf("history baseline last=5 of 2 results: exit %d, want 2 naming both counts\n%s", code, errOut)
			}
			if series, err := perfrun.LoadSeries(base); err != nil || series.Len() != 2 || series.Workload.Name != "nightly" {
				t.Errorf("the baseline directory: %v", err)
			}
			if code, _, errOut = cli(t, "history", "baseline", "--db", db, "--out", base, "history:nosuch"); code != ExitInvalidConfig || !strings.Contains(errOut, `no results of scenario "nosuch"`) {
				t.Errorf("history baseline of an unknown scenario: %d %s", code, errOut)
			}
			// K runs are one result, whose artifacts are the series' directory.
			art3 := filepath.Join(dir, "nightly-3")
			code, out, errOut = cli(t, "profile", "--mock", "--request-count", "20", "--concurrency", "4", "--name", "nightly", "--num-runs", "2",
				"--artifact-dir", art3, "--history", db, "--commit", "ccccccc3333", "--branch", "main", "--quiet")
			if code != ExitOK || !strings.Contains(out, "nightly, commit ccccccc333, 2 run(s), "+art3+"\n") {
				t.Errorf("profile --num-runs 2 --history: exit %d\n%s\n%s", code, out, errOut)
			}
			if backend == "postgres" {
				// The password reached neither the output nor any artifact.
				for _, d := range []string{art, art2, art3} {
					filepath.WalkDir(d, func(p string, de os.DirEntry, err error) error {
						if b, _ := os.ReadFile(p); strings.Contains(string(b), pgtest.Password) {
							t.Errorf("%s holds the database password", p)
						}
						return nil
					})
				}
				if strings.Contains(string(page), pgtest.Password) {
					t.Error("the report holds the database password")
				}
			}
		})
	}
}

func TestHistoryCLIErrors(t *testing.T) {
	t.Setenv(history.EnvHistory, "")
	db := filepath.Join(t.TempDir(), "h.db")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"history"}, ExitInvalidConfig, "a command is required"},
		{[]string{"history", "frob"}, ExitInvalidConfig, `unknown command "frob"`},
		{[]string{"history", "list"}, ExitInvalidConfig, "no history database: give --db"},
		{[]string{"history", "add", "--db", db}, ExitInvalidConfig, "give the artifact directories"},
		{[]string{"history", "add", "--db", db, t.TempDir()}, ExitInvalidConfig, "holds no run"},
		{[]string{"history", "check", "--db", db}, ExitInvalidConfig, "no results to check"},
		{[]string{"history", "check", "--db", db, "--margin", "150%"}, ExitInvalidConfig, "--margin"},
		{[]string{"history", "check", "--db", db, "--max-p", "2"}, ExitInvalidConfig, "--max-p"},
		{[]string{"history", "export", "--db", db, "--format", "xml"}, ExitInvalidConfig, "--format: want csv or json"},
		{[]string{"history", "show", "--db", db, "x1"}, ExitInvalidConfig, "not a result ID"},
		{[]string{"history", "list", "--db", "postgres://u:Topsecret1@127.0.0.1:1/x?connect_timeout=2"}, ExitRuntime, "u:xxxxx@127.0.0.1:1"},
	} {
		code, _, errOut := cli(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "Topsecret1") {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	_ = context.Background
}

// TestProfileBaselineFromHistory: `profile --baseline history:SCENARIO` gates against the
// runs the history keeps, with no baseline directory; a spec the history cannot answer,
// or no database at all, is invalid configuration before any request.
func TestProfileBaselineFromHistory(t *testing.T) {
	testutil.Long(t) // make test-long
	t.Setenv(history.EnvHistory, "")
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	common := []string{"--mock", "--request-count", "30", "--concurrency", "4", "--name", "gated", "--quiet"}
	code, out, errOut := cli(t, append([]string{"profile", "--num-runs", "3", "--artifact-dir", filepath.Join(dir, "nightly"), "--history", db, "--branch", "main"}, common...)...)
	if code != ExitOK {
		t.Fatalf("profile --history: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = cli(t, append([]string{"profile", "--baseline", "history:gated", "--history", db, "--branch", "main", "--max-runs", "5", "--artifact-dir", filepath.Join(dir, "cur")}, common...)...)
	if code == ExitInvalidConfig || code == ExitRuntime || !strings.Contains(out, "regression gate") {
		t.Fatalf("profile --baseline history:gated: exit %d, want a gate's verdict\n%s\n%s", code, out, errOut)
	}
	// The gated job's runs are the history's next result: one more session.
	if !strings.Contains(out, "history: recorded result 2: gated") {
		t.Errorf("profile --baseline history:gated --history: the current runs were not recorded\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--baseline", "history:other", "--history", db}, `no results of scenario "other"`},
		{[]string{"--baseline", "history:gated?last=4", "--history", db}, `scenario "gated" has 2 results on branch "main"; last=4 needs 4`},
		{[]string{"--baseline", "history:gated"}, "no history database"},
	} {
		code, out, errOut := cli(t, append(append([]string{"profile", "--artifact-dir", filepath.Join(dir, "refused")}, tc.args...), common...)...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, tc.want) {
			t.Errorf("profile %s: exit %d, want %d and %q\n%s\n%s", strings.Join(tc.args, " "), code, ExitInvalidConfig, tc.want, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, "refused", "client.jsonl")); err == nil {
			t.Errorf("profile %s: a request was recorded before the refusal", strings.Join(tc.args, " "))
		}
	}
}

// history add trusts nothing in an artifact directory's runs.json. Each edit of a real
// two-run series is refused with exit 2, naming the file and the field, and nothing is
// recorded: a run directory outside the artifact directory (it was followed, and
// another directory's run recorded as this one's), a run without statistics (stored,
// it read back as a one-run result with the verdicts of two), and statistics no run
// can have. The series as written is recorded, with both runs.
func TestHistoryAddRefusesHostileIndex(t *testing.T) {
	testutil.Long(t) // 7–16 s: make test stays under 10 minutes on a fresh 2-core machine
	t.Setenv(history.EnvHistory, "")
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if code, out, errOut := cli(t, "profile", "--mock", "--num-runs", "2", "--request-count", "20", "--concurrency", "4", "--name", "k2",
		"--artifact-dir", base, "--quiet"); code != ExitOK {
		t.Fatalf("profile: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := os.CopyFS(filepath.Join(dir, "other"), os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "h.db")
	for _, c := range []struct {
		name string
		edit func(idx map[string]any)
		want string // after DIR/
	}{
		{"outside", func(idx map[string]any) { idx["dirs"].([]any)[1] = "../other/run-002" },
			`runs.json: dirs[1]: "../other/run-002" leaves the artifact directory`},
		{"no stats", func(idx map[string]any) { indexRun(idx, 1)["stats"] = map[string]any{} },
			"runs.json: runs[1].stats: no statistics"},
		{"negative", func(idx map[string]any) { indexRun(idx, 1)["stats"].(map[string]any)["ttft_p50"] = -0.5 },
			"runs.json: runs[1].stats.ttft_p50: -0.5: want a number >= 0"},
		{"huge", func(idx map[string]any) { indexRun(idx, 0)["stats"].(map[string]any)["ttft_p50"] = 1e308 },
			"runs.json: runs[0].stats.ttft_p50: 1e+308: want at most 1e+12"},
	} {
		t.Run(c.name, func(t *testing.T) {
			art := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if err := os.CopyFS(art, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(art, gate.RunsFile)
			b, _ := os.ReadFile(p)
			var idx map[string]any
			if err := json.Unmarshal(b, &idx); err != nil {
				t.Fatal(err)
			}
			c.edit(idx)
			b, _ = json.Marshal(idx)
			os.WriteFile(p, b, 0o644)
			code, out, errOut := cli(t, "history", "add", "--db", db, art)
			if want := filepath.Join(art, gate.RunsFile) + strings.TrimPrefix(c.want, gate.RunsFile); code != ExitInvalidConfig || !strings.Contains(errOut, want) {
				t.Errorf("history add: exit %d\n%s%s\nwant exit %d and %q", code, out, errOut, ExitInvalidConfig, want)
			}
		})
	}
	if code, out, errOut := cli(t, "history", "list", "--db", db); code != ExitOK || strings.Contains(out, "k2") {
		t.Errorf("history list after refused adds: exit %d\n%s%s\nwant no result", code, out, errOut)
	}
	if code, out, errOut := cli(t, "history", "add", "--db", db, base); code != ExitOK || !strings.Contains(out, "recorded result 1: k2, commit (none), 2 run(s)") {
		t.Fatalf("history add of the series as written: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ := cli(t, "history", "show", "--db", db, "--json", "1")
	var r history.Result
	if err := json.Unmarshal([]byte(out), &r); code != ExitOK || err != nil || len(r.Runs) != 2 {
		t.Errorf("history show 1: exit %d, %d runs, %v\n%s", code, len(r.Runs), err, out)
	}
}

// indexRun returns run i of a runs.json read as a generic value.
func indexRun(idx map[string]any, i int) map[string]any {
	return idx["runs"].([]any)[i].(map[string]any)
}
