package main

import (
	"path/filepath"
	"strings"
	"testing"
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
