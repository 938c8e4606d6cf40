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
)

// TestCompareVerdictExitCodes: two mock runs with one seed are identical (exit 0 even
// under --assert identical); another seed of the same workload is the same
// distribution (exit 0, but 99 under --assert identical); another ISL is different
// (exit 99).
func TestCompareVerdictExitCodes(t *testing.T) {
	dir := t.TempDir()
	runs := []struct{ name, seed, isl string }{{"a", "7", "normal:64,8"}, {"b", "7", "normal:64,8"}, {"c", "8", "normal:64,8"}, {"d", "8", "normal:80,8"}}
	for _, r := range runs {
		code, out, errOut := cli(t, "profile", "--mock", "--request-count", "60", "--concurrency", "8", "--isl-dist", r.isl, "--osl-dist", "normal:12,3",
			"--random-seed", r.seed, "-q", "--artifact-dir", filepath.Join(dir, r.name))
		if code != ExitOK {
			t.Fatalf("profile %s: exit %d\n%s\n%s", r.name, code, out, errOut)
		}
	}
	for _, c := range []struct {
		a, b, assert string
		code         int
		verdict      string
	}{
		{"a", "b", "identical", ExitOK, "PASS identical"},
		{"a", "c", "", ExitOK, "PASS same distribution at alpha=0.05"},
		{"a", "c", "same", ExitOK, "PASS same distribution"},
		{"a", "c", "identical", ExitAssertFailed, "FAIL same distribution"},
		{"a", "d", "", ExitAssertFailed, "FAIL different: ISL"},
	} {
		args := []string{"compare", filepath.Join(dir, c.a), filepath.Join(dir, c.b), "--out", filepath.Join(dir, c.a+c.b+".html")}
		if c.assert != "" {
			args = append(args, "--assert", c.assert)
		}
		code, out, errOut := cli(t, args...)
		if code != c.code || !strings.Contains(out, c.verdict) {
			t.Errorf("compare %s %s --assert %q: exit %d, want %d with %q\n%s%s", c.a, c.b, c.assert, code, c.code, c.verdict, out, errOut)
		}
	}
	if code, _, errOut := cli(t, "compare", filepath.Join(dir, "a"), filepath.Join(dir, "b"), "--assert", "equal"); code != ExitInvalidConfig || !strings.Contains(errOut, "want identical or same") {
		t.Errorf("--assert equal: exit %d, %s", code, errOut)
	}
}

// startCapture runs `perfgate capture` with args on a free port until the test ends
// (or stop is called) and returns its URL.
func startCapture(t *testing.T, out string, args ...string) (url string, stop func()) {
	t.Helper()
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var errb bytes.Buffer
	go func() {
		done <- runWith(ctx, append([]string{"capture", "--port", fmt.Sprint(port), "--out", out}, args...), nil, &bytes.Buffer{}, &errb)
	}()
	url = fmt.Sprintf("http://127.0.0.1:%d", port)
	for range 100 {
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			if code != ExitOK {
				t.Errorf("capture exit %d: %s", code, errb.String())
			}
		case <-time.After(30 * time.Second):
			t.Error("capture did not stop")
		}
	}
	t.Cleanup(stop)
	return url, stop
}

// TestCaptureWorkflow is the seed's capture workflow with perfgate alone: capture
// serves the model the client asks for (--default-model), and two captures of the
// same seed have no differing prompt, while another seed's differ, with the first
// differing character shown and exit 99 under --assert.
func TestCaptureWorkflow(t *testing.T) {
	dir := t.TempDir()
	capture := func(name, seed string) string {
		out := filepath.Join(dir, name+".jsonl")
		url, stop := startCapture(t, out, "--default-model", "my-model")
		code, o, e := cli(t, "profile", "--url", url, "--model-names", "my-model", "--request-count", "25", "--concurrency", "4",
			"--random-seed", seed, "-q", "--artifact-dir", filepath.Join(dir, "run-"+name))
		if code != ExitOK {
			t.Fatalf("profile against capture %s: exit %d\n%s%s", name, code, o, e)
		}
		stop()
		return out
	}
	a, b, c := capture("a", "3"), capture("b", "3"), capture("c", "4")

	code, out, errOut := cli(t, "compare", a, b, "--assert", "identical", "--out", filepath.Join(dir, "ab.html"))
	if code != ExitOK || !strings.Contains(out, "0 / 25 prompts differ") {
		t.Errorf("same seed: exit %d\n%s%s", code, out, errOut)
	}
	html := filepath.Join(dir, "ac.html")
	code, out, errOut = cli(t, "compare", a, c, "--show", "2", "--out", html)
	if code != ExitOK || !strings.Contains(out, "25 / 25 prompts differ") || !strings.Contains(out, "first diff at char") || !strings.Contains(out, "and 23 more") {
		t.Errorf("other seed: exit %d\n%s%s", code, out, errOut)
	}
	if b, err := os.ReadFile(html); err != nil || bytes.Count(b, []byte(`class="card diff"`)) != 2 {
		t.Errorf("HTML view of the first 2 differences: %v", err)
	}
	if code, out, _ = cli(t, "compare", a, c, "--assert", "same", "--out", html); code != ExitAssertFailed {
		t.Errorf("other seed under --assert same: exit %d, want %d\n%s", code, ExitAssertFailed, out)
	}
	// A capture and a recording are not compared.
	if code, _, errOut = cli(t, "compare", a, filepath.Join(dir, "run-a", "client.jsonl")); code != ExitInvalidConfig || !strings.Contains(errOut, "is a capture file") {
		t.Errorf("capture vs recording: exit %d, %s", code, errOut)
	}
}

