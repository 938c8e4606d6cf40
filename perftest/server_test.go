//go:build unix

package perftest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/mockserver"
)

// The stand-in server build: this test binary re-executed (testutil.StandIn) to run
// TestPerftestServerStandin, the fast mock until SIGTERM; or, with perftestStandinFail
// set, a build that dies while loading.
const perftestStandinFail = "PERFTEST_STANDIN_FAIL"

func TestPerftestServerStandin(t *testing.T) {
	host, port, ok := testutil.StandInAddr()
	if !ok {
		return // a stand-in server only when a test starts one
	}
	if os.Getenv(perftestStandinFail) != "" {
		fmt.Fprintln(os.Stderr, "standin: RuntimeError: no kernel image is available")
		os.Exit(1)
	}
	srv, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Host: host, Port: port, Fast: true}))
	if err == nil {
		err = srv.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(2)
	}
	testutil.ServeUntilTERM(srv.Close)
}

// standinSide is gateScenario against a stand-in server build that each run starts.
func standinSide(t *testing.T, env ...string) Scenario {
	t.Helper()
	addr, args, env := testutil.StandIn(t, "TestPerftestServerStandin", env...)
	sc := gateScenario("fixed:1")
	sc.URLs = []string{"http://" + addr}
	sc.Server = &Server{Args: args, Env: env}
	return sc
}

// AssertABNoRegression with a Server on each side starts each side's build for each
// of its runs (no preflight of a server not started yet), its logs in the run's
// artifacts; a build that dies while loading stops the test, named.
func TestABNoRegressionServers(t *testing.T) {
	a, b := standinSide(t), standinSide(t)
	c := Capture(t, func(t testing.TB) { AssertABNoRegression(t, a, b, Gate{Runs: 2, MaxRuns: 2}) })
	if c.Stopped() {
		t.Fatalf("A/B with a server per side stopped the test:\n%s", c.Text())
	}
	for _, side := range []string{"a/run-001/server-A", "a/run-002/server-A", "b/run-001/server-B", "b/run-002/server-B"} {
		if m, _ := filepath.Glob(filepath.Join(t.ArtifactDir(), "*-ab", side+".stdout.log")); len(m) != 1 {
			t.Errorf("no %s.stdout.log in the A/B artifacts", side)
		}
	}

	broken := standinSide(t, perftestStandinFail+"=1")
	c = Capture(t, func(t testing.TB) { AssertABNoRegression(t, a, broken, Gate{Runs: 2, MaxRuns: 2}) })
	if !c.Stopped() || !strings.Contains(c.Text(), "server B exited before it was ready: exit status 1") || !strings.Contains(c.Text(), "no kernel image") {
		t.Errorf("A/B with a B that dies while loading: stopped %v:\n%s", c.Stopped(), c.Text())
	}
}
