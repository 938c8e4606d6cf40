//go:build unix

package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/serverproc"
)

// The stand-in server of these tests: this test binary re-executed (testutil.StandIn)
// to run TestServerStandin, which serves the mock until SIGTERM. It appends
// standinSideEnv to the file in standinOrderEnv when it starts, and with
// standinCrashEnv=K it exits 3 (a line on stderr) once it has answered K requests.
const (
	standinSideEnv  = "PERFGATE_STANDIN_SIDE"
	standinOrderEnv = "PERFGATE_STANDIN_ORDER"
	standinCrashEnv = "PERFGATE_STANDIN_CRASH"
	standinTTFTEnv  = "PERFGATE_STANDIN_TTFT"
)

func TestServerStandin(t *testing.T) {
	host, port, ok := testutil.StandInAddr()
	if !ok {
		return // a stand-in server only when a test starts one
	}
	cfg := mockserver.Config{Host: host, Port: port, TTFT: distribution.MustSpec("fixed:" + os.Getenv(standinTTFTEnv)), ITL: fixed(1)}
	srv, err := mockserver.New(mockserver.WithConfig(cfg))
	if err == nil {
		err = srv.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(2)
	}
	side := os.Getenv(standinSideEnv)
	if f, err := os.OpenFile(os.Getenv(standinOrderEnv), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
		fmt.Fprintln(f, side)
		f.Close()
	}
	fmt.Printf("standin %s: serving %s\n", side, srv.URL())
	if k, _ := strconv.Atoi(os.Getenv(standinCrashEnv)); k > 0 {
		go func() {
			for len(srv.Records()) < k {
				time.Sleep(time.Millisecond)
			}
			fmt.Fprintf(os.Stderr, "standin %s: segmentation fault after %d requests\n", side, k)
			os.Exit(3)
		}()
	}
	testutil.ServeUntilTERM(srv.Close)
}

// standinScenario is a scenario whose runs each start a stand-in on a free port.
func standinScenario(t *testing.T, side, ttft string, env ...string) scenario.Scenario {
	t.Helper()
	addr, args, env := testutil.StandIn(t, "TestServerStandin", append([]string{standinSideEnv + "=" + side, standinTTFTEnv + "=" + ttft}, env...)...)
	sc := sweepScenario()
	sc.Mock = mockserver.Config{}
	sc.API, sc.Requests, sc.Concurrency = loadgen.EndpointChat, 6, 2
	sc.URLs = []string{"http://" + addr}
	sc.Server = &serverproc.Server{Args: args, Env: env}
	return sc
}

// A scenario with a Server: each run starts it, waits for it, runs against it and
// stops it; its logs are in the run's directory, the model it serves is named, and
// the secrets it was given are written nowhere.
func TestRunStartsAndStopsServer(t *testing.T) {
	const secret = "hf_scenarioSECRET42"
	sc := standinScenario(t, "solo", "2", "HF_TOKEN="+secret)
	dir := t.TempDir()
	out, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := out.Metrics.Value("request_count"); n != 6 {
		t.Errorf("request_count = %v, want 6", n)
	}
	if out.Scenario.Model == "" {
		t.Error("the model the server serves was not named in the scenario as run")
	}
	addr := strings.TrimPrefix(sc.URLs[0], "http://")
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s accepts connections after Run returned: the server was not stopped", addr)
	}
	log, err := os.ReadFile(filepath.Join(dir, "server.stdout.log"))
	if err != nil || !strings.Contains(string(log), "standin solo: serving") || !strings.Contains(string(log), "HF_TOKEN=[redacted]") {
		t.Errorf("server.stdout.log (%v):\n%s", err, log)
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), secret) {
				t.Errorf("%s holds the server's secret", path)
			}
		}
		return nil
	})
	if s := fmt.Sprintf("%+v", sc); strings.Contains(s, secret) {
		t.Errorf("%%+v of the scenario holds the server's secret: %s", s)
	}
}