// TestCaptureModelList: without --default-model the capture lists the mock's default
// model, so a client asking for another model is refused by its preflight, saying so.
func TestCaptureModelList(t *testing.T) {
	dir := t.TempDir()
	url, _ := startCapture(t, filepath.Join(dir, "cap.jsonl"), "--models", "x,y")
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	resp.Body.Close()
	for _, m := range []string{`"mock-model"`, `"x"`, `"y"`} {
		if !strings.Contains(b.String(), m) {
			t.Errorf("/v1/models = %s, lacks %s", b.String(), m)
		}
	}
	code, out, errOut := cli(t, "profile", "--url", url, "--model-names", "my-model", "--request-count", "2", "-q", "--artifact-dir", filepath.Join(dir, "run"))
	if code != ExitInvalidConfig || !strings.Contains(errOut+out, "my-model") {
		t.Errorf("profile for an unlisted model: exit %d, want %d naming it\n%s%s", code, ExitInvalidConfig, out, errOut)
	}
}

// TestCompareClientRecordings is the README's first compare against a real server:
// runs of `perfgate profile` against `perfgate mock` (a server of their own, so their
// artifact directories hold client.jsonl and no server.jsonl) are compared by
// directory and by file, on either side. Chat client records carry tokenization_mode,
// as server records do, so this checks that they are still read as client records.
func TestCompareClientRecordings(t *testing.T) {
	base, _, _ := startMockCmd(t, "--ttft", "1", "--itl", "0")
	dir := t.TempDir()
	for _, name := range []string{"run", "other-run"} {
		code, out, errOut := cli(t, "profile", "-u", base, "-m", "mock-model", "--endpoint-type", "chat", "--isl", "32", "--osl", "4",
			"--concurrency", "4", "--request-count", "20", "--random-seed", "5", "-q", "--artifact-dir", filepath.Join(dir, name))
		if code != ExitOK {
			t.Fatalf("profile %s: exit %d\n%s%s", name, code, out, errOut)
		}
	}
	run, other := filepath.Join(dir, "run"), filepath.Join(dir, "other-run")
	if _, err := os.Stat(filepath.Join(run, "server.jsonl")); err == nil {
		t.Fatal("a run against perfgate mock wrote server.jsonl; want client.jsonl only")
	}
	first, err := os.ReadFile(filepath.Join(run, "client.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if line, _, _ := bytes.Cut(first, []byte("\n")); !bytes.Contains(line, []byte(`"tokenization_mode":`)) {
		t.Fatalf("the first chat client record lacks tokenization_mode, so this test no longer tests a client record that has it:\n%s", line)
	}
	for _, c := range [][2]string{
		{run, other},
		{filepath.Join(run, "client.jsonl"), other},
		{run, filepath.Join(other, "client.jsonl")},
		{filepath.Join(run, "client.jsonl"), filepath.Join(other, "client.jsonl")},
		{filepath.Join(run, "profile_export.jsonl"), other}, // --b alone is a client.jsonl
	} {
		code, out, errOut := cli(t, "compare", "--a", c[0], "--b", c[1], "--assert", "identical", "--out", filepath.Join(dir, "cmp.html"))
		if code != ExitOK || !strings.Contains(out, "PASS identical") {
			t.Errorf("compare --a %s --b %s: exit %d, want %d and PASS identical\n%s%s",
				filepath.Base(c[0]), filepath.Base(c[1]), code, ExitOK, out, errOut)
		}
	}
}
