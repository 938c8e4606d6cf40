package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileAgentTrace replays the shipped agent trace against the in-process mock
// from the CLI: exit 0, the job metrics in metrics.json, every record with its job,
// and a bad trace refused with FILE:LINE as invalid configuration.
func TestProfileAgentTrace(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mock.yaml")
	if err := os.WriteFile(cfg, []byte("mock:\n  ttft_ms: fixed:1\n  itl_ms: fixed:0.1\n  session_header: X-Session-Id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := "../../loadgen/dataset/testdata/agent_trace.jsonl"
	art := filepath.Join(dir, "run")
	code, out, errOut := cli(t, "profile", "--mock", "-q", "--config", cfg, "--artifact-dir", art, "--endpoint-type", "completions",
		"--input-file", trace, "--custom-dataset-type", "agent_trace", "--num-users", "3", "--replay-speedup", "1000", "--isl-block-size", "64",
		"--session-header", "X-Session-Id", "--connection-reuse-strategy", "sticky-user-sessions", "--assert", "jobs_per_hour>=1")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var m struct {
		Scalars map[string]struct{ Value float64 } `json:"scalars"`
	}
	b, err := os.ReadFile(filepath.Join(art, "metrics.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("metrics.json: %v", err)
	}
	for _, name := range []string{"job_latency_p50", "job_latency_p99", "jobs_per_hour", "subagent_fanout", "tool_wait_share"} {
		if _, ok := m.Scalars[name]; !ok {
			t.Errorf("metrics.json has no %s", name)
		}
	}
	if f := m.Scalars["subagent_fanout"].Value; f != 4 {
		t.Errorf("subagent_fanout = %v; the trace's jobs have 4 sub-agents each", f)
	}
	recs, err := os.ReadFile(filepath.Join(art, "client.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n, jobs := strings.Count(string(recs), "\n"), strings.Count(string(recs), `"job_id":"job-`); n != 78 || jobs != 78 {
		t.Errorf("client.jsonl: %d records, %d with a job; want 78 and 78", n, jobs)
	}

	bad := filepath.Join(dir, "bad.jsonl")
	data, _ := os.ReadFile(trace)
	lines := strings.SplitAfter(string(data), "\n")
	lines[4] = `{"session_id":"x","parent_session_id":"nobody","turn":0,"delay":1,"input_tokens":10,"output_tokens":1}` + "\n"
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, "profile", "--mock", "-q", "--config", cfg, "--artifact-dir", filepath.Join(dir, "bad"),
		"--input-file", bad, "--custom-dataset-type", "agent_trace", "--num-users", "3")
	if code != ExitInvalidConfig || !strings.Contains(errOut, bad+":5: session \"x\": parent_session_id \"nobody\" names no session") {
		t.Errorf("bad trace: exit %d, stdout %q, stderr %q; want %d naming %s:5", code, out, errOut, ExitInvalidConfig, bad)
	}
}

// TestAgentFlagsInvalid: the agent flags' bad values are invalid configuration.
func TestAgentFlagsInvalid(t *testing.T) {
	trace := "../../loadgen/dataset/testdata/agent_trace.jsonl"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--num-users", "3", "--concurrency", "2"}, "--num-users and --concurrency conflict"},
		{[]string{"--num-users", "0"}, "--num-users 0"},
		{[]string{"--trace-session-sample-ratio", "2", "--input-file", trace, "--custom-dataset-type", "agent_trace"}, "--trace-session-sample-ratio 2: want 0 to 1"},
		{[]string{"--trace-session-sample-ratio", "0.5", "--request-count", "5"}, "trace_session_sample_ratio and max_idle_gap need an agent trace"},
		{[]string{"--connection-reuse-strategy", "sometimes", "--request-count", "5"}, `--connection-reuse-strategy "sometimes": want pooled, never or sticky-user-sessions`},
		{[]string{"--session-header", "X Bad", "--request-count", "5"}, `session_header "X Bad": want a header name`},
		{[]string{"--replay-speedup", "-1", "--request-count", "5"}, "--replay-speedup: want a value >= 0"},
	} {
		code, _, errOut := cli(t, append([]string{"profile", "--mock", "-q", "--artifact-dir", filepath.Join(t.TempDir(), "run")}, tc.args...)...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d saying %q", tc.args, code, errOut, ExitInvalidConfig, tc.want)
		}
	}
}
