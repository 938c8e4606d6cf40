//go:build linux

package run

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/tokenizer"
)

// clientBoundChildEnv makes this test binary a child that runs an open-loop scenario
// against the URL in the variable and prints its client-bound verdict as JSON.
const clientBoundChildEnv = "PERFGATE_CLIENT_BOUND_CHILD"

// clientBoundLag is the median send-lag threshold of the real-condition test. A free
// client's median lag stayed at 10–60 µs on this shared 2-core machine at load 15
// under the bench lock, and reached 0.6 ms at normal priority beside the other test
// processes (load 13). The starved client of TestClientBoundPinned is stopped for
// dutyStop of every dutyStop+dutyRun (80%), so most of its sends fall due while it is
// stopped, and wait for the rest of the stop: its median lag is at least about a third
// of dutyStop (13 ms) however idle or busy the machine (more load only adds lag). At
// load 20 (seven helpers compiling on 2 cores) the free client's median reached 3.3 ms,
// over the 3 ms this was, so 6 ms: 1.8× above that and 2.2× below the starved client's
// floor; the 1 ms default is tested on constructed inputs (TestClientBoundConstructed).
const clientBoundLag = 6 * time.Millisecond

// clientBoundOptsEnv carries the child's run as JSON (childRun); unset: the run of
// TestClientBoundPinned.
const clientBoundOptsEnv = "PERFGATE_CLIENT_BOUND_OPTS"

// childRun is the open-loop run a child makes: constant Rate for Duration, the
// validity it is judged with, the schedule watch's threshold, and its artifact
// directory ("" = none).
type childRun struct {
	Rate           float64
	Duration       time.Duration
	Validity       validity.Config
	MaxScheduleLag time.Duration
	Dir            string
}

// childVerdict is what a child reports of its run.
type childVerdict struct {
	Pass          bool
	Status        string
	Summary, Text string
	Aborted       string
	Self          loadgen.Self
	Requests      int
	Elapsed       time.Duration
}

func TestClientBoundChild(t *testing.T) {
	url := os.Getenv(clientBoundChildEnv)
	if url == "" {
		return // run by TestClientBoundPinned only
	}
	run := childRun{Rate: 200, Duration: 2500 * time.Millisecond, Validity: validity.Config{ClientBound: validity.ModeFail, MaxSendLag: clientBoundLag}}
	if o := os.Getenv(clientBoundOptsEnv); o != "" {
		if err := json.Unmarshal([]byte(o), &run); err != nil {
			fmt.Println("options:", err)
			os.Exit(3)
		}
	}
	sc := scenario.Scenario{Config: loadgen.Config{
		Target:   loadgen.Target{URLs: []string{url}, NoStream: true},
		Workload: loadgen.Workload{Seed: 1, ISL: fixed(16), OSL: fixed(2)},
		Load:     loadgen.Load{Rate: run.Rate, Arrival: loadgen.ArrivalConstant},
		Stop:     loadgen.Stop{Duration: run.Duration, MaxScheduleLag: run.MaxScheduleLag},
	}, Validity: run.Validity}
	// Load what a run loads first, then wait for the parent's go (it starts the burner
	// in between): the test measures the run, not a starved start-up.
	tok, err := tokenizer.Load("gpt2")
	if err != nil {
		fmt.Println("tokenizer:", err)
		os.Exit(3)
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		os.Exit(3)
	}
	start := time.Now()
	out, err := Run(context.Background(), sc, run.Dir, WithTokenizer(tok))
	if err != nil {
		fmt.Println("run:", err)
		os.Exit(3)
	}
	v := find(out.Validity(), validity.CheckClientBound)
	if v == nil {
		fmt.Println("no client-bound verdict")
		os.Exit(3)
	}
	b, _ := json.Marshal(childVerdict{v.Pass, v.Status.String(), v.Summary, v.String(), out.Aborted(), *out.Self, out.Context("").Requests, time.Since(start)})
	fmt.Println(string(b))
	os.Exit(0)
}

// The starved client's duty cycle: stopped (SIGSTOP) for dutyStop, then continued
// (SIGCONT) for dutyRun, for the whole run.
const (
	dutyStop = 40 * time.Millisecond
	dutyRun  = 10 * time.Millisecond
)

