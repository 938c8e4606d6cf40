package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/reportgen"
)

// stormFile writes a scenario file: a closed loop of 4 against the mock answering
// half its requests with a 500 (its fault injection), for two minutes unless
// stopped, with extra appended (an abort: section).
func stormFile(t *testing.T, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "storm.yaml")
	body := "concurrency: 4\nduration: 2m\nisl: fixed:16\nosl: fixed:4\nmock:\n  ttft_ms: fixed:1\n  itl_ms: fixed:0.1\n  faults:\n    error_rate: 0.5\n" + extra
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkAborted: the run in art was stopped early (the manifest says why) and the
// reason is the first line of the output.
func checkAborted(t *testing.T, art, out, first string) {
	t.Helper()
	if !strings.HasPrefix(out, first) {
		t.Errorf("output does not begin %q:\n%s", first, out)
	}
	var m reportgen.Manifest
	if b, err := os.ReadFile(filepath.Join(art, reportgen.ManifestFile)); err != nil || json.Unmarshal(b, &m) != nil || m.Aborted == "" || !strings.Contains(out, m.Aborted) {
		t.Errorf("manifest aborted = %q (%v)", m.Aborted, err)
	}
	if fi, err := os.Stat(filepath.Join(art, "client.jsonl")); err != nil || fi.Size() == 0 {
		t.Errorf("no records on disk: %v", err)
	}
}

// TestAbortOnExit99: an error storm of two minutes is stopped by --abort-on
// error_rate>0.2 (the objectives let any error rate pass): exit 99, the reason first,
// records and manifest on disk. With the delay longer than a short run, the same
// storm is not stopped and passes.
func TestAbortOnExit99(t *testing.T) {
	cfg := stormFile(t, "")
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "-q", "--config", cfg, "--artifact-dir", art, "--assert", "error_rate<=1", "--abort-on", "error_rate>0.2", "--abort-delay", "0")
	if code != ExitAssertFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitAssertFailed, out, errOut)
	}
	checkAborted(t, art, out, "ABORTED (an abort rule held: exit 99): abort rule error_rate>0.2 held at ")
	if !strings.Contains(out, "FAIL aborted: abort rule error_rate>0.2") {
		t.Errorf("no failing aborted verdict:\n%s", out)
	}
	// Recorded in a history, an aborted run is not a result to compare with.
	db := filepath.Join(t.TempDir(), "history.db")
	code, out, errOut = cli(t, "profile", "--mock", "-q", "--config", cfg, "--artifact-dir", filepath.Join(t.TempDir(), "run"), "--assert", "error_rate<=1", "--abort-on", "error_rate>0.2", "--history", db)
	if code != ExitAssertFailed || !strings.Contains(out, "history: not recorded: the run was aborted (abort rule error_rate>0.2") || strings.Contains(out, "history: recorded") {
		t.Errorf("--history: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = cli(t, "profile", "--mock", "-q", "--config", cfg, "--artifact-dir", filepath.Join(t.TempDir(), "run"), "--assert", "error_rate<=1",
		"--abort-on", "error_rate>0.2", "--abort-delay", "3600", "--benchmark-duration", "0", "--request-count", "40")
	if code != ExitOK || strings.Contains(out, "ABORTED") {
		t.Errorf("before the delay: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestFailedRequestThresholdExit1: AIPerf's --failed-request-threshold stops the
// storm as an invalid measurement: exit 1, the reason first.
func TestFailedRequestThresholdExit1(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "-q", "--config", stormFile(t, ""), "--artifact-dir", art, "--assert", "error_rate<=1", "--failed-request-threshold", "0.3")
	if code != ExitRuntime {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitRuntime, out, errOut)
	}
	checkAborted(t, art, out, "ABORTED (invalid measurement: exit 1): failed-request threshold: ")
	if !strings.Contains(out, "INVALID aborted: failed-request threshold") || !strings.Contains(errOut, "invalid measurement: aborted") {
		t.Errorf("not said invalid:\n%s\n%s", out, errOut)
	}
}

// TestAbortScenarioFile: abort: in a scenario file stops the storm as --abort-on
// does; without -q the reason comes before the table and the verdicts.
func TestAbortScenarioFile(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	cfg := stormFile(t, "objectives:\n  rules: [\"error_rate<=1\"]\nabort:\n  rules: [\"error_rate>0.2\"]\n  min_requests: 30\n")
	code, out, errOut := cli(t, "profile", "--mock", "--config", cfg, "--artifact-dir", art)
	if code != ExitAssertFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitAssertFailed, out, errOut)
	}
	_, rest, _ := strings.Cut(out, "\n") // the "perfgate profile: …" line
	checkAborted(t, art, rest, "ABORTED (an abort rule held: exit 99): abort rule error_rate>0.2")
	if i, j := strings.Index(out, "ABORTED"), strings.Index(out, "FAIL aborted"); i < 0 || j < i {
		t.Errorf("the reason does not come before the verdicts:\n%s", out)
	}
}

