//go:build unix

package run

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
)

func TestLimitProblemsConstructed(t *testing.T) {
	big := Limits{FilesSoft: 1 << 20, FilesHard: 1 << 20, Ports: 28232, MemAvailable: 64 << 30, CPUs: 8}
	sc := scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{"http://10.0.0.1:8000"}}, Load: loadgen.Load{Concurrency: 20000}}}
	if p := limitProblems(sc, big); p != nil {
		t.Errorf("20,000 connections on a big machine: %q", p)
	}
	for _, c := range []struct {
		name string
		l    Limits
		sc   scenario.Scenario
		want string
	}{
		{"files", Limits{FilesSoft: 1024, FilesHard: 1024}, sc, "open files: the run needs about 20064 (20000 connections + 64), the limit is 1024 (hard 1024); fix: ulimit -n 20064"},
		{"ports", Limits{Ports: 16384}, sc, "ephemeral ports: the run opens about 20000 connections to one server address from one source address, the port range allows 16384; fix: more source addresses"},
		{"memory", Limits{MemAvailable: 1 << 30}, sc, "memory: the run needs about 2131 MiB (20000 connections), 1024 MiB are available"},
		{"rate", Limits{CPUs: 1}, scenario.Scenario{Config: loadgen.Config{Load: loadgen.Load{Rate: 20000, Concurrency: 64}}}, "rate: 20000 req/s needs about 5.0 CPUs of client time"},
	} {
		p := limitProblems(c.sc, c.l)
		if len(p) != 1 || !strings.Contains(p[0], c.want) {
			t.Errorf("%s: %q\nwant %q", c.name, p, c.want)
		}
	}
	// Source addresses and shards divide the need.
	spread := sc
	spread.SourceAddrs = []string{"127.0.0.1", "127.0.0.2"}
	if p := limitProblems(spread, Limits{Ports: 16384}); p != nil {
		t.Errorf("two source addresses: %q", p)
	}
	sharded := sc
	sharded.Shards = 4
	if p := limitProblems(sharded, Limits{FilesSoft: 8192, FilesHard: 8192}); p != nil {
		t.Errorf("4 shards of 5,000: %q", p)
	}
}

// limitsChildEnv makes this test binary a child that lowers its own RLIMIT_NOFILE
// (soft, hard) and prints CheckLimits' verdict on a run of 500 connections.
const limitsChildEnv = "PERFGATE_LIMITS_CHILD"

func TestLimitsChild(t *testing.T) {
	spec := os.Getenv(limitsChildEnv)
	if spec == "" {
		return // run by TestFileLimitInChildProcess only
	}
	var soft, hard uint64
	fmt.Sscanf(spec, "%d,%d", &soft, &hard)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: soft, Max: hard}); err != nil {
		fmt.Println("setrlimit:", err)
		os.Exit(3)
	}
	sc := scenario.Scenario{Config: loadgen.Config{Target: loadgen.Target{URLs: []string{"http://127.0.0.1:1"}}, Load: loadgen.Load{Concurrency: 500}}}
	_, err := CheckLimits(sc)
	s, h := fileLimit()
	fmt.Printf("soft=%d hard=%d\n", s, h)
	if err != nil {
		fmt.Println(err)
		if errors.Is(err, ErrClientLimit) && errors.Is(err, scenario.ErrInvalidScenario) {
			os.Exit(2)
		}
		os.Exit(4)
	}
	os.Exit(0)
}

// TestFileLimitInChildProcess: a child process whose hard open-file limit is below
// what 500 connections need is refused, naming the limit, the need and ulimit -n; one
// whose soft limit is low but hard limit high gets its soft limit raised and runs.
func TestFileLimitInChildProcess(t *testing.T) {
	child := func(soft, hard uint64) (int, string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLimitsChild$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%d", limitsChildEnv, soft, hard))
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	code, out := child(128, 128)
	if code != 2 || !strings.Contains(out, "open files: the run needs about 564 (500 connections + 64), the limit is 128 (hard 128); fix: ulimit -n 564") {
		t.Errorf("hard limit 128: exit %d\n%s", code, out)
	}
	_, hard := fileLimit()
	if hard < 1024 {
		t.Fatalf("this process's hard limit is %d: cannot test raising the soft limit to 564", hard)
	}
	code, out = child(128, hard)
	if code != 0 || !strings.Contains(out, "soft=564 ") {
		t.Errorf("soft 128, hard %d: exit %d, want 0 with the soft limit raised to 564\n%s", hard, code, out)
	}
}