// runChild runs an open-loop scenario (run; nil: TestClientBoundPinned's) in a child
// process (GOMAXPROCS=1) against url; once the child has loaded, it calls before with
// the child's process (which may start starving it), and after the run it calls the
// function before returned.
func runChild(t *testing.T, url string, run *childRun, before func(*os.Process) (after func())) childVerdict {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestClientBoundChild$")
	cmd.Env = append(os.Environ(), clientBoundChildEnv+"="+url, "GOMAXPROCS=1")
	if run != nil {
		b, _ := json.Marshal(run)
		cmd.Env = append(cmd.Env, clientBoundOptsEnv+"="+string(b))
	}
	// Its own process group: a stopped process in the group of go test and make would
	// have the kernel send SIGHUP and SIGCONT to that whole group if it became orphaned
	// (POSIX job control), as it can under a CI runner; alone, only the child is at stake.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	if l, err := r.ReadString('\n'); err != nil || strings.TrimSpace(l) != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child: %q, %v", l, err)
	}
	after := before(cmd.Process)
	fmt.Fprintln(stdin, "go")
	rest, _ := io.ReadAll(r)
	after()
	err := cmd.Wait()
	var v childVerdict
	line := strings.TrimSpace(string(rest))
	if i := strings.LastIndex(line, "\n"); i >= 0 {
		line = line[i+1:]
	}
	if err != nil || json.Unmarshal([]byte(line), &v) != nil {
		t.Fatalf("child: %v\n%s", err, rest)
	}
	return v
}

// unstarved leaves a child alone.
func unstarved(*os.Process) func() { return func() {} }

// starve returns a before function for runChild that stops and continues the child
// with signals on a duty cycle, stopped for stop of every stop+run, for the whole run.
func starve(stop, run time.Duration) func(*os.Process) func() {
	return func(p *os.Process) func() {
		done, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			defer p.Signal(syscall.SIGCONT) // never leave it stopped
			for {
				if p.Signal(syscall.SIGSTOP) != nil {
					return // it has exited
				}
				select {
				case <-done:
					return
				case <-time.After(stop):
				}
				if p.Signal(syscall.SIGCONT) != nil {
					return
				}
				select {
				case <-done:
					return
				case <-time.After(run):
				}
			}
		}()
		return func() { close(done); <-stopped }
	}
}