// TestAbortBadInput: an abort rule on an unknown metric, the wrong comparison, a
// delay below 0, a threshold outside (0, 1): exit 2 naming the flag, or the file's
// line, before any request.
func TestAbortBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--abort-on", "nonesuch_p99>1s"}, `--abort-on "nonesuch_p99>1s", column 1: unknown metric "nonesuch"`},
		{[]string{"--abort-on", "error_rate<=0.2"}, `--abort-on "error_rate<=0.2", column 11: want > or <`},
		{[]string{"--abort-on", "error_rate>2"}, `--abort-on "error_rate>2", column 11: want error_rate<=FRACTION with a fraction in [0, 1]`},
		{[]string{"--abort-delay", "-1"}, "--abort-delay -1: want a number of seconds >= 0"},
		{[]string{"--abort-window", "0"}, "--abort-window 0: want a positive number of seconds"},
		{[]string{"--abort-min-requests", "0"}, "--abort-min-requests 0: want a number of requests >= 1"},
		{[]string{"--failed-request-threshold", "1.5"}, "--failed-request-threshold 1.5: want a fraction in (0, 1)"},
		{[]string{"--failed-request-threshold", "-0.1"}, "--failed-request-threshold -0.1: want a fraction in (0, 1)"},
	} {
		art := filepath.Join(t.TempDir(), "run")
		code, _, errOut := cli(t, append([]string{"profile", "--mock", "-q", "--artifact-dir", art, "--request-count", "4"}, tc.args...)...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want %d naming %q:\n%s", tc.args, code, ExitInvalidConfig, tc.want, errOut)
		}
		if _, err := os.Stat(filepath.Join(art, "client.jsonl")); err == nil {
			t.Errorf("%v: a request was recorded", tc.args)
		}
	}
	cfg := stormFile(t, "abort:\n  rules:\n    - error_rate>0.2\n    - ttft_p99>=2s\n  delay: -5s\n")
	code, _, errOut := cli(t, "profile", "--mock", "-q", "--config", cfg, "--artifact-dir", filepath.Join(t.TempDir(), "run"))
	for _, w := range []string{cfg + ":13:7: abort.rules[1]: ", "column 9: want > or <", cfg + ":14:10: abort.delay: -5s: want a duration >= 0"} {
		if code != ExitInvalidConfig || !strings.Contains(errOut, w) {
			t.Errorf("file: exit %d, want %d with %q:\n%s", code, ExitInvalidConfig, w, errOut)
		}
	}
}

// TestOverSaturationExit99: `--abort-on over_saturation` turns on the detector (tuned
// in the scenario file to a 0.6 s window), which stops an open loop offered four
// times what the mock's batching engine completes: exit 99, the reason first, the
// records kept; a tuning field out of range is exit 2 naming it.
func TestOverSaturationExit99(t *testing.T) {
	p := filepath.Join(t.TempDir(), "saturate.yaml")
	body := "rate: 160\nduration: 2m\nisl: fixed:16\nosl: fixed:4\nmock:\n  batch: {enabled: true, step: 10ms, max_batch: 2}\n" +
		"abort:\n  over_saturation: {min_duration: 300ms, window: 600ms, min_ttft: 50ms%s}\n"
	if err := os.WriteFile(p, []byte(fmt.Sprintf(body, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "-q", "--config", p, "--artifact-dir", art, "--abort-on", "over_saturation")
	if code != ExitAssertFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitAssertFailed, out, errOut)
	}
	checkAborted(t, art, out, "ABORTED (the server is over-saturated: exit 99): over-saturated at ")
	if !strings.Contains(out, "FAIL aborted: over-saturated at ") {
		t.Errorf("no failing aborted verdict:\n%s", out)
	}
	if err := os.WriteFile(p, []byte(fmt.Sprintf(body, ", confidence: 1.5")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "profile", "--mock", "-q", "--config", p, "--artifact-dir", filepath.Join(t.TempDir(), "run"), "--abort-on", "over_saturation")
	if code != ExitInvalidConfig || !strings.Contains(errOut, "abort.over_saturation.confidence 1.5: want a level in (0, 1)") {
		t.Errorf("bad confidence: exit %d\n%s", code, errOut)
	}
}
