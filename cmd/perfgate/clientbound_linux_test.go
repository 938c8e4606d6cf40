//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/reportgen"
)

// TestScheduleAbortCLI: perfgate profile at 2,000 req/s for 20 s whose process is
// stopped 95% of the time (SIGSTOP/SIGCONT on a 100 ms cycle, from the moment it
// starts the run: its one CPU then has at most 25 µs a request, a fraction of what a
// request costs the client) falls ever further behind its schedule; with
// --max-schedule-lag 0.3 it is stopped, exits 1 with INVALID client-bound and the
// reason first, and keeps its records on disk, its manifest marked aborted.
func TestScheduleAbortCLI(t *testing.T) {
	srv := startMock(t, "127.0.0.1")
	art := filepath.Join(t.TempDir(), "run")
	cmd := cliCmd([]string{"GOMAXPROCS=1", supervisedEnv + "=1"}, // the run in this process, not a supervised child
		"profile", "--url", srv.URL(), "--request-rate", "2000", "--request-rate-mode", "constant",
		"--benchmark-duration", "20", "--osl", "2", "--isl", "16", "--max-schedule-lag", "0.3", "--artifact-dir", art)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // stopped alone, not in go test's group (see scenario's runChild)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	r := bufio.NewReader(stdout)
	first, err := r.ReadString('\n') // "perfgate profile: …", printed before the run
	if err != nil {
		t.Fatalf("profile: %v\n%s", err, stderr.String())
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		p := cmd.Process
		defer p.Signal(syscall.SIGCONT) // never leave it stopped
		for {
			if p.Signal(syscall.SIGSTOP) != nil {
				return
			}
			select {
			case <-done:
				return
			case <-time.After(95 * time.Millisecond):
			}
			if p.Signal(syscall.SIGCONT) != nil {
				return
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var out strings.Builder
	out.WriteString(first)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
	}
	close(done)
	<-stopped
	_ = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	// The abort is the headline either way. The client-bound verdict follows when a
	// request finished; a client stopped before any did (its SIGSTOP cycles decide which)
	// ends on the no-request error, which names the schedule too.
	if code != ExitRuntime || !strings.Contains(out.String(), "ABORTED (invalid measurement: exit 1): schedule ") {
		t.Fatalf("exit %d, want %d with the schedule abort:\n%s\n%s", code, ExitRuntime, out.String(), stderr.String())
	}
	none := strings.Contains(stderr.String(), "no request succeeded") && strings.Contains(stderr.String(), "the client fell behind its schedule")
	if !none && !strings.Contains(out.String(), "INVALID client-bound: the run was stopped early: schedule ") {
		t.Fatalf("want INVALID client-bound (or no request and the schedule's error):\n%s\n%s", out.String(), stderr.String())
	}
	if n := countLines(filepath.Join(art, perfrun.ClientFile)); n == 0 {
		t.Error("no records on disk")
	}
	var m reportgen.Manifest
	if b, err := os.ReadFile(filepath.Join(art, reportgen.ManifestFile)); err != nil || json.Unmarshal(b, &m) != nil || !strings.Contains(m.Aborted, "the client cannot keep up") {
		t.Errorf("manifest aborted = %q (%v)", m.Aborted, err)
	}
	t.Logf("%s", out.String())
}