// The A/B gate with a server per side: A B A B, each run its own server process
// started and stopped, its logs in its run's directory; the target difference shows
// the two servers.
func TestInterleaveStartsEachSidesServer(t *testing.T) {
	order := filepath.Join(t.TempDir(), "order")
	a := standinScenario(t, "A", "2", standinOrderEnv+"="+order)
	b := a
	srv := *a.Server
	srv.Env = append(srv.Env[:0:0], srv.Env...)
	srv.Env = append(srv.Env, standinSideEnv+"=B") // the later entry wins
	b.Server = &srv
	dir := t.TempDir()
	r, err := Interleave(context.Background(), a, b, dir, gate.Gate{Runs: 2, MaxRuns: 2}, SeriesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(order); strings.Join(strings.Fields(string(got)), " ") != "A B A B" {
		t.Errorf("servers started in the order %q, want A B A B", got)
	}
	for _, f := range []string{"a/run-001/server-A.stdout.log", "b/run-001/server-B.stdout.log", "a/run-002/server-A.stderr.log", "b/run-002/server-B.stdout.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%v", err)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "b/run-002/server-B.stdout.log")); !strings.Contains(string(log), "standin B: serving") {
		t.Errorf("b/run-002's server log is not B's:\n%s", log)
	}
	if r.Baseline.Len() != 2 || r.Current.Len() != 2 || len(r.Target) != 1 || r.Target[0].Field != "server" {
		t.Errorf("%d and %d runs, target differences %v; want 2, 2 and the server", r.Baseline.Len(), r.Current.Len(), r.Target)
	}
}

// A server that exits during a run stops the run: the error names it, quotes its
// stderr, and the run's records so far are on disk.
func TestServerCrashDuringRun(t *testing.T) {
	sc := standinScenario(t, "B", "5", standinCrashEnv+"=3")
	sc.Server.Name = "B"
	// A minute of load, unless the crash stops the run: requests to a dead server
	// fail at once, so only the watch on the server can end it early.
	sc.Requests, sc.Duration, sc.Concurrency = 0, time.Minute, 1
	dir := t.TempDir()
	out, err := Run(context.Background(), sc, dir)
	if !errors.Is(err, serverproc.ErrExited) {
		t.Fatalf("Run = %v, want serverproc.ErrExited", err)
	}
	for _, want := range []string{"server B exited while serving: exit status 3", "segmentation fault after 3 requests"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("the error wraps context.Canceled (an interrupt to the CLI): %v", err)
	}
	if out == nil || !out.Interrupted {
		t.Fatalf("outcome %v: want the run so far, marked interrupted", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, ClientFile))
	if n := strings.Count(string(b), `"status":200`); err != nil || n < 3 {
		t.Errorf("%s (%v) has %d answered records; want the 3 or more answered before the crash", ClientFile, err, n)
	}
}

// A scenario's Server needs a URL and a command; Preflight leaves it to Run.
func TestServerValidateAndPreflight(t *testing.T) {
	sc := scenario.Scenario{Server: &serverproc.Server{Cmd: "srv"}}
	if err := sc.Validate(); !errors.Is(err, scenario.ErrInvalidScenario) || !strings.Contains(err.Error(), "server server: no URL: set urls") {
		t.Errorf("Validate without URLs = %v", err)
	}
	sc.URLs = []string{"http://127.0.0.1:1"}
	sc.Server.Cmd = ""
	if err := sc.Validate(); err == nil || !strings.Contains(err.Error(), "no command") {
		t.Errorf("Validate without a command = %v", err)
	}
	sc.Server.Cmd = "srv"
	if err := sc.Validate(); err != nil {
		t.Errorf("Validate = %v", err)
	}
	if err := Preflight(context.Background(), sc); err != nil {
		t.Errorf("Preflight of a server not started yet = %v, want nil", err)
	}
}
