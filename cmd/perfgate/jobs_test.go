package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileSyntheticJobs runs synthetic jobs under user-centric timing from the CLI
// against the in-process mock: exit 0, a run of the user-centric mode, every record
// with its job, the job metrics and TTFT by turn in metrics.json.
func TestProfileSyntheticJobs(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mock.yaml")
	if err := os.WriteFile(cfg, []byte("mock:\n  ttft_ms: fixed:1\n  itl_ms: fixed:0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(dir, "run")
	code, out, errOut := cli(t, "profile", "--mock", "-q", "--config", cfg, "--artifact-dir", art, "--endpoint-type", "chat",
		"--isl", "16", "--osl", "4", "--session-turns-mean", "3", "--subagent-count", "2", "--subagent-after-turn", "0", "--subagent-turns", "1",
		"--user-centric-rate", "200", "--num-users", "2", "--request-count", "15")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var m struct {
		Scalars    map[string]struct{ Value float64 } `json:"scalars"`
		TTFTByTurn []struct {
			Turn, Count int
		} `json:"ttft_by_turn"`
	}
	b, err := os.ReadFile(filepath.Join(art, "metrics.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("metrics.json: %v", err)
	}
	// A job the request count cut before its fan-out has none: the mean is over 0 to 2.
	if f, ok := m.Scalars["subagent_fanout"]; !ok || f.Value <= 0 || f.Value > 2 {
		t.Errorf("subagent_fanout = %v (reported %v); want in (0, 2]", f.Value, ok)
	}
	if len(m.TTFTByTurn) != 3 || m.TTFTByTurn[0].Turn != 0 || m.TTFTByTurn[2].Turn != 2 {
		t.Errorf("ttft_by_turn = %+v; want turns 0, 1 and 2", m.TTFTByTurn)
	}
	if page, err := os.ReadFile(filepath.Join(art, "report.html")); err != nil || !strings.Contains(string(page), "<h2>Jobs and turns</h2>") {
		t.Errorf("report.html has no Jobs and turns section (%v)", err)
	}
	recs, err := os.ReadFile(filepath.Join(art, "client.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n, jobs := strings.Count(string(recs), "\n"), strings.Count(string(recs), `"job_id":"job-`); n != 15 || jobs != 15 {
		t.Errorf("client.jsonl: %d records, %d with a job; want 15 and 15", n, jobs)
	}
}

// TestJobFlagsInvalid: bad user-centric and sub-agent flags are invalid
// configuration (exit 2), each naming its flag.
func TestJobFlagsInvalid(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--user-centric-rate", "2", "--request-count", "5"}, "--user-centric-rate needs --num-users"},
		{[]string{"--user-centric-rate", "0", "--num-users", "3", "--request-count", "5"}, "--user-centric-rate 0: want a rate > 0"},
		{[]string{"--user-centric-rate", "-1", "--num-users", "3", "--request-count", "5"}, "--user-centric-rate -1: want a rate > 0"},
		{[]string{"--user-centric-rate", "2", "--num-users", "3", "--request-rate", "5", "--request-count", "5"}, "--user-centric-rate and --request-rate conflict"},
		{[]string{"--user-centric-rate", "2", "--num-users", "3", "--arrival", "gamma", "--request-count", "5"}, `arrival "gamma" with user_centric_rate`},
		{[]string{"--subagent-count", "-1", "--request-count", "5"}, "--subagent-count -1: want a count >= 0"},
		{[]string{"--subagent-turns", "2", "--request-count", "5"}, "--subagent-turns needs --subagent-count"},
		{[]string{"--subagent-count", "2", "--subagent-after-turn", "3", "--session-turns-mean", "3", "--request-count", "5"}, "subagent_after_turn 3: the jobs have 3 turns"},
	} {
		code, _, errOut := cli(t, append([]string{"profile", "--mock", "-q", "--artifact-dir", filepath.Join(t.TempDir(), "run")}, tc.args...)...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d saying %q", tc.args, code, errOut, ExitInvalidConfig, tc.want)
		}
	}
}
