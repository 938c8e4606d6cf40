package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/mockserver"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/record"
)

// The sharded workload of these tests: open-loop Poisson at 200 req/s, 200 requests,
// seeded, with an ISL fit the gate checks. These tests are about splitting the load,
// not about this (shared, loaded) machine keeping a 200 req/s schedule to the
// millisecond: both client-bound bands warn (TestClientBound* test them).
var shardWorkload = []string{"--request-rate", "200", "--request-count", "200", "--random-seed", "7",
	"--isl-dist", "normal:64,8", "--osl", "6", "--assert-isl", "normal:64,8", "--quiet", "--check-client-bound", "warn", "--check-client-bound-gross", "warn"}

const shardAlpha = 0.01

func startMock(t *testing.T, host string) *mockserver.Server {
	t.Helper()
	srv, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Host: host, Port: 0, Fast: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// shardCmd is the CLI re-executed as a shard process: prefix (e.g. ip netns exec NS)
// then this test binary with PERFGATE_TEST_MAIN=1 and JOB_COMPLETION_INDEX=i, as a
// Kubernetes Indexed Job sets it.
func shardCmd(prefix []string, i int, args ...string) *exec.Cmd {
	argv := append(slices.Clone(prefix), os.Args[0])
	argv = append(argv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PERFGATE_TEST_MAIN=1", fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
	return cmd
}

// runShardProcs runs n shard processes to completion (bounded by a minute each).
func runShardProcs(t *testing.T, n int, mk func(i int) *exec.Cmd) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := range n {
		cmd := mk(i)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
		wg.Go(func() {
			defer timer.Stop()
			if err := cmd.Wait(); err != nil {
				errs[i] = fmt.Sprintf("shard %d: %v\n%s", i, err, out.String())
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

type sentKey struct{ Index, ISL, OSL int }

// parity compares a single run's directory with a merged one: the same (index, ISL,
// requested OSL) multiset, the same schedule per index, the same verdicts, and
// arrival gaps (the schedule, merged across shards) passing KS at shardAlpha.
func parity(t *testing.T, singleDir, mergedDir string) (ks1, ks4 distribution.KSResult) {
	t.Helper()
	one, err := perfrun.Load(singleDir)
	if err != nil {
		t.Fatal(err)
	}
	four, err := perfrun.Load(mergedDir)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(cs []record.Client) (ks []sentKey, sched []time.Duration) {
		cs = slices.Clone(cs)
		slices.SortFunc(cs, func(a, b record.Client) int { return a.Index - b.Index })
		for _, c := range cs {
			ks = append(ks, sentKey{c.Index, c.ISL, c.RequestedOSL})
			sched = append(sched, c.Scheduled)
		}
		return ks, sched
	}
	recs := func(o *perfrun.Outcome) []record.Client {
		cs, err := o.Records()
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	k1, s1 := keys(recs(one))
	k4, s4 := keys(recs(four))
	if len(k1) != 200 || !slices.Equal(k1, k4) {
		t.Errorf("merged requests differ from the single run's (%d vs %d)", len(k4), len(k1))
	}
	// Request 0 is due "now" (the instant the run's send loop starts, a reading of the
	// clock), the rest at the pacer's exact due times.
	for i := range min(len(s1), len(s4)) {
		if i > 0 && s1[i] != s4[i] {
			t.Errorf("request %d scheduled at %v merged, %v in the single run", k1[i].Index, s4[i], s1[i])
			break
		}
	}
	v1, v4 := one.Check(), four.Check()
	if len(v1) == 0 || len(v1) != len(v4) {
		t.Fatalf("%d verdicts single, %d merged", len(v1), len(v4))
	}
	for i := range v1 {
		if v1[i].Pass != v4[i].Pass || v1[i].Check != v4[i].Check || v1[i].Value != v4[i].Value {
			t.Errorf("verdict %d: single %v, merged %v", i, v1[i], v4[i])
		}
	}
	gaps := func(s []time.Duration) []float64 {
		s = slices.Clone(s)
		slices.Sort(s)
		var g []float64
		for i := 1; i < len(s); i++ {
			g = append(g, (s[i] - s[i-1]).Seconds())
		}
		return g
	}
	model := distribution.Exponential{Rate: 200}
	ks1, ks4 = distribution.KS1(gaps(s1), model), distribution.KS1(gaps(s4), model)
	if ks1.Reject(shardAlpha) || ks4.Reject(shardAlpha) {
		t.Errorf("arrival gaps rejected at alpha %v: single %v; merged %v", shardAlpha, ks1, ks4)
	}
	return ks1, ks4
}

func serverISLs(srv *mockserver.Server) []int {
	var isl []int
	for _, r := range srv.Records() {
		isl = append(isl, r.ISL)
	}
	slices.Sort(isl)
	return isl
}

// TestShardsOnOneMachine: four shard processes (this binary re-executed, the index in
// JOB_COMPLETION_INDEX), shard 0 serving the barrier, against one mock on 127.0.0.1,
// merged by perfgate merge, equal one process on the same seed: requests, schedule,
// the mock's recorded ISLs and the verdicts; the gate's exit codes hold (99 for a
// failed assertion, 2 for a missing shard).
func TestShardsOnOneMachine(t *testing.T) {
	root := t.TempDir()
	single := startMock(t, "127.0.0.1")
	var out, errb bytes.Buffer
	if code := run(context.Background(), append([]string{"profile", "--url", single.URL(), "--artifact-dir", filepath.Join(root, "single")}, shardWorkload...), &out, &errb); code != ExitOK {
		t.Fatalf("single run: exit %d\n%s%s", code, out.String(), errb.String())
	}
	mock := startMock(t, "127.0.0.1")
	port := freePort(t)
	runShardProcs(t, 4, func(i int) *exec.Cmd {
		args := append([]string{"profile", "--url", mock.URL(), "--artifact-dir", filepath.Join(root, "run"), "--shards", "4",
			"--coordinator", fmt.Sprintf("http://127.0.0.1:%d", port), "--coordinator-listen", fmt.Sprintf("127.0.0.1:%d", port),
			"--coordinator-margin", "500ms"}, shardWorkload...)
		return shardCmd(nil, i, args...)
	})
	out.Reset()
	errb.Reset()
	merged := filepath.Join(root, "merged")
	if code := run(context.Background(), []string{"merge", "--artifact-dir", merged, filepath.Join(root, "run")}, &out, &errb); code != ExitOK {
		t.Fatalf("merge: exit %d\n%s%s", code, out.String(), errb.String())
	}
	ks1, ks4 := parity(t, filepath.Join(root, "single"), merged)
	t.Logf("arrival gaps vs Exponential(200): single %v; merged %v", ks1, ks4)
	if a, b := serverISLs(single), serverISLs(mock); !slices.Equal(a, b) || len(a) != 200 {
		t.Errorf("the mock recorded different ISLs for the shards (%d) than for one process (%d)", len(b), len(a))
	}
	info := readShardInfo(t, filepath.Join(root, "run", "shard-2"))
	if info.Coordinator == "" || info.RTT <= 0 || info.Index != 2 {
		t.Errorf("shard 2's shard.json %+v; want its coordinator and the measured round trip", info)
	}
	// The gate: a failing assertion is 99, a missing shard 2.
	if code := run(context.Background(), []string{"merge", "--artifact-dir", filepath.Join(root, "m2"), "--assert", "ttft_p50<=1ns", "--quiet", filepath.Join(root, "run")}, &out, &errb); code != ExitAssertFailed {
		t.Errorf("merge --assert ttft_p50<=1ns: exit %d; want 99", code)
	}
	errb.Reset()
	code := run(context.Background(), []string{"merge", "--artifact-dir", filepath.Join(root, "m3"),
		filepath.Join(root, "run", "shard-0"), filepath.Join(root, "run", "shard-1"), filepath.Join(root, "run", "shard-3")}, &out, &errb)
	if code != ExitInvalidConfig || !strings.Contains(errb.String(), "missing shard(s) 2") {
		t.Errorf("merge without shard 2: exit %d, %q; want 2 naming shard 2", code, errb.String())
	}
}

func readShardInfo(t *testing.T, dir string) perfrun.ShardInfo {
	t.Helper()
	o, err := os.ReadFile(filepath.Join(dir, perfrun.ShardFile))
	if err != nil {
		t.Fatal(err)
	}
	var info perfrun.ShardInfo
	if err := json.Unmarshal(o, &info); err != nil {
		t.Fatal(err)
	}
	return info
}

// netnsLab is a set of network namespaces joined by a bridge in a hub namespace:
// node k gets 10.231.0.(k+1)/24.
type netnsLab struct {
	prefix string
	nodes  []string
}

func (l *netnsLab) ip(k int) string { return "10.231.0." + strconv.Itoa(k+1) }

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// newNetnsLab creates n node namespaces, or skips saying why it cannot.
func newNetnsLab(t *testing.T, n int) *netnsLab {
	t.Helper()
	switch {
	case runtime.GOOS != "linux":
		t.Skip("network namespaces are Linux only; the multi-host test needs ip netns")
	case os.Geteuid() != 0:
		t.Skip("not root: creating network namespaces (ip netns add) needs CAP_SYS_ADMIN; CI runs as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2): cannot create network namespaces; .ci/run installs it")
	}
	l := &netnsLab{prefix: fmt.Sprintf("pg%d", os.Getpid()%100000)}
	hub := l.prefix + "hub"
	if err := ipCmd("netns", "add", hub); err != nil {
		t.Skipf("network namespaces unavailable here (%v)", err)
	}
	t.Cleanup(func() {
		for _, ns := range l.nodes {
			_ = ipCmd("netns", "del", ns)
		}
		_ = ipCmd("netns", "del", hub)
	})
	steps := [][]string{
		{"-n", hub, "link", "add", "br0", "type", "bridge"},
		{"-n", hub, "link", "set", "br0", "up"},
	}
	for k := range n {
		ns := fmt.Sprintf("%sn%d", l.prefix, k)
		l.nodes = append(l.nodes, ns)
		veth, peer := fmt.Sprintf("v%d", k), fmt.Sprintf("h%d", k)
		steps = append(steps,
			[]string{"netns", "add", ns},
			[]string{"-n", hub, "link", "add", peer, "type", "veth", "peer", "name", veth, "netns", ns},
			[]string{"-n", hub, "link", "set", peer, "master", "br0", "up"},
			[]string{"-n", ns, "addr", "add", l.ip(k) + "/24", "dev", veth},
			[]string{"-n", ns, "link", "set", veth, "up"},
			[]string{"-n", ns, "link", "set", "lo", "up"},
		)
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// TestShardsAcrossNetworkNamespaces: the mock, the coordinator and four shards each in
// their own network namespace (separate hosts as far as the network is concerned),
// joined by a bridge; the merged run equals one process on the same seed, as on one
// machine.
func TestShardsAcrossNetworkNamespaces(t *testing.T) {
	lab := newNetnsLab(t, 6) // 0: mock, 1: coordinator, 2..5: shards
	root := t.TempDir()
	exe := func(k int) []string { return []string{"ip", "netns", "exec", lab.nodes[k]} }
	long := func(k int, args ...string) *exec.Cmd {
		c := shardCmd(exe(k), 0, args...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _, _ = c.Process.Wait() })
		return c
	}
	mockURL := "http://" + lab.ip(0) + ":8000"
	long(0, "mock", "--host", lab.ip(0), "--port", "8000", "--fast", "--record-requests", filepath.Join(root, "mock.jsonl"))
	long(1, "coordinator", "--shards", "4", "--listen", lab.ip(1)+":7070", "--margin", "500ms")
	waitTCP(t, lab.nodes[0], lab.ip(0)+":8000")
	// The single run, from a shard's namespace: the same network path.
	runShardProcs(t, 1, func(int) *exec.Cmd {
		return shardCmd(exe(2), 0, append([]string{"profile", "--url", mockURL, "--artifact-dir", filepath.Join(root, "single")}, shardWorkload...)...)
	})
	runShardProcs(t, 4, func(i int) *exec.Cmd {
		return shardCmd(exe(2+i), i, append([]string{"profile", "--url", mockURL, "--artifact-dir", filepath.Join(root, "run"), "--shards", "4",
			"--coordinator", "http://" + lab.ip(1) + ":7070"}, shardWorkload...)...)
	})
	var out, errb bytes.Buffer
	merged := filepath.Join(root, "merged")
	if code := run(context.Background(), []string{"merge", "--artifact-dir", merged, filepath.Join(root, "run")}, &out, &errb); code != ExitOK {
		t.Fatalf("merge: exit %d\n%s%s", code, out.String(), errb.String())
	}
	ks1, ks4 := parity(t, filepath.Join(root, "single"), merged)
	t.Logf("across namespaces, arrival gaps vs Exponential(200): single %v; merged %v", ks1, ks4)
	for i := range 4 {
		info := readShardInfo(t, filepath.Join(root, "run", fmt.Sprintf("shard-%d", i)))
		if info.Coordinator != "http://"+lab.ip(1)+":7070" || info.RTT <= 0 {
			t.Errorf("shard %d: %+v; want the coordinator in its namespace and a measured round trip", i, info)
		}
		t.Logf("shard %d: offset %v, rtt %v, late %v", i, info.Offset, info.RTT, info.StartLate)
	}
}

// waitTCP waits (bounded) until addr accepts connections from namespace ns.
func waitTCP(t *testing.T, ns, addr string) {
	t.Helper()
	for range 100 {
		c := exec.Command("ip", "netns", "exec", ns, "bash", "-c", "exec 3<>/dev/tcp/"+strings.Replace(addr, ":", "/", 1))
		if c.Run() == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not accept connections in namespace %s", addr, ns)
}

// TestMergeInvalidShard: perfgate merge judges the merged run's validity before its
// assertions: a shard whose recorded check found a warm cache makes the merged run
// invalid (exit 1, INVALID naming the shard, objectives not judged); without it the
// same merge passes.
func TestMergeInvalidShard(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for i := range 2 {
		code, out, errOut := cli(t, "profile", "--mock", "--request-count", "20", "--concurrency", "2", "--osl", "4", "-q",
			"--shards", "2", "--shard-index", strconv.Itoa(i), "--artifact-dir", filepath.Join(root, "run"))
		if code != ExitOK {
			t.Fatalf("shard %d: exit %d\n%s%s", i, code, out, errOut)
		}
		dirs = append(dirs, filepath.Join(root, "run", fmt.Sprintf("shard-%d", i)))
	}
	code, out, errOut := cli(t, "merge", "--artifact-dir", filepath.Join(root, "ok"), "--assert", "ttft_p50<=1m", dirs[0], dirs[1])
	if code != ExitOK || strings.Contains(out, "INVALID") {
		t.Fatalf("clean shards: exit %d\n%s%s", code, out, errOut)
	}
	p := filepath.Join(dirs[1], perfrun.ValidityFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	vs, _ := doc["verdicts"].([]any)
	doc["verdicts"] = append(vs, map[string]any{"check": validity.CheckWarmCache, "pass": false, "status": "invalid", "summary": "warm cache: prefix-cache hit rate 40.0% >= 1% on a workload with no designed reuse"})
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, "merge", "--artifact-dir", filepath.Join(root, "bad"), "--assert", "ttft_p50<=1m", dirs[0], dirs[1])
	if code != ExitRuntime || !strings.Contains(out, "INVALID shard 1: warm cache") || !strings.Contains(errOut, "invalid measurement: warm-cache") || strings.Contains(out, "PASS: ") {
		t.Errorf("a shard with a warm cache: exit %d; want 1 with INVALID naming shard 1's warm cache and no objective judged\n%s%s", code, out, errOut)
	}
}
