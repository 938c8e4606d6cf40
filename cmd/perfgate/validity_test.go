package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
