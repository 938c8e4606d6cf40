//go:build linux

package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
)

// clientBoundChildEnv makes this test binary a child that runs an open-loop scenario
// against the URL in the variable and prints its client-bound verdict as JSON.
const clientBoundChildEnv = "PERFGATE_CLIENT_BOUND_CHILD"

// clientBoundLag is the send-lag threshold of the real-condition test: far above what
// a loaded shared machine's scheduler adds to an unpinned client at 200 req/s (a few
// ms), far below what a client starved on one CPU accumulates (hundreds of ms).
const clientBoundLag = 50 * time.Millisecond

func TestClientBoundChild(t *testing.T) {
	url := os.Getenv(clientBoundChildEnv)
	if url == "" {
		return // run by TestClientBoundPinned only
	}
	sc := Scenario{Config: loadgen.Config{
		Target:   loadgen.Target{URLs: []string{url}, NoStream: true},
		Workload: loadgen.Workload{Seed: 1, ISL: fixed(16), OSL: fixed(2)},
		Load:     loadgen.Load{Rate: 200, Arrival: loadgen.ArrivalConstant},
		Stop:     loadgen.Stop{Duration: 1500 * time.Millisecond},
	}, Validity: Validity{MaxSendLag: clientBoundLag}}
	out, err := Run(context.Background(), sc, "")
	if err != nil {
		fmt.Println("run:", err)
		os.Exit(3)
	}
	v := find(out.Validity(), CheckClientBound)
	if v == nil {
		fmt.Println("no client-bound verdict")
		os.Exit(3)
	}
	b, _ := json.Marshal(struct {
		Pass    bool
		Status  string
		Summary string
		Text    string
	}{v.Pass, v.Status.String(), v.Summary, v.String()})
	fmt.Println(string(b))
	os.Exit(0)
}

// TestClientBoundPinned: the same open-loop run (200 req/s, constant) is flagged
// client-bound when its client is pinned to one CPU at the lowest priority beside a
// CPU burner on that CPU (a small fraction of one CPU), and not when it runs free. The
// server (the mock) runs in this process, unpinned.
func TestClientBoundPinned(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Fatalf("taskset (util-linux) is needed to pin the client: %v", err)
	}
	srv, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Fast: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	type verdict struct {
		Pass          bool
		Status        string
		Summary, Text string
	}
	child := func(prefix ...string) verdict {
		args := append(prefix, os.Args[0], "-test.run=^TestClientBoundChild$")
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), clientBoundChildEnv+"="+srv.URL(), "GOMAXPROCS=1")
		out, err := cmd.Output()
		var v verdict
		line := strings.TrimSpace(string(out))
		if i := strings.LastIndex(line, "\n"); i >= 0 {
			line = line[i+1:]
		}
		if err != nil || json.Unmarshal([]byte(line), &v) != nil {
			t.Fatalf("child %v: %v\n%s", prefix, err, out)
		}
		return v
	}
	free := child()
	if !free.Pass || free.Status != check.Decided.String() {
		t.Errorf("the free client was flagged:\n%s", free.Text)
	}
	burner := exec.Command("taskset", "-c", "0", "sh", "-c", "while :; do :; done")
	if err := burner.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = burner.Process.Kill(); _ = burner.Wait() }()
	pinned := child("taskset", "-c", "0", "nice", "-n", "19")
	if pinned.Pass || pinned.Status != check.Invalid.String() || !strings.Contains(pinned.Summary, "client-bound: send lag p99") {
		t.Errorf("the pinned client was not flagged client-bound:\n%s", pinned.Text)
	}
	t.Logf("free:\n%s\npinned:\n%s", free.Text, pinned.Text)
}
