package main

import (
	"bufio"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/servermetrics"
)

// TestProfileGPUTelemetry: --gpu-telemetry scrapes the stub DCGM exporter during a
// mock run; the console shows each GPU, gpu_telemetry.json and metrics.json hold the
// energy metrics, and a rule on one passes the run, or fails it when perfgate report
// re-gates the saved directory (exit 0 / 99).
func TestProfileGPUTelemetry(t *testing.T) {
	d := testutil.NewDCGM(t, 300, 150)
	args := func(art string, rule string) []string {
		return []string{"profile", "--mock", "--request-count", "12", "--concurrency", "3", "--isl", "40", "--osl", "8",
			"--extra-inputs", "ignore_eos:true", "--artifact-dir", art, "-q",
			"--gpu-telemetry", d.URL, "--server-metrics-interval", "0.02", "--assert", rule}
	}
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, args(art, "tokens_per_joule>=0.000001")...)
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"gpu telemetry:", "GPU 0 (NVIDIA H100 80GB HBM3):", "GPU 1 (NVIDIA H100 80GB HBM3):", "PASS tokens_per_joule = "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	var g servermetrics.GPUSummary
	readJSON(t, filepath.Join(art, servermetrics.GPUSummaryFile), &g)
	var m record.Metrics
	readJSON(t, filepath.Join(art, "metrics.json"), &m)
	if len(g.GPUs) != 2 || m.Value(record.MetricGPUEnergy) != g.EnergyJ || m.Value(record.MetricTokensPerJoule) != m.Value(record.MetricTotalOSL)/g.EnergyJ {
		t.Errorf("gpu_telemetry.json %+v and metrics.json %v disagree", g, m.Scalars)
	}
	// perfgate report re-gates the saved run from gpu_telemetry.jsonl.
	code, out, errOut = cli(t, "report", art, "--assert", "tokens_per_joule>=1000000")
	if code != ExitAssertFailed || !strings.Contains(out, "FAIL tokens_per_joule = ") {
		t.Errorf("report --assert tokens_per_joule>=1000000: exit %d, want %d with a FAIL line:\n%s\nstderr:\n%s", code, ExitAssertFailed, out, errOut)
	}
}

// TestProfileGPUTelemetryBad: an endpoint without DCGM's names (the mock's own
// /metrics) and a URL that is not http(s) are exit 2 before any request.
func TestProfileGPUTelemetryBad(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"/metrics", "serves series such as"},
		{"ftp://gpu:9400/metrics", "--gpu-telemetry: url \"ftp://gpu:9400/metrics\""},
	} {
		code, out, errOut := cli(t, "profile", "--mock", "--request-count", "4", "--artifact-dir", filepath.Join(t.TempDir(), "run"), "-q", "--gpu-telemetry", c.url)
		if code != ExitInvalidConfig || !strings.Contains(errOut, c.want) {
			t.Errorf("--gpu-telemetry %s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.url, code, ExitInvalidConfig, c.want, out, errOut)
		}
	}
}

// TestProfileLiveOut: a receiver that never answers neither slows the run into a
// failure nor costs a record: every request is in client.jsonl, one warning line says
// the pushes fail, the exit code is the run's, and the URL's token is nowhere in the
// output or the artifacts. An unknown kind and a receiver that refuses the first push
// are exit 2 before the run.
func TestProfileLiveOut(t *testing.T) {
	release := make(chan struct{})
	blocking := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(blocking.Close)
	t.Cleanup(func() { close(release) })
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "--request-count", "60", "--concurrency", "8", "--isl", "16", "--osl", "4",
		"--artifact-dir", art, "--out", "prometheus-rw="+blocking.URL+"/api/v1/write?token=sekrit-token",
		"--out", "otlp="+strings.Replace(blocking.URL, "http://", "http://bob:pa55w0rd@", 1)+"/v1/metrics", "--out-interval", "0.05")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	f, err := os.Open(filepath.Join(art, "client.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		lines++
	}
	f.Close()
	if lines != 60 {
		t.Errorf("client.jsonl has %d records, want 60", lines)
	}
	if n := strings.Count(errOut, "WARN live output prometheus-rw="+blocking.URL+"/api/v1/write?token=redacted: push failed"); n != 1 {
		t.Errorf("%d warning lines for the remote-write output, want 1:\n%s", n, errOut)
	}
	if !strings.Contains(errOut, "live metrics: run=") {
		t.Errorf("stderr does not name the run:\n%s", errOut)
	}
	all := out + errOut
	_ = filepath.WalkDir(art, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			all += string(b)
		}
		return nil
	})
	for _, secret := range []string{"sekrit-token", "pa55w0rd", "bob:"} {
		if strings.Contains(all, secret) {
			t.Errorf("%q reached the output or an artifact", secret)
		}
	}
	refusing := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(refusing.Close)
	for _, c := range []struct{ out, want string }{
		{"influxdb=http://127.0.0.1:1/write", `unknown kind "influxdb"`},
		{"prometheus-rw=" + refusing.URL + "/api/v1/write", "refused the first push (HTTP 404)"},
	} {
		code, _, errOut := cli(t, "profile", "--mock", "--request-count", "4", "--artifact-dir", filepath.Join(t.TempDir(), "run"), "-q", "--out", c.out)
		if code != ExitInvalidConfig || !strings.Contains(errOut, c.want) {
			t.Errorf("--out %s: exit %d, want %d with %q:\n%s", c.out, code, ExitInvalidConfig, c.want, errOut)
		}
	}
}