// fastMock starts the fast mock server in this process (never stopped) for a child.
func fastMock(t *testing.T) *mockserver.Server {
	t.Helper()
	srv, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Fast: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestClientBoundPinned: the same open-loop run (200 req/s, constant) is flagged
// client-bound when its client is starved, and not when it runs free. The starvation is
// deterministic: the client (a child process) is stopped and continued with signals on
// a fixed duty cycle, 80% stopped, so the CPU it gets does not depend on how the
// machine's scheduler ranks it against other work (with sched autogroups, `nice` ranks
// a process only inside its own session, so a nice-19 client beside a burner was not
// always starved). The server (the mock) runs in this process, never stopped. At
// 200 req/s the starved client still keeps up between its stops: it is late (the
// marginal band), not grossly behind.
func TestClientBoundPinned(t *testing.T) {
	srv := fastMock(t)
	free := runChild(t, srv.URL(), nil, unstarved)
	if !free.Pass || free.Status != check.Decided.String() {
		t.Errorf("the free client was flagged:\n%s", free.Text)
	}
	starved := runChild(t, srv.URL(), nil, starve(dutyStop, dutyRun))
	if starved.Pass || starved.Status != check.Invalid.String() || !strings.Contains(starved.Summary, "client-bound: send lag p50") {
		t.Errorf("the starved client was not flagged client-bound:\n%s", starved.Text)
	}
	t.Logf("free:\n%s\nstarved (stopped %v of every %v):\n%s", free.Text, dutyStop, dutyStop+dutyRun, starved.Text)
}

// The grossly starved client's duty cycle: stopped grossStop of every
// grossStop+grossRun (95%). At grossRate its one CPU then has at most 25 µs a request
// (5 ms for the 200 requests due in each 100 ms cycle), a fraction of what an
// open-loop request costs the client (60–130 µs in docs/performance.md): it falls
// further behind with every cycle, however idle the machine (more load only gives it
// less).
const (
	grossStop = 95 * time.Millisecond
	grossRun  = 5 * time.Millisecond
	grossRate = 2000
)

// TestClientBoundGross: at 2,000 req/s a client stopped 95% of the time falls ever
// further behind: its run is grossly client-bound, invalid under the default modes
// (the marginal band's warn does not save it), with the reason first; a free client
// passes. The free run is at 200 req/s (4% of a CPU): at 2,000 req/s a free client on
// this shared 2-core machine at load 9 got 19% of its CPU and was, rightly, grossly
// client-bound itself (p50 206 ms, 72% achieved). warn-only for the gross band stays
// available.
func TestClientBoundGross(t *testing.T) {
	srv := fastMock(t)
	run := &childRun{Rate: grossRate, Duration: 2 * time.Second, MaxScheduleLag: -1}
	free := runChild(t, srv.URL(), &childRun{Rate: 200, Duration: 2 * time.Second, MaxScheduleLag: -1}, unstarved)
	if !free.Pass || free.Status != check.Decided.String() {
		t.Errorf("the free client was flagged at 200 req/s:\n%s", free.Text)
	}
	starved := runChild(t, srv.URL(), run, starve(grossStop, grossRun))
	if starved.Pass || starved.Status != check.Invalid.String() || !strings.HasPrefix(starved.Summary, "client-bound: send lag p50 ") ||
		!strings.Contains(starved.Summary, "the client could not keep up") || starved.Aborted != "" {
		t.Errorf("the starved client was not grossly client-bound:\n%s", starved.Text)
	}
	// The same self-measurement under warn-only for the gross band: reported, passing.
	if v, m := validity.ClientBound(starved.Self, validity.Config{ClientBoundGross: validity.ModeWarn}, true, false); m != validity.ModeWarn || validity.Apply(v, m).Pass != true || v.Status != check.Invalid {
		t.Errorf("client_bound_gross: warn gave mode %q, pass %v", m, validity.Apply(v, m).Pass)
	}
	t.Logf("free at 200 req/s:\n%s\nstarved at %d req/s (stopped %v of every %v):\n%s", free.Text, grossRate, grossStop, grossStop+grossRun, starved.Text)
}

// TestScheduleAbortStarved: the same starved client in a run of 30 s with a schedule
// threshold of 300 ms is stopped once it has been that far behind for that long: the
// run ends early, its records are on disk, its manifest and validity.json say it was
// aborted and why, and its client-bound verdict fails with the reason first.
func TestScheduleAbortStarved(t *testing.T) {
	srv := fastMock(t)
	dir := t.TempDir()
	run := &childRun{Rate: grossRate, Duration: 30 * time.Second, MaxScheduleLag: 300 * time.Millisecond, Dir: dir}
	v := runChild(t, srv.URL(), run, starve(grossStop, grossRun))
	if v.Pass || !strings.HasPrefix(v.Summary, "client-bound: the run was stopped early: schedule ") || !strings.Contains(v.Aborted, "the client cannot keep up") {
		t.Errorf("not stopped, or not said so:\n%s", v.Text)
	}
	if v.Self.Elapsed >= run.Duration {
		t.Errorf("the run went on for %v of its %v", v.Self.Elapsed, run.Duration)
	}
	recs, err := loadClient(filepath.Join(dir, ClientFile))
	if err != nil || len(recs) == 0 {
		t.Fatalf("records on disk: %d, %v", len(recs), err)
	}
	var m reportgen.Manifest
	if b, err := os.ReadFile(filepath.Join(dir, reportgen.ManifestFile)); err != nil || json.Unmarshal(b, &m) != nil || m.Aborted != v.Aborted {
		t.Errorf("manifest aborted = %q (%v), want %q", m.Aborted, err, v.Aborted)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := find(back.Validity(), validity.CheckClientBound); got == nil || got.Pass || back.Aborted() != v.Aborted {
		t.Errorf("read back: aborted %q, verdict %v", back.Aborted(), got)
	}
	t.Logf("%d records; %s", len(recs), v.Text)
}
