package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/reportgen"
)

func quickScenario(seed uint64, n int) scenario.Scenario {
	return scenario.Scenario{
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{Seed: seed, ISL: fixed(32), OSL: fixed(4)},
			Load:     loadgen.Load{Concurrency: 4},
			Stop:     loadgen.Stop{Requests: n},
		},
	}
}

// TestFingerprintInManifest: two identical seeded runs give the same dataset
// fingerprint in their manifests; another seed does not.
func TestFingerprintInManifest(t *testing.T) {
	fp := func(seed uint64) (string, reportgen.Manifest) {
		dir := t.TempDir()
		out, err := Run(context.Background(), quickScenario(seed, 30), dir)
		if err != nil {
			t.Fatal(err)
		}
		m, err := gate.ReadIdentity(dir)
		if err != nil {
			t.Fatal(err)
		}
		if m.Dataset == nil || m.Dataset.Requests != 30 || m.Dataset.Fingerprint != out.Pins.Dataset.Fingerprint {
			t.Fatalf("manifest dataset %+v, outcome %+v", m.Dataset, out.Pins.Dataset)
		}
		if len(m.Servers) != 1 || m.Servers[0].Header == "" || m.Topology == nil || len(m.Topology.Addrs) != 1 || m.Topology.RTT <= 0 || m.Topology.Shards != 1 {
			t.Errorf("manifest servers %+v topology %+v: want the mock's Server header, its address, an RTT, 1 shard", m.Servers, m.Topology)
		}
		// perfgate report reads the run's pins back, not its own.
		back, err := Load(dir)
		if err != nil || back.Pins == nil || back.Pins.Dataset.Fingerprint != m.Dataset.Fingerprint {
			t.Errorf("Load: pins %+v, %v", back.Pins, err)
		}
		return m.Dataset.Fingerprint, m
	}
	a, ma := fp(7)
	b, mb := fp(7)
	c, mc := fp(8)
	if a != b {
		t.Errorf("seed 7 twice: %s != %s", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 fingerprint alike: %s", a)
	}
	if d := gate.CompareIdentity(ma, mb); d != nil {
		t.Errorf("identical runs differ: %v", d)
	}
	if d := gate.CompareIdentity(ma, mc); len(d) != 1 || !strings.Contains(d[0], "dataset fingerprint") {
		t.Errorf("different seeds: %v, want the dataset fingerprint", d)
	}
}

func TestCompareIdentity(t *testing.T) {
	base := reportgen.Manifest{Host: reportgen.Host{CPUModel: "EPYC", CPUs: 8, GOMAXPROCS: 8, OS: "linux", Arch: "amd64"},
		Dataset: &reportgen.Dataset{Fingerprint: "aa"}, Servers: []reportgen.Server{{Header: "uvicorn", Version: `{"version":"0.10.0"}`, Build: map[string]string{"vllm:cache_config_info.block_size": "16"}}}}
	cur := base
	cur.Servers = []reportgen.Server{{Header: "uvicorn", Version: `{"version":"0.11.0"}`, Build: map[string]string{"vllm:cache_config_info.block_size": "32"}}}
	cur.Host.CPUs = 16
	d := gate.CompareIdentity(base, cur)
	want := []string{"server version", "server build info differs: vllm:cache_config_info.block_size", "CPUs: baseline 8, current 16"}
	if len(d) != len(want) {
		t.Fatalf("differences %q, want %d", d, len(want))
	}
	for i, w := range want {
		if !strings.Contains(d[i], w) {
			t.Errorf("difference %d = %q, want %q", i, d[i], w)
		}
	}
	v := BaselineIdentity(d, validity.ModeFail)
	if v.Pass || v.Status != check.Invalid || !errors.Is(v.Err(), check.ErrInvalidRun) {
		t.Errorf("fail mode: %+v", v)
	}
	if v := BaselineIdentity(d, validity.ModeWarn); !v.Pass || v.Status != check.Invalid {
		t.Errorf("warn mode: %+v", v)
	}
	if v := BaselineIdentity(nil, validity.ModeFail); !v.Pass || v.Status != check.Decided {
		t.Errorf("same identity: %+v", v)
	}
	// Unknown facts are not compared.
	if d := gate.CompareIdentity(reportgen.Manifest{}, cur); d != nil {
		t.Errorf("an empty baseline differs: %v", d)
	}
}

// TestIdentifyServer: the Server header, /version and the /metrics *_info labels.
func TestIdentifyServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "uvicorn")
		switch r.URL.Path {
		case "/version":
			fmt.Fprint(w, `{"version":"0.11.0"}`)
		case "/metrics":
			fmt.Fprint(w, "# HELP vllm:cache_config_info x\nvllm:cache_config_info{block_size=\"16\",prefix=\"a,b\"} 1.0\npython_info{version=\"3.12.1\"} 1\nvllm:num_requests_running 0\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	servers, topo := Identify(context.Background(), scenario.Scenario{}, []string{srv.URL + "/v1"}, srv.URL+"/metrics")
	if len(servers) != 1 {
		t.Fatalf("servers %+v", servers)
	}
	s := servers[0]
	if s.Header != "uvicorn" || s.Version != `{"version":"0.11.0"}` || s.Build["vllm:cache_config_info.block_size"] != "16" ||
		s.Build["vllm:cache_config_info.prefix"] != "a,b" || s.Build["python_info.version"] != "3.12.1" || len(s.Build) != 3 {
		t.Errorf("identity %+v", s)
	}
	if topo.RTT <= 0 || len(topo.Addrs) != 1 || !strings.HasPrefix(topo.Addrs[0], "127.0.0.1:") {
		t.Errorf("topology %+v", topo)
	}
}

// TestTailRuleRefusedBeforeRun: a p99 rule on 100 requests is refused before any
// request, naming the 299 it needs; warn lets it run, and the run's validity says so;
// a duration-bound run is judged after it.
func TestTailRuleRefusedBeforeRun(t *testing.T) {
	sc := quickScenario(1, 100)
	sc.Objectives.Rules = []string{"ttft_p99 <= 10s"}
	err := sc.Validate()
	if !errors.Is(err, scenario.ErrInvalidScenario) || !strings.Contains(err.Error(), "ttft_p99 <= 10s needs at least 299 measured requests") || !strings.Contains(err.Error(), "has 100") {
		t.Fatalf("Validate: %v", err)
	}
	if _, err := Run(context.Background(), sc, ""); !errors.Is(err, scenario.ErrInvalidScenario) {
		t.Fatalf("Run: %v", err)
	}
	sc.Validity.TailSamples = validity.ModeWarn
	out, err := Run(context.Background(), sc, "")
	if err != nil {
		t.Fatal(err)
	}
	v := find(out.Validity(), validity.CheckTailSamples)
	if v == nil || !v.Pass || v.Status != check.Invalid || !strings.Contains(v.Summary, "100 measured, 299 needed") {
		t.Errorf("warn: %v", v)
	}
	sc.Validity.TailSamples = ""
	sc.Requests, sc.Duration = 0, 300*time.Millisecond
	if err := sc.Validate(); err != nil {
		t.Fatalf("a duration-bound run is judged after it: %v", err)
	}
	out, err = Run(context.Background(), sc, "")
	if err != nil {
		t.Fatal(err)
	}
	n := out.Context("").Requests
	v = find(out.Validity(), validity.CheckTailSamples)
	if n < 299 && (v == nil || v.Pass || !errors.Is(v.Err(), check.ErrInvalidRun)) || n >= 299 && v != nil {
		t.Errorf("duration run of %d requests: %v", n, v)
	}
	sc.Objectives.Rules = []string{"ttft_p50 <= 10s"}
	sc.Requests, sc.Duration = 100, 0
	if err := sc.Validate(); err != nil {
		t.Errorf("p50 on 100 requests: %v", err)
	}
}

func find(vs []check.Verdict, name string) *check.Verdict {
	for i := range vs {
		if vs[i].Check == name {
			return &vs[i]
		}
	}
	return nil
}

// TestPreflightWrongBasePath: a URL with a wrong path (/v2) is refused at the preflight
// (its /v1/models answers 404, and so does one request of the configured kind); the
// right path on a server without /v1/models passes.
func TestPreflightWrongBasePath(t *testing.T) {
	for _, c := range []struct {
		disable bool
		path    string
		wantErr string
	}{{false, "/v2", "wrong base path: GET "}, {true, "", ""}, {true, "/v1", ""}, {false, "", ""}} {
		srv, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Fast: true, DisableModels: c.disable}))
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		sc := quickScenario(1, 3)
		sc.URLs = []string{srv.URL() + c.path}
		err = Preflight(context.Background(), sc)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s (models endpoint disabled %v): %v", sc.URLs[0], c.disable, err)
		case c.wantErr != "" && (!errors.Is(err, ErrPreflight) || !strings.Contains(fmt.Sprint(err), c.wantErr) || !strings.Contains(fmt.Sprint(err), "404")):
			t.Errorf("%s: %v, want %q", sc.URLs[0], err, c.wantErr)
		}
		srv.Close()
	}
}

