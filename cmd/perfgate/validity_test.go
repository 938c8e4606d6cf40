package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// TestReportShowsPins: perfgate report prints what the run measured with: perfgate's
// dataset fingerprint, the server's identity and the topology.
func TestReportShowsPins(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	if code, out, errOut := cli(t, "profile", "--mock", "-q", "--artifact-dir", art, "--request-count", "8", "--random-seed", "3"); code != ExitOK {
		t.Fatalf("profile exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := cli(t, "report", art)
	if code != ExitOK {
		t.Fatalf("report exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"dataset:   sha256 ", "(8 request bodies)", "server:    http://127.0.0.1:", "Server: ", "topology:  ", "1 shard(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestTailRuleRefused: a p99 assertion on 100 requests exits 2 before any request,
// naming the 299 it needs; --check-tail-samples warn runs it; a bad mode is refused.
func TestTailRuleRefused(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	code, _, errOut := cli(t, "profile", "--mock", "-q", "--artifact-dir", art, "--request-count", "100", "--assert", "ttft_p99<=10s")
	if code != ExitInvalidConfig || !strings.Contains(errOut, "ttft_p99<=10s needs at least 299 measured requests") {
		t.Errorf("p99 on 100: exit %d, %s", code, errOut)
	}
	code, out, errOut := cli(t, "profile", "--mock", "-q", "--artifact-dir", art, "--request-count", "100", "--assert", "ttft_p99<=10s", "--check-tail-samples", "warn", "--osl", "4")
	if code != ExitOK || !strings.Contains(out, "WARN too few requests for ttft_p99<=10s: 100 measured, 299 needed") {
		t.Errorf("warn: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "profile", "--mock", "--check-steady-state", "maybe"); code != ExitInvalidConfig || !strings.Contains(errOut, `--check-steady-state "maybe": want fail, warn or off`) {
		t.Errorf("bad mode: exit %d, %s", code, errOut)
	}
}

// TestFileLimitRefusedCLI: perfgate profile in a shell whose open-file limit (hard and
// soft) is 64 refuses 200 connections with exit 2 before any request, naming the limit,
// the need and the fix.
func TestFileLimitRefusedCLI(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command("sh", "-c", `ulimit -n 64 && exec "$0" "$@"`, os.Args[0], "profile", "--mock", "-q", "--artifact-dir", art, "--concurrency", "200", "--request-count", "400")
	cmd.Env = append(os.Environ(), "PERFGATE_TEST_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	_ = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != ExitInvalidConfig || !strings.Contains(stderr.String(), "open files: the run needs about 464 (200 connections × 2 with the in-process mock + 64), the limit is 64 (hard 64); fix: ulimit -n 464") {
		t.Errorf("exit %d, want %d naming the open-file limit:\n%s", code, ExitInvalidConfig, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(art, "client.jsonl")); err == nil {
		t.Error("a client recording was written: a request may have been sent")
	}
}

// TestMockAgreesWithPreflight: `perfgate mock` answers a model it does not serve with
// vLLM's 404, so profile --model-names X against it is refused at the preflight
// (exit 2) rather than after every request failed; with --any-model the mock serves X
// and the run passes; with no model named, profile takes the mock's first.
func TestMockAgreesWithPreflight(t *testing.T) {
	startCLIMock := func(extra ...string) string {
		port := freePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() {
			var o, e bytes.Buffer
			done <- runWith(ctx, append([]string{"mock", "--port", fmt.Sprint(port), "--fast"}, extra...), nil, &o, &e)
		}()
		t.Cleanup(func() { cancel(); <-done })
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		for i := 0; ; i++ {
			if resp, err := http.Get(base + "/v1/models"); err == nil {
				resp.Body.Close()
				return base
			}
			if i == 200 {
				t.Fatal("mock never answered")
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	strict := startCLIMock()
	code, _, errOut := cli(t, "profile", "--url", strict, "--model-names", "X", "-q", "--request-count", "3", "--artifact-dir", filepath.Join(t.TempDir(), "a"))
	if code != ExitInvalidConfig || !strings.Contains(errOut, `model "X" is not served; served: mock-model`) {
		t.Errorf("--model-names X against perfgate mock: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := cli(t, "profile", "--url", strict, "-q", "--request-count", "3", "--osl", "2", "--artifact-dir", filepath.Join(t.TempDir(), "b")); code != ExitOK {
		t.Errorf("no model named: exit %d\n%s\n%s", code, out, errOut)
	}
	anyM := startCLIMock("--any-model")
	if code, out, errOut := cli(t, "profile", "--url", anyM, "--model-names", "X", "-q", "--request-count", "3", "--osl", "2", "--artifact-dir", filepath.Join(t.TempDir(), "c")); code != ExitOK {
		t.Errorf("--model-names X against perfgate mock --any-model: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestRangeRatioAppliedToDefault: --random-range-ratio 0.3 with the vllm corpus and no
// mean spreads vLLM's default 1,024 over [716, 1332] instead of being dropped.
func TestRangeRatioAppliedToDefault(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "-q", "--artifact-dir", art, "--prompt-corpus", "random", "--random-range-ratio", "0.3",
		"--random-corpus-style", "vllm", "--request-count", "40", "--osl", "2")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	recs := readRecords[record.Client](t, filepath.Join(art, "client.jsonl"))
	lo, hi := 1<<30, 0
	for _, r := range recs {
		lo, hi = min(lo, r.ISL), max(hi, r.ISL)
	}
	if lo < 716 || hi > 1332 || hi-lo < 200 {
		t.Errorf("ISL in [%d, %d]; want spread within [716, 1332]", lo, hi)
	}
	sc, err := scenario.ReadFile(filepath.Join(art, "scenario.json"))
	if err != nil || sc.ISL.String() != "vllm-range:1024,0.3" {
		t.Errorf("scenario.json isl = %v (%v), want vllm-range:1024,0.3", sc.ISL, err)
	}
}

// TestClientBoundBandsCLI: perfgate report re-judges a run from its recorded
// self-measurement: a gross median send lag exits 1 with INVALID client-bound and the
// reason first; a marginal one exits 0 with WARN; warn-only for the gross band
// (scenario client_bound_gross: warn) exits 0; a run the load generator stopped exits 1
// whatever the modes.
func TestClientBoundBandsCLI(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	if code, out, errOut := cli(t, "profile", "--mock", "-q", "--artifact-dir", art, "--request-rate", "200", "--request-count", "40", "--osl", "4",
		"--check-client-bound-gross", "warn"); code != ExitOK { // the recording is re-judged below, case by case
		t.Fatalf("profile exit %d\n%s\n%s", code, out, errOut)
	}
	edit := func(name string, f func(map[string]any)) {
		t.Helper()
		p := filepath.Join(art, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		f(doc)
		if b, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	self := func(p50 time.Duration, aborted string) {
		edit(perfrun.ValidityFile, func(doc map[string]any) {
			c := doc["client"].(map[string]any)
			c["send_lag"] = map[string]any{"n": 40, "p50": p50, "p99": p50, "max": p50}
			c["aborted"] = aborted
		})
	}
	for _, tc := range []struct {
		name    string
		p50     time.Duration
		aborted string
		gross   string // the scenario's client_bound_gross
		code    int
		want    string
	}{
		{"gross", 2300 * time.Millisecond, "", "", ExitRuntime, "INVALID client-bound: send lag p50 2.3s > 50ms: the client could not keep up"},
		{"marginal", 5 * time.Millisecond, "", "", ExitOK, "WARN client-bound: send lag p50 5ms > 1ms"},
		{"gross, warn-only", 2300 * time.Millisecond, "", "warn", ExitOK, "WARN client-bound: send lag p50 2.3s > 50ms"},
		{"aborted", 5 * time.Millisecond, "schedule 4.2s behind for 5s at 200 req/s offered, 20 achieved: the client cannot keep up", "warn", ExitRuntime,
			"INVALID client-bound: the run was stopped early: schedule 4.2s behind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			self(tc.p50, tc.aborted)
			edit(perfrun.ScenarioFile, func(doc map[string]any) {
				v, _ := doc["validity"].(map[string]any)
				if v == nil {
					v = map[string]any{}
				}
				v["client_bound_gross"] = tc.gross
				doc["validity"] = v
			})
			code, out, errOut := cli(t, "report", art, "--quiet")
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s\n%s", code, tc.code, tc.want, out, errOut)
			}
		})
	}
}

// TestClientBoundFlagsRefused: the gross band's and the schedule watch's flags refuse
// values that mean nothing, with exit 2 naming the flag, before any request.
func TestClientBoundFlagsRefused(t *testing.T) {
	for _, tc := range []struct{ flag, val, want string }{
		{"--max-schedule-lag", "-1", "--max-schedule-lag -1: want a positive number of seconds, or 0 never to stop"},
		{"--gross-send-lag-ms", "0", "--gross-send-lag-ms 0: want a positive number of milliseconds"},
		{"--min-achieved-rate", "1.5", "--min-achieved-rate 1.5: want a fraction in (0, 1]"},
		{"--min-achieved-rate", "0", "--min-achieved-rate 0: want a fraction in (0, 1]"},
		{"--check-client-bound-gross", "maybe", `--check-client-bound-gross "maybe": want fail, warn or off`},
	} {
		art := filepath.Join(t.TempDir(), "run")
		code, _, errOut := cli(t, "profile", "--mock", "-q", "--artifact-dir", art, "--request-rate", "100", "--request-count", "10", tc.flag, tc.val)
		if code != ExitInvalidConfig || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s %s: exit %d, want %d with %q:\n%s", tc.flag, tc.val, code, ExitInvalidConfig, tc.want, errOut)
		}
		if _, err := os.Stat(filepath.Join(art, "client.jsonl")); err == nil {
			t.Errorf("%s %s: a client recording was written", tc.flag, tc.val)
		}
	}
}
