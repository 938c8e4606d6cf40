package liveout

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/record"
)

// otlpReceiver is a small OTLP/HTTP metrics receiver: it decodes each request with
// the OTLP protobuf types (go.opentelemetry.io/proto/otlp) and keeps the last.
type otlpReceiver struct {
	mu   sync.Mutex
	last *colmetricpb.ExportMetricsServiceRequest
	n    int
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := &colmetricpb.ExportMetricsServiceRequest{}
	if err != nil || r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	o.last, o.n = req, o.n+1
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(nil)
}

// find returns the metric named name in the last request.
func (o *otlpReceiver) find(name string) *metricpb.Metric {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rm := range o.last.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if m.GetName() == name {
					return m
				}
			}
		}
	}
	return nil
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	return out
}

// TestOTLPReceiver: what an OTLP receiver decodes is the run: 30 successful requests
// and 3 failed ones of model m, their tokens and TTFT histogram, with the scenario,
// run, model and endpoint attributes (no class: the run has no traffic classes).
func TestOTLPReceiver(t *testing.T) {
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	l, err := Start(t.Context(), Config{Outputs: []Output{{OTLP, srv.URL + "/v1/metrics"}}, Interval: time.Hour,
		Labels: Labels{Scenario: "chat", Run: "r1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 33 {
		r := rec("m")
		if i%11 == 0 {
			r.ErrorKind, r.Status = record.ErrHTTPStatus, 500
		}
		l.Record(r)
	}
	st := l.Stop(t.Context())
	if st.Outputs[0].Pushes != 2 || st.Outputs[0].Failed != 0 || recv.n != 2 {
		t.Fatalf("stats %+v, receiver got %d requests; want the first and the last push, both accepted", st, recv.n)
	}
	reqs := recv.find(SeriesRequests.OTel)
	if reqs == nil || !reqs.GetSum().GetIsMonotonic() {
		t.Fatalf("no monotonic %s in the last push", SeriesRequests.OTel)
	}
	byOutcome := map[string]int64{}
	for _, p := range reqs.GetSum().GetDataPoints() {
		a := attrs(p.GetAttributes())
		if _, has := a["class"]; a["scenario"] != "chat" || a["run"] != "r1" || a["model"] != "m" || a["endpoint"] != "chat" || has {
			t.Errorf("attributes %v; want scenario chat, run r1, model m, endpoint chat, no class", a)
		}
		byOutcome[a["outcome"]] = p.GetAsInt()
	}
	if byOutcome["ok"] != 30 || byOutcome["error"] != 3 {
		t.Errorf("requests by outcome %v; want 30 ok, 3 error", byOutcome)
	}
	out := recv.find(SeriesOutputTokens.OTel).GetSum().GetDataPoints()
	if len(out) != 1 || out[0].GetAsInt() != 300 {
		t.Errorf("output tokens %v; want 300", out)
	}
	h := recv.find(SeriesTTFT.OTel).GetHistogram().GetDataPoints()
	if len(h) != 1 || h[0].GetCount() != 30 || h[0].GetSum() < 0.6-1e-9 || h[0].GetSum() > 0.6+1e-9 || len(h[0].GetExplicitBounds()) != len(Bounds) {
		t.Errorf("TTFT histogram %v; want 30 requests summing 0.6 s over %d bounds", h, len(Bounds))
	}
}

// TestClassLabel: in a run of traffic classes each series carries its class, the
// records' class (the name rules scope with {class=NAME}), beside the endpoint kind.
func TestClassLabel(t *testing.T) {
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	l, err := Start(t.Context(), Config{Outputs: []Output{{OTLP, srv.URL + "/v1/metrics"}}, Interval: time.Hour,
		Labels: Labels{Scenario: "mixed", Run: "r2"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		r := rec("m")
		r.Class = map[bool]string{true: "batch", false: "chat"}[i < 2]
		l.Record(r)
	}
	l.Stop(t.Context())
	reqs := recv.find(SeriesRequests.OTel)
	if reqs == nil {
		t.Fatalf("no %s in the last push", SeriesRequests.OTel)
	}
	byClass := map[string]int64{}
	for _, p := range reqs.GetSum().GetDataPoints() {
		a := attrs(p.GetAttributes())
		if a["endpoint"] != "chat" {
			t.Errorf("attributes %v; want endpoint chat", a)
		}
		if a["outcome"] == "ok" {
			byClass[a["class"]] += p.GetAsInt()
		}
	}
	if byClass["batch"] != 2 || byClass["chat"] != 3 || len(byClass) != 2 {
		t.Errorf("ok requests by class %v; want batch 2, chat 3", byClass)
	}
}

// TestPrometheusRemoteWrite pushes a run to a real Prometheus (Debian's prometheus,
// started here on loopback with --web.enable-remote-write-receiver and a temporary
// database) and reads the run's series back through its HTTP query API.
func TestPrometheusRemoteWrite(t *testing.T) {
	testutil.Long(t)
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		testutil.Missing(t, "prometheus (apt-get install prometheus)")
	}
	base := startPrometheus(t, bin)
	run := NewRunID(time.Now())
	l, err := Start(t.Context(), Config{Outputs: []Output{{PrometheusRW, base + "/api/v1/write"}}, Interval: 100 * time.Millisecond,
		Labels: Labels{Scenario: "chat", Run: run}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 55 {
		r := rec("m")
		if i%11 == 0 {
			r.ErrorKind, r.Status = record.ErrHTTPStatus, 500
		}
		l.Record(r)
		if i == 29 {
			// Two samples of each series at least, for the dashboard's rate()s.
			for n := l.pushers[0].pushes.Load(); l.pushers[0].pushes.Load() < n+2; {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	st := l.Stop(t.Context())
	if st.Outputs[0].Failed != 0 || len(st.Warnings) != 0 {
		t.Fatalf("pushes to Prometheus failed: %+v", st)
	}
	for q, want := range map[string]float64{
		`perfgate_requests_total{run="` + run + `",outcome="ok",model="m",endpoint="chat",scenario="chat",job="perfgate"}`: 50,
		`perfgate_requests_total{run="` + run + `",outcome="error"}`:                                                       5,
		`perfgate_output_tokens_total{run="` + run + `"}`:                                                                  500,
		`perfgate_ttft_seconds_count{run="` + run + `"}`:                                                                   50,
		`perfgate_ttft_seconds_bucket{run="` + run + `",le="0.025"}`:                                                       50,
		`perfgate_ttft_seconds_bucket{run="` + run + `",le="0.01"}`:                                                        0,
		`perfgate_live_dropped_records_total{run="` + run + `"}`:                                                           0,
	} {
		if got, ok := promQuery(t, base, q); !ok || got != want {
			t.Errorf("%s = %v (found %v), want %v", q, got, ok, want)
		}
	}
	// The Grafana dashboard's queries are valid PromQL and find the run's series.
	vars := strings.NewReplacer("$scenario", ".*", "$run", run, "$model", ".*")
	for _, e := range dashboardExprs(t) {
		if strings.HasPrefix(e, "label_values(") {
			continue // Grafana's, not PromQL
		}
		if n := promCount(t, base, vars.Replace(e)); n == 0 {
			t.Errorf("dashboard query %s finds nothing for the run", e)
		}
	}
}

// startPrometheus runs prometheus on a free loopback port with a temporary database
// until the test ends, and returns its base URL once it is ready.
func startPrometheus(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.enable-remote-write-receiver")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		select {
		case <-exited:
			t.Fatalf("prometheus exited before it was ready:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 30 s:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// promCount runs an instant query and returns how many series it found.
func promCount(t *testing.T, base, q string) int {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct{ Result []json.RawMessage }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v (status %q: %s)", q, err, body.Status, body.Error)
	}
	return len(body.Data.Result)
}

// promQuery runs an instant query and returns the value of its one series.
func promQuery(t *testing.T, base, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v (status %q)", q, err, body.Status)
	}
	if len(body.Data.Result) != 1 {
		return float64(len(body.Data.Result)), false
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}
