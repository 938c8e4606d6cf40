package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
)

// TestRequestRateSeriesCLI: --request-rate-series FILE runs the mock open loop along
// the series and, with no other stop, ends at its last point (constant arrivals: at
// most Λ of the series' span requests, not the default 100); a malformed series is
// exit 2 naming the flag, the file and the point; it conflicts with --sweep-rate.
func TestRequestRateSeriesCLI(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "series.json")
	if err := os.WriteFile(good, []byte(`{"points":[{"time_s":0,"qps":20},{"time_s":0.5,"qps":60},{"time_s":1,"qps":60}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(dir, "art")
	code, _, stderr := cli(t, "profile", "--mock", "--request-rate-series", good, "--arrival", "constant", "--streaming=false", "--artifact-dir", art, "-q",
		"--check-client-bound-gross", "warn") // about the series, not this machine keeping its schedule (TestClientBound* test that)
	if code != 0 {
		t.Fatalf("profile --request-rate-series = exit %d; stderr %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(art, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m record.Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	// Λ(1 s) = (20 + 60)/2 · 0.5 + 60 · 0.5 = 50, not the default 100 requests; fewer
	// when a loaded machine sends some after the end (loadgen's tests count exactly).
	if got := m.Value(record.MetricRequestCount); got < 1 || got > 50 {
		t.Errorf("request_count = %v; want 1 to 50, the series' integral over its span", got)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"time_s":0,"qps":20},{"time_s":5,"qps":-1}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = cli(t, "profile", "--mock", "--request-rate-series", bad, "-q")
	if want := "--request-rate-series " + bad + ": point 1: qps -1: want a finite number > 0"; code != ExitInvalidConfig || !strings.Contains(stderr, want) {
		t.Errorf("a negative qps: exit %d, stderr %q; want exit %d and %q", code, stderr, ExitInvalidConfig, want)
	}
	code, _, stderr = cli(t, "profile", "--mock", "--request-rate-series", good, "--sweep-rate", "1,2", "-q")
	if code != ExitInvalidConfig || !strings.Contains(stderr, "--request-rate-series conflict") {
		t.Errorf("with --sweep-rate: exit %d, stderr %q; want exit %d and a conflict", code, stderr, ExitInvalidConfig)
	}
}
