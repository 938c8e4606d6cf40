package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// TestQuickStartAtScale runs the README's quick start at 5,000 conversations: the mock
// as its own command (`perfgate mock --tokenizer gpt2 --record-requests FILE --fast`),
// then `perfgate profile` with vLLM-style random prompts (mean 128, range ratio 0.3),
// and checks that every request was recorded by both sides (joined by request id) and
// the inspection statistics: ISL min/mean/max as the server counted them.
func TestQuickStartAtScale(t *testing.T) {
	const n = 5000
	dir := t.TempDir()
	port := freePort(t)
	srvFile := filepath.Join(dir, "server.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var mout, merr bytes.Buffer
	go func() {
		done <- runWith(ctx, []string{"mock", "--port", fmt.Sprint(port), "--tokenizer", "gpt2", "--record-requests", srvFile, "--fast"}, nil, &mout, &merr)
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for i := 0; ; i++ {
		resp, err := http.Get(base + "/v1/models")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 200 {
			cancel()
			t.Fatalf("mock never answered: %v (stderr %s)", err, merr.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
	art := filepath.Join(dir, "run")
	code, out, errOut := cli(t, "profile", "--url", base, "--prompt-corpus", "random", "--random-corpus-style", "vllm",
		"--random-range-ratio", "0.3", "--prompt-input-tokens-mean", "128", "--prompt-output-tokens-mean", "128",
		"--concurrency", "10", "--conversation-num", fmt.Sprint(n), "--random-seed", "0", "--artifact-dir", art)
	cancel()
	select {
	case c := <-done:
		if c != ExitOK {
			t.Errorf("mock exited %d; stderr: %s", c, merr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("mock did not stop after cancel")
	}
	if code != ExitOK {
		t.Fatalf("profile exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, lastLines(errOut, 5))
	}
	client := readRecords[record.Client](t, filepath.Join(art, "client.jsonl"))
	server := readRecords[record.Server](t, srvFile)
	byID := map[string]*record.Server{}
	for i := range server {
		byID[server[i].RequestID] = &server[i]
	}
	if len(client) != n || len(server) != n || len(byID) != n {
		t.Fatalf("client recorded %d requests, server %d (%d distinct ids), want %d each", len(client), len(server), len(byID), n)
	}
	var sum, lo, hi, off int
	lo = 1 << 30
	over := -1 // server ISL − client ISL: the chat template's tokens, the same for every single-turn request
	for i := range client {
		c := &client[i]
		s := byID[c.RequestID]
		if !c.OK() || s == nil {
			t.Fatalf("request %s: client %s %s, server has it: %v", c.RequestID, c.ErrorKind, c.Error, s != nil)
		}
		// vLLM's random dataset: input lengths uniform on [128·0.7, 128·1.3].
		if c.ISL < 89 || c.ISL > 167 {
			t.Errorf("request %s: client ISL %d outside vLLM's [89, 167]", c.RequestID, c.ISL)
		}
		if over < 0 {
			over = s.ISL - c.ISL
		}
		// BPE can merge tokens across the template's boundary: ±2 is allowed, rarely.
		if d := s.ISL - c.ISL - over; d != 0 {
			off++
			if d < -2 || d > 2 {
				t.Errorf("request %s: server counted %d input tokens, client %d: overhead %d, want %d±2", c.RequestID, s.ISL, c.ISL, s.ISL-c.ISL, over)
			}
		}
		sum += s.ISL
		lo, hi = min(lo, s.ISL), max(hi, s.ISL)
	}
	if off > n/100 {
		t.Errorf("%d of %d requests have a template overhead other than %d; want at most 1%%", off, n, over)
	}
	mean := float64(sum) / n
	t.Logf("server ISL min %d mean %.2f max %d (chat template adds %d; %d requests ±1)", lo, mean, hi, over, off)
	// Mean of U[89.6, 166.4] is 128; over 5,000 draws its standard error is 0.32.
	if lo < 89+over-2 || hi > 167+over+2 || mean < 126.5+float64(over) || mean > 129.5+float64(over) {
		t.Errorf("server ISL min %d mean %.2f max %d; want within [%d, %d] and mean 128±1.5 (+%d template)", lo, mean, hi, 89+over, 167+over, over)
	}
}

func readRecords[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := record.Read[T](f)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}