// TestWarmCache: a seeded run replayed against the same server finds its prompts in the
// prefix cache (the mock's vllm:prefix_cache_* counters in /metrics): a warm cache,
// an invalid measurement; the first run, and a replay with cache_bust, are cold; a
// reset hook (POST) before the replay empties the cache too.
func TestWarmCache(t *testing.T) {
	srv, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Fast: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	run := func(v validity.Config) check.Verdict {
		sc := quickScenario(5, 40)
		sc.ISL = fixed(96)
		sc.URLs = []string{srv.URL()}
		sc.ServerMetrics.URLs = []string{"/metrics"}
		sc.Validity = v
		out, err := Run(context.Background(), sc, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		v2 := find(out.Validity(), validity.CheckWarmCache)
		if v2 == nil {
			t.Fatalf("no warm-cache verdict: %v", out.Validity())
		}
		return *v2
	}
	if v := run(validity.Config{}); !v.Pass || v.Value >= validity.DefaultMaxCacheHitRate {
		t.Errorf("first run:\n%s", v)
	}
	v := run(validity.Config{})
	if v.Pass || v.Status != check.Invalid || !strings.Contains(v.Summary, "warm cache: prefix-cache hit rate") || v.Value < 0.5 {
		t.Errorf("replay:\n%s", v)
	}
	if v := run(validity.Config{CacheBust: true}); !v.Pass || v.Value >= validity.DefaultMaxCacheHitRate {
		t.Errorf("replay with cache_bust:\n%s", v)
	}
	if v := run(validity.Config{WarmCache: validity.ModeWarn}); !v.Pass || v.Status != check.Invalid {
		t.Errorf("replay, warn:\n%s", v)
	}
	if v := run(validity.Config{ResetURL: srv.URL() + "/reset_prefix_cache"}); !v.Pass || v.Value >= validity.DefaultMaxCacheHitRate {
		t.Errorf("replay after the reset hook:\n%s", v)
	}
	sc := quickScenario(5, 3)
	sc.URLs = []string{srv.URL()}
	sc.Validity.ResetURL = srv.URL() + "/no_such_hook"
	if _, err := Run(context.Background(), sc, ""); !errors.Is(err, ErrReset) || !strings.Contains(err.Error(), "404") {
		t.Errorf("a reset hook answering 404: %v", err)
	}
}

// TestSteadySlowingServer: a server whose time to first token grows over the run (5 ms
// at the first request to about 45 ms at the 300th) is flagged not steady, with the
// windows and the slope; the same run of a server that does not slow is steady is
// tested on constructed series (TestSteadyConstructed), where machine noise cannot
// reach it.
func TestSteadySlowingServer(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		// TTFT grows by 0.4 ms a request, 5 → 125 ms over the 300: a rise that the
		// delays of a loaded machine cannot hide (at 0.13 ms a request, a loaded run's
		// early requests were slower than its late ones).
		i := n.Add(1)
		time.Sleep(5*time.Millisecond + time.Duration(i)*400*time.Microsecond)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 3 {
			fmt.Fprint(w, `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" hi"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(time.Millisecond)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	sc := quickScenario(1, 300)
	sc.URLs = []string{srv.URL}
	out, err := Run(context.Background(), sc, "")
	if err != nil {
		t.Fatal(err)
	}
	v := find(out.Validity(), validity.CheckSteady)
	if v == nil || !v.Pass || v.Status != check.Invalid || !strings.Contains(v.Summary, "not steady: TTFT median drifted +") || // warn by default
		!strings.Contains(v.String(), "ITL: ") ||
		!strings.Contains(v.String(), "windows of") || !strings.Contains(v.String(), "/s), Mann–Kendall p=") {
		t.Fatalf("a slowing server:\n%v", v)
	}
	sc.Validity.Steady = validity.ModeFail
	out.Scenario.Validity.Steady = validity.ModeFail
	if v := find(out.Validity(), validity.CheckSteady); v.Pass || !errors.Is(v.Err(), check.ErrInvalidRun) {
		t.Errorf("fail mode: %v", v)
	}
	out.Scenario.Validity.Steady = validity.ModeOff
	if v := find(out.Validity(), validity.CheckSteady); v != nil {
		t.Errorf("off: %v", v)
	}
}
