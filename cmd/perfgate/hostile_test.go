package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	perfrun "github.com/perfgate/perfgate/perftest/run"
)

// maxHostileRSS bounds the peak memory of a CLI process given a hostile file. The
// process itself (this test binary re-executed) takes a few tens of MB; the 7-line
// billion-laughs file took 1.1 GB before aliases were bounded, and the 8 KB
// alias-bytes file (a long string aliased within the node limit) 8.6 GB before the
// text they expand to was.
const maxHostileRSS = 256 << 20

// hostileDir holds the hostile scenario files the scenario package's tests use.
const hostileDir = "../../perftest/scenario/testdata/hostile"

// A child given PERFGATE_TEST_ALLOC_MIB=N touches N MiB and exits: the failure path of
// the peak-RSS assertion (TestPeakRSSIsMeasured).
func init() {
	if n := os.Getenv("PERFGATE_TEST_ALLOC_MIB"); n != "" {
		mib, _ := strconv.Atoi(n)
		b := make([]byte, mib<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		reportPeakRSS()
		os.Exit(int(b[len(b)/2]) - 1)
	}
}

// The peak RSS runChild reports is the child's: a child that touches 300 MiB is over
// maxHostileRSS, so a hostile file that made the CLI take gigabytes would fail.
func TestPeakRSSIsMeasured(t *testing.T) {
	code, _, rss := runChild(t, []string{"PERFGATE_TEST_ALLOC_MIB=300"})
	if code != 0 || rss < 300<<20 || rss <= maxHostileRSS {
		t.Errorf("child touching 300 MiB: exit %d, peak RSS %d MiB; want 0 and >= 300 MiB (over the %d MiB bound)", code, rss>>20, maxHostileRSS>>20)
	}
}

// The peak RSS runChild reports does not depend on this test process's: after this
// process has touched 300 MiB, a child that exits at once is still far under the bound.
// (wait4's rusage would say over 300 MiB: see reportPeakRSS.)
func TestPeakRSSIsTheChildsOwn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peak RSS comes from /proc only on Linux")
	}
	b := make([]byte, 300<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	code, _, rss := runChild(t, []string{"PERFGATE_TEST_ALLOC_MIB=1"})
	runtime.KeepAlive(b)
	if code != 0 || rss >= 128<<20 {
		t.Errorf("child touching 1 MiB after this process touched 300 MiB: exit %d, peak RSS %d MiB; want 0 and under 128 MiB", code, rss>>20)
	}
}

// peakRSSEnv names the file a re-executed CLI process appends its peak RSS to, in
// bytes, one line per process (a supervised run has two).
const peakRSSEnv = "PERFGATE_TEST_PEAK_RSS_FILE"

// reportPeakRSS appends this process's peak RSS to the file peakRSSEnv names. It reads
// VmHWM, the high-water mark of the memory this process mapped since its exec. The
// rusage wait4 gives the parent is no use for this: os/exec starts a child with vfork,
// and Linux carries the parent's high-water mark into the child's at exec, so once
// this test binary had grown past the bound (266 MiB in a full suite run) every child
// looked over it.
func reportPeakRSS() {
	path := os.Getenv(peakRSSEnv)
	if path == "" {
		return
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for line := range strings.Lines(string(status)) {
		v, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			return
		}
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			fmt.Fprintln(f, kib<<10)
			f.Close()
		}
	}
}

// runChild runs the CLI as a child process (this test binary with
// PERFGATE_TEST_MAIN=1) and returns its exit code, its stderr and its peak RSS in
// bytes. env is added to the child's environment.
func runChild(t *testing.T, env []string, args ...string) (int, string, int64) {
	t.Helper()
	peakFile := filepath.Join(t.TempDir(), "peak-rss")
	cmd := cliCmd(append([]string{peakRSSEnv + "=" + peakFile}, env...), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("perfgate %v: %v", args, err)
	}
	code := cmd.ProcessState.ExitCode()
	if runtime.GOOS != "linux" {
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			t.Fatalf("perfgate %v: no rusage", args)
		}
		return code, stderr.String(), ru.Maxrss // bytes on Darwin
	}
	lines, _ := os.ReadFile(peakFile)
	var peak int64
	for line := range strings.Lines(string(lines)) {
		n, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if err != nil {
			t.Fatalf("perfgate %v: %s: %q: %v", args, peakRSSEnv, line, err)
		}
		peak = max(peak, n)
	}
	if peak == 0 {
		t.Fatalf("perfgate %v: exit %d, and no process reported its peak RSS; stderr:\n%s", args, code, stderr.String())
	}
	return code, stderr.String(), peak
}

