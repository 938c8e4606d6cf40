package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `perfgate profile` against the in-process mock with reasoning on, over the Anthropic
// Messages endpoint, with server token counts: the AIPerf export carries TTFO and the
// reasoning and output token counts, and --assert gates on ttfo.
func TestProfileReasoningMessages(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sc.yaml")
	if err := os.WriteFile(cfg, []byte("mock:\n  reasoning_tokens: fixed:5\n  fast: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(dir, "art")
	code, out, errOut := cli(t, "profile", "--mock", "--config", cfg, "--endpoint-type", "messages", "--use-server-token-count",
		"--request-count", "6", "--osl", "12", "--ignore-eos", "-q", "--assert", "ttfo_p50<=10s", "--artifact-dir", art)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(art, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"time_to_first_output_token"`, `"reasoning_token_count"`, `"output_token_count"`, `"total_reasoning_tokens"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("profile_export_aiperf.json lacks %s", want)
		}
	}
	code, out, errOut = cli(t, "profile", "--mock", "--config", cfg, "--request-count", "3", "-q", "--assert", "ttfo_p99<=1ns", "--check-tail-samples", "warn",
		"--artifact-dir", filepath.Join(dir, "art2"))
	if code != ExitAssertFailed || !strings.Contains(out+errOut, "TTFO") {
		t.Errorf("ttfo_p99<=1ns: exit %d, output %q %q; want %d naming TTFO", code, out, errOut, ExitAssertFailed)
	}
}
