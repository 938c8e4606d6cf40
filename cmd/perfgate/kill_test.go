package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

// TestMain lets a test run the CLI as a separate process (this test binary re-executed
// with PERFGATE_TEST_MAIN=1), so it can be killed.
//
// $GITHUB_STEP_SUMMARY is unset first: the runs of these tests must not write into the
// summary of the CI job that runs them (a test sets it to a file of its own).
func TestMain(m *testing.M) {
	os.Unsetenv(reportgen.EnvStepSummary)
	if os.Getenv("PERFGATE_TEST_MAIN") == "1" {
		code := mainCode()
		reportPeakRSS()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// cliCmd is the CLI re-executed as a child process: this test binary with
// PERFGATE_TEST_MAIN=1 (see TestMain), env added to this process's environment.
func cliCmd(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "PERFGATE_TEST_MAIN=1"), env...)
	return cmd
}

// countLines is the number of complete (newline-terminated) lines in path.
func countLines(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

// A profile killed with SIGKILL (no chance to flush or clean up) keeps every record of
// a request completed more than a second before the kill, and perfgate report
// rebuilds the exports, the HTML report and the verdicts from its directory.
func TestSIGKILLKeepsRecordsAndReportRecovers(t *testing.T) {
	srv := startMock(t, "127.0.0.1")
	art := filepath.Join(t.TempDir(), "killed")
	cmd := cliCmd(nil, "profile", "--url", srv.URL(), "--request-rate", "100", "--concurrency", "4",
		"--benchmark-duration", "600", "--osl", "8", "--random-seed", "5", "--artifact-dir", art, "--quiet")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// Wait until records are on disk: proof the run is under way and flushing.
	client := filepath.Join(art, perfrun.ClientFile)
	giveUp := time.After(time.Minute) // a run that never writes its records fails, not hangs
	for countLines(client) < 20 {
		select {
		case err := <-exited:
			t.Fatalf("perfgate profile exited early: %v\n%s", err, stderr.String())
		case <-giveUp:
			t.Fatalf("%s has %d lines after a minute of running at 100 req/s; want records on disk as requests finish", client, countLines(client))
		case <-time.After(20 * time.Millisecond):
		}
	}
	// What the server had finished by now must all be on disk after the kill, given
	// the client's one-second flush; the wait is that interval plus slack, not a bound
	// the test measures.
	done := srv.Records()
	time.Sleep(loadgen.RecordFlushInterval + 500*time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited

	f, err := os.Open(client)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := record.ReadClient(f)
	f.Close()
	if err != nil && !strings.Contains(err.Error(), record.ErrTruncated.Error()) {
		t.Fatalf("reading the killed run's %s: %v", perfrun.ClientFile, err)
	}
	kept := make(map[string]bool, len(recs))
	for _, r := range recs {
		kept[r.RequestID] = true
	}
	lost := 0
	for _, s := range done {
		if s.Status == 200 && !kept[s.RequestID] {
			lost++
		}
	}
	t.Logf("server had finished %d requests a second before SIGKILL; client.jsonl holds %d records", len(done), len(recs))
	if len(done) < 20 || lost > 0 {
		t.Errorf("after SIGKILL, %d of the %d requests the server had finished more than a second earlier are missing from %s (it holds %d)",
			lost, len(done), perfrun.ClientFile, len(recs))
	}

	code, out, errOut := cli(t, "report", art, "--assert", "error_rate<=0.5")
	if code != ExitOK {
		t.Fatalf("perfgate report on the killed run = exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "did not finish") || !strings.Contains(out, "PASS") {
		t.Errorf("perfgate report output does not say the run was cut short and gated:\n%s", out)
	}
	for _, name := range []string{reportgen.RunReportFile, reportgen.AIPerfJSONFile, reportgen.AIPerfJSONLFile, reportgen.ManifestFile, perfrun.MetricsFile, perfrun.VerdictsFile} {
		if _, err := os.Stat(filepath.Join(art, name)); err != nil {
			t.Errorf("perfgate report: %s: %v", name, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(art, reportgen.AIPerfJSONFile))
	if !strings.Contains(string(b), `"was_cancelled": true`) {
		t.Errorf("%s of a killed run is not marked was_cancelled", reportgen.AIPerfJSONFile)
	}
	// Re-gating with an assertion the run fails gives the gate's exit code.
	if code, out, _ := cli(t, "report", art, "--assert", "request_throughput>=1000000", "--quiet"); code != ExitAssertFailed {
		t.Errorf("perfgate report --assert (failing) = exit %d, want %d\n%s", code, ExitAssertFailed, out)
	}
}