// checkChild fails unless the child exited with code, said want on stderr, did not
// panic and stayed under maxHostileRSS.
func checkChild(t *testing.T, code int, stderr string, rss int64, wantCode int, want string) {
	t.Helper()
	if code != wantCode || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, wantCode, want)
	}
	for _, crash := range []string{"panic:", "goroutine ", "fatal error:", "stack overflow"} {
		if strings.Contains(stderr, crash) {
			t.Errorf("stderr has %q:\n%s", crash, stderr)
		}
	}
	if rss > maxHostileRSS {
		t.Errorf("peak RSS %d MiB, want <= %d MiB", rss>>20, maxHostileRSS>>20)
	}
	t.Logf("exit %d, peak RSS %d MiB", code, rss>>20)
}

// hostileFiles returns the hostile scenario files, and a JSON file nested 100,000
// levels deep, in dir.
func hostileFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	paths, _ := filepath.Glob(filepath.Join(hostileDir, "*"))
	if len(paths) < 5 {
		t.Fatalf("%s: %d files, want the hostile files", hostileDir, len(paths))
	}
	for _, p := range paths {
		files[filepath.Base(p)] = p
	}
	deep := filepath.Join(t.TempDir(), "deep.json")
	os.WriteFile(deep, []byte(`{"name":`+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)+"}"), 0o644)
	files["deep.json"] = deep
	return files
}

// want is the start of the error each hostile file gives (after its path).
var hostileWant = map[string]string{
	"client-number.json":  ":1:2: client: the client block is gone",
	"client-null.json":    ":1:2: client: the client block is gone",
	"client-list.json":    ":1:2: client: the client block is gone",
	"alias-cycle.yaml":    ":1:11: alias *a refers to a node that contains it",
	"billion-laughs.yaml": ":6:10: alias *a4: aliases expand to more than 100000 nodes (the limit)",
	"alias-bytes.yaml":    ":6:30: alias *b: aliases expand to more than 4 MiB of text (the limit)",
	"deep.json":           ":1:108: nested more than 100 levels deep (the limit)",
}

// perfgate profile --config with each hostile file exits 2 (invalid configuration,
// before any request) naming the file and line, without a panic or gigabytes.
func TestHostileConfig(t *testing.T) {
	for name, path := range hostileFiles(t) {
		t.Run(name, func(t *testing.T) {
			want, ok := hostileWant[name]
			if !ok {
				t.Fatalf("%s: no expected error; add it to hostileWant", name)
			}
			code, stderr, rss := runChild(t, nil, "profile", "--mock", "--config", path, "--artifact-dir", t.TempDir(), "-q")
			checkChild(t, code, stderr, rss, ExitInvalidConfig, path+want)
		})
	}
}

// runDir writes a run directory: one client record and the given scenario.json.
func runDir(t *testing.T, scenarioJSON []byte) string {
	t.Helper()
	dir := t.TempDir()
	line := `{"index":0,"start":1767225600,"latency_s":0.1,"ttft_s":0.05,"isl":5,"osl":3,"status":200}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, perfrun.ClientFile), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, perfrun.ScenarioFile), scenarioJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// perfgate report and perfgate merge on a run directory whose scenario.json is
// corrupted exit non-zero with the file and what is wrong, without a panic; and
// perftest.Load (perfrun.Load) on it returns the error.
func TestHostileRunDir(t *testing.T) {
	for name, path := range hostileFiles(t) {
		if strings.HasSuffix(name, ".yaml") {
			continue // scenario.json is JSON
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			dir := runDir(t, b)
			want := hostileWant[name]
			if _, err := perfrun.Load(dir); err == nil || !strings.Contains(err.Error(), perfrun.ScenarioFile+want) {
				t.Errorf("perfrun.Load = %v; want %s%s", err, perfrun.ScenarioFile, want)
			}
			code, stderr, rss := runChild(t, nil, "report", dir)
			checkChild(t, code, stderr, rss, ExitInvalidConfig, perfrun.ScenarioFile+want)
			code, stderr, rss = runChild(t, nil, "merge", "--artifact-dir", filepath.Join(t.TempDir(), "merged"), "--quiet", dir)
			if code == ExitOK {
				t.Errorf("merge: exit 0 with a corrupted %s", perfrun.ScenarioFile)
			}
			checkChild(t, code, stderr, rss, code, perfrun.ScenarioFile)
		})
	}
}
