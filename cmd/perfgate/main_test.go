package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/reportgen"
)

// cli runs the CLI in-process with buffers, as k6's tests do.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return cliIn(t, "", args...)
}

func cliIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := testutil.Context(t) // bounded by the test binary's -timeout, not a wall clock
	defer cancel()
	var out, errb bytes.Buffer
	code := runWith(ctx, args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := cli(t, "version")
	if code != ExitOK || !strings.HasPrefix(out, "perfgate ") {
		t.Errorf("version = %d %q, want 0 and a version line", code, out)
	}
	code, out, _ = cli(t, "help")
	for _, c := range []string{"profile", "mock", "capture", "compare", "tokenize", "demo", "version", "99 assertion failed"} {
		if code != ExitOK || !strings.Contains(out, c) {
			t.Errorf("help (exit %d) lacks %q:\n%s", code, c, out)
		}
	}
	code, out, _ = cli(t, "profile", "-h")
	if code != ExitOK || !strings.Contains(out, "--model-names, --m, -m") && !strings.Contains(out, "--model-names") {
		t.Errorf("profile -h = %d:\n%s", code, out)
	}
	if n := strings.Count(out, "Usage: perfgate profile"); n != 1 {
		t.Errorf("profile -h printed its usage %d times, want once", n)
	}
	// A bad flag is one line on stderr and nothing on stdout (no flag list dump).
	code, out, errOut := cli(t, "profile", "--frob", "1")
	if code != ExitInvalidConfig || out != "" || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
		t.Errorf("profile --frob 1 = exit %d, stdout %q, stderr %q; want exit %d, no stdout, one stderr line", code, out, errOut, ExitInvalidConfig)
	}
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

// TestBadInput: every bad input is one line on stderr naming the flag or file and what
// is expected, exits with the invalid-configuration code, and leaves no artifacts.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badYAML, []byte("name: x\nconcurency: 4\n"), 0o644)
	trace := filepath.Join(dir, "trace.jsonl")
	os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}`+"\n"), 0o644)
	clientRec := filepath.Join(dir, "client.jsonl")
	os.WriteFile(clientRec, []byte(`{"request_id":"a","run_start_unix_ns":1,"tokenization_mode":"chat_template","chunks":[[1,2]]}`+"\n"), 0o644)
	refused := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	for _, tc := range []struct {
		name string
		args []string
		want []string // all in the error line
	}{
		{"unknown command", []string{"frobnicate"}, []string{"unknown command", "frobnicate"}},
		{"unknown flag", []string{"profile", "--mock", "--frob", "1"}, []string{"unknown flag --frob (perfgate profile -h lists the flags)"}},
		{"flag typo", []string{"profile", "--mock", "--concurency", "4"}, []string{"unknown flag --concurency (did you mean --concurrency?)"}},
		{"bad number", []string{"profile", "--mock", "--request-rate", "fast"}, []string{`--request-rate "fast": want a number: open loop: requests per second, e.g. --request-rate 10`}},
		{"isl not a number", []string{"profile", "--mock", "--isl", "abc"}, []string{`--isl "abc": want a number: mean input tokens, e.g. --isl 512`}},
		{"count not whole", []string{"profile", "--mock", "--request-count", "1e3"}, []string{`--request-count "1e3": want a whole number: measured requests to send, e.g. --request-count 500`}},
		{"seed negative", []string{"profile", "--mock", "--random-seed", "-1"}, []string{`--random-seed "-1": want a whole number, 0 or more: seed of every random choice`}},
		{"number out of range", []string{"profile", "--mock", "--concurrency", "99999999999999999999"}, []string{`--concurrency "99999999999999999999": out of range; want a whole number`, "e.g. --concurrency 8"}},
		{"bad duration", []string{"profile", "--mock", "--coordinator-timeout", "5"}, []string{`--coordinator-timeout "5": want a duration such as 500ms, 30s or 1m30s`, "e.g. --coordinator-timeout 5m0s"}},
		{"bad boolean", []string{"profile", "--mock", "--streaming=maybe"}, []string{`--streaming "maybe": want true or false (--streaming=false; --streaming alone is true)`}},
		{"distribution without a name", []string{"profile", "--mock", "--isl-dist", "abc"}, []string{`--isl-dist "abc": distribution: cannot parse "abc"`, "e.g. --isl-dist normal:512,64"}},
		{"mock distribution", []string{"mock", "--ttft", "abc"}, []string{`--ttft "abc": distribution: cannot parse "abc"`, "want one of fixed,", "e.g. --ttft lognormal:mean=20,stddev=5"}},
		{"command typo", []string{"profiel"}, []string{`unknown command "profiel" (did you mean profile?)`}},
		{"history command typo", []string{"history", "lsit"}, []string{`unknown command "lsit" (did you mean list?)`}},
		{"mock flag typo", []string{"mock", "--tff", "3"}, []string{"unknown flag --tff (did you mean --ttft?)"}},
		{"compare assert without value", []string{"compare", "--assert"}, []string{"--assert needs a value", "identical", "same"}},
		{"no target", []string{"profile"}, []string{"--url is required", "--mock"}},
		{"url and mock", []string{"profile", "--mock", "--url", "http://127.0.0.1:1"}, []string{"--url and --mock conflict"}},
		{"rate and schedule", []string{"profile", "--mock", "--request-rate", "5", "--fixed-schedule", "--input-file", trace}, []string{"--request-rate and --fixed-schedule conflict"}},
		{"impossible distribution", []string{"profile", "--mock", "--isl-dist", "normal:128,-5"}, []string{"--isl-dist", "normal:128,-5"}},
		{"unparsable distribution", []string{"profile", "--mock", "--osl-dist", "banana:3"}, []string{"--osl-dist", "banana"}},
		{"zero mean", []string{"profile", "--mock", "--prompt-input-tokens-mean", "0"}, []string{"--prompt-input-tokens-mean", ">= 1"}},
		{"dist and mean", []string{"profile", "--mock", "--isl-dist", "fixed:10", "--isl", "20"}, []string{"--isl-dist and --prompt-input-tokens-mean"}},
		{"unreadable input", []string{"profile", "--mock", "--input-file", filepath.Join(dir, "nope.jsonl")}, []string{"--input-file", "nope.jsonl", "no such file"}},
		{"client recording as input", []string{"profile", "--mock", "--input-file", clientRec}, []string{"--input-file", "client.jsonl", "a perfgate client recording", "--record-requests"}},
		{"unreadable config", []string{"profile", "--config", filepath.Join(dir, "nope.yaml")}, []string{"--config", "nope.yaml"}},
		{"config typo", []string{"profile", "--mock", "--config", badYAML}, []string{"bad.yaml:2:1: unknown field \"concurency\" (did you mean \"concurrency\"?)"}},
		{"refused url", []string{"profile", "--url", refused, "--request-count", "5"}, []string{"--url " + refused, "connection refused"}},
		{"bad url", []string{"profile", "--url", "ftp://x"}, []string{"--url", "http(s) URL"}},
		{"bad assert", []string{"profile", "--mock", "--assert", "ttft_p99<=soon"}, []string{"--assert", "ttft_p99<=soon", "duration"}},
		{"unknown assert", []string{"profile", "--mock", "--assert", "vibes>=3"}, []string{"--assert", "vibes"}},
		{"assert column", []string{"profile", "--mock", "--assert", "ttft_p99 <= 25Oms"}, []string{`--assert: check: rule "ttft_p99 <= 25Oms", column 13:`}},
		{"bad tokenizer match", []string{"profile", "--mock", "--assert", "tokenizer_match<=-2"}, []string{"--assert", "tokenizer_match<=TOKENS"}},
		{"bad goodput", []string{"profile", "--mock", "--goodput", "ttft=3"}, []string{"--goodput", "ttft:MILLISECONDS"}},
		{"bad endpoint", []string{"profile", "--mock", "--endpoint-type", "telepathy"}, []string{"--endpoint-type", "telepathy"}},
		{"two sweeps", []string{"profile", "--mock", "--sweep-rate", "1,2", "--search-concurrency", "1:4"}, []string{"conflict"}},
		{"search without asserts", []string{"profile", "--mock", "--search-concurrency", "1:8"}, []string{"--search-* needs assertions"}},
		{"bad sweep", []string{"profile", "--mock", "--sweep-concurrency", "1,x"}, []string{"--sweep-concurrency", "x"}},
		{"negative", []string{"profile", "--mock", "--concurrency", "-3"}, []string{"--concurrency", ">= 0"}},
		{"bad tokenizer", []string{"profile", "--mock", "--tokenizer", filepath.Join(dir, "no-such-tokenizer.json"), "--request-count", "2"}, []string{"--tokenizer"}},
		{"compare missing", []string{"compare", "--a", filepath.Join(dir, "a.jsonl"), "--b", filepath.Join(dir, "b.jsonl")}, []string{"--a", "a.jsonl"}},
		{"compare no b", []string{"compare", "--a", trace}, []string{"--b is required"}},
		{"capture no out", []string{"capture"}, []string{"--out is required"}},
		{"demo bad", []string{"demo", "--requests", "0"}, []string{"--requests"}},
		{"demo bad ui", []string{"demo", "--ui-type", "fancy"}, []string{`--ui-type "fancy"`, "dashboard, simple, none"}},
		{"mock bad flag", []string{"mock", "--error-rate", "150"}, []string{"--error-rate"}},
		{"tokenize bad", []string{"tokenize", "--tokenizer", "gpt2"}, []string{"line 1", "invalid JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			art := filepath.Join(t.TempDir(), "artifacts")
			args := tc.args
			if args[0] == "profile" {
				args = append(args, "--artifact-dir", art)
			}
			stdin := ""
			if tc.name == "tokenize bad" {
				stdin = "hello\n"
			}
			code, _, stderr := cliIn(t, stdin, args...)
			if code != ExitInvalidConfig {
				t.Errorf("exit code = %d, want %d (invalid configuration); stderr: %s", code, ExitInvalidConfig, stderr)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "perfgate") {
				t.Errorf("stderr = %q, want one line starting with perfgate", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr = %q, want it to mention %q", stderr, w)
				}
			}
			if _, err := os.Stat(art); err == nil {
				t.Errorf("artifact dir %s exists after invalid input; want nothing written", art)
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestProfileMockPasses(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "--request-count", "40", "--concurrency", "4", "--isl-dist", "normal:64,8",
		"--osl", "16", "--extra-inputs", "ignore_eos:true", "--random-seed", "7", "--artifact-dir", art,
		"--assert", "goodput>=0.9", "--assert", "osl_p50>=16", "--assert", "isl_p50>=32", "--assert", "error_rate<=0.05",
		"--assert", "tokenizer_match") // exact: the client counts each request's ChatML rendering as the mock does
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"perfgate profile: the in-process mock server (chat), concurrency=4, 40 requests, ISL normal:64,8, OSL fixed:16",
		"Time to First Token (ms)", "PASS", "artifacts:", "report:", "PASS tokenizer match"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// not a terminal: plain progress lines on stderr
	if !strings.Contains(errOut, "40/40 requests") {
		t.Errorf("stderr lacks the final progress line:\n%s", errOut)
	}
	for _, f := range []string{reportgen.AIPerfJSONFile, reportgen.AIPerfCSVFile, reportgen.AIPerfJSONLFile, reportgen.RunReportFile,
		reportgen.ManifestFile, "client.jsonl", "server.jsonl", "metrics.json", "scenario.json", "verdicts.txt"} {
		if _, err := os.Stat(filepath.Join(art, f)); err != nil {
			t.Errorf("artifact %s missing: %v", f, err)
		}
	}
	var m reportgen.Manifest
	readJSON(t, filepath.Join(art, reportgen.ManifestFile), &m)
	if m.Seed != 7 || m.Tokenizer == nil || m.Tokenizer.Name == "" || m.Tokenizer.Fingerprint == "" || len(m.Command) == 0 {
		t.Errorf("manifest = %+v, want seed 7, tokenizer with fingerprint, the command", m)
	}
	var agg map[string]json.RawMessage
	readJSON(t, filepath.Join(art, reportgen.AIPerfJSONFile), &agg)
	var rc struct{ Avg float64 }
	json.Unmarshal(agg["request_count"], &rc)
	if rc.Avg != 40 {
		t.Errorf("request_count = %s, want 40", agg["request_count"])
	}
}

func TestProfileAssertionFails(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "--request-count", "20", "--concurrency", "4", "-q", "--artifact-dir", art,
		"--assert", "ttft_p50<=1us", "--assert-isl", "fixed:5000")
	if code != ExitAssertFailed {
		t.Fatalf("exit %d, want %d (assertion failed)\nstdout:\n%s\nstderr:\n%s", code, ExitAssertFailed, out, errOut)
	}
	if !strings.Contains(out, "FAIL TTFT p50") || !strings.Contains(out, "does not fit") || !strings.Contains(out, "FAIL: ") {
		t.Errorf("stdout lacks the failed verdicts:\n%s", out)
	}
	if strings.Contains(out, "Time to First Token (ms)") || errOut != "" {
		t.Errorf("-q printed the table or progress:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if _, err := os.Stat(filepath.Join(art, "verdicts.txt")); err != nil {
		t.Errorf("verdicts.txt missing: %v", err)
	}
}

func TestProfileConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "scenario.yaml")
	os.WriteFile(cfg, []byte(`name: from-yaml
isl: fixed:32
osl: fixed:8
ignore_eos: true
concurrency: 2
requests: 12
seed: 3
objectives:
  bounds:
    - {metric: osl, p: 0.5, min: 8}
`), 0o644)
	art := filepath.Join(dir, "out")
	// flags override the file: 10 requests, not 12
	code, out, errOut := cli(t, "profile", "--mock", "--config", cfg, "--request-count", "10", "-q", "--artifact-dir", art)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var sc struct {
		Name     string
		Requests int
		ISL      string
	}
	readJSON(t, filepath.Join(art, "scenario.json"), &sc)
	if sc.Name != "from-yaml" || sc.Requests != 10 || sc.ISL != "fixed:32" {
		t.Errorf("scenario as run = %+v, want name from-yaml, 10 requests (flag wins), isl fixed:32", sc)
	}
	if !strings.Contains(out, "PASS OSL p50") {
		t.Errorf("the config's objective was not checked:\n%s", out)
	}
}

func TestDemo(t *testing.T) {
	art := filepath.Join(t.TempDir(), "demo")
	code, out, errOut := cli(t, "demo", "--out", art, "--requests", "60", "--ui-type", "none")
	// The demo's own assertions are latency SLOs, which a loaded machine may miss: the
	// test accepts a failed verdict (99) but not a broken run.
	if code == ExitAssertFailed {
		t.Logf("demo verdicts failed on this machine (latency SLOs):\n%s", out)
	} else if code != ExitOK {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"perfgate demo", "perfgate | LLM Metrics", "error rate = 0%", "file://"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo stdout lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(art, reportgen.RunReportFile)); err != nil {
		t.Error(err)
	}
	if strings.Contains(errOut, "req/s") {
		t.Errorf("demo --ui-type none showed progress:\n%s", errOut)
	}
}

func TestCompareCLI(t *testing.T) {
	dir := t.TempDir()
	for i, isl := range []string{"normal:64,8", "normal:80,8"} {
		code, out, errOut := cli(t, "profile", "--mock", "--request-count", "40", "--concurrency", "4", "--isl-dist", isl, "--osl", "8",
			"-q", "--artifact-dir", filepath.Join(dir, fmt.Sprint(i)))
		if code != ExitOK {
			t.Fatalf("profile %d: exit %d\n%s\n%s", i, code, out, errOut)
		}
	}
	html := filepath.Join(dir, "cmp.html")
	code, out, errOut := cli(t, "compare", "--a", filepath.Join(dir, "0"), "--b", filepath.Join(dir, "1", "server.jsonl"),
		"--label-a", "base", "--label-b", "new", "--out", html)
	if code != ExitAssertFailed || !strings.Contains(out, "FAIL different: ISL of base and new differ") {
		t.Fatalf("compare of two ISL distributions: exit %d, want %d and the verdict 'different'\n%s\n%s", code, ExitAssertFailed, out, errOut)
	}
	b, err := os.ReadFile(html)
	if err != nil || !bytes.Contains(b, []byte("perfgate comparison: base vs new")) || !bytes.Contains(b, []byte(`id="vocab"`)) {
		t.Errorf("compare report missing or incomplete (%v)", err)
	}
}

func TestRepeatAndSweep(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := cli(t, "profile", "--mock", "--request-count", "15", "--concurrency", "2", "--osl", "8", "-q",
		"--num-runs", "2", "--artifact-dir", filepath.Join(dir, "rep"))
	if code != ExitOK || !strings.Contains(out, "artifacts:") {
		t.Fatalf("num-runs: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "rep", "run-002", reportgen.ManifestFile)); err != nil {
		t.Error(err)
	}
	code, out, errOut = cli(t, "profile", "--mock", "--request-count", "15", "--osl", "8", "--sweep-concurrency", "1,4",
		"--artifact-dir", filepath.Join(dir, "sw"), "--assert", "osl_p50>=8")
	if code != ExitOK || !strings.Contains(out, "concurrency") || strings.Count(out, "PASS") < 2 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, f := range []string{"sweep.csv", reportgen.SweepReportFile, filepath.Join("concurrency-4", reportgen.RunReportFile)} {
		if _, err := os.Stat(filepath.Join(dir, "sw", f)); err != nil {
			t.Errorf("sweep artifact: %v", err)
		}
	}
	// search: the top of the range passes (the bisection itself is tested in reportgen/sweep)
	code, out, errOut = cli(t, "profile", "--mock", "--request-count", "12", "--osl", "8", "-q",
		"--search-concurrency", "1:8", "--artifact-dir", filepath.Join(dir, "se"), "--assert", "osl_p50>=8")
	if code != ExitOK || !strings.Contains(out, "highest concurrency meeting the assertions: 8") {
		t.Fatalf("search: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestTokenize(t *testing.T) {
	code, out, errOut := cliIn(t, `{"text": "hello world"}`+"\n"+`{"text": ""}`+"\n", "tokenize", "--tokenizer", "gpt2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "{\"ids\":[31373,995],\"count\":2}\n{\"ids\":[],\"count\":0}\n"; out != want {
		t.Errorf("tokenize = %q, want %q", out, want)
	}
	code, out, _ = cli(t, "tokenize", "--count", "--text", "hello world")
	if code != ExitOK || out != "{\"count\":2}\n" {
		t.Errorf("tokenize --count --text = %d %q", code, out)
	}
}

// TestMockAndCapture starts each server command on a free port, sends one request and
// stops it by cancelling the context (as SIGINT does).
func TestMockAndCapture(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(dir string, port int) []string
		file string
	}{
		{"mock", func(dir string, port int) []string {
			return []string{"mock", "--port", fmt.Sprint(port), "--record-requests", filepath.Join(dir, "rec.jsonl")}
		}, "rec.jsonl"},
		{"capture", func(dir string, port int) []string {
			return []string{"capture", "--port", fmt.Sprint(port), "--out", filepath.Join(dir, "cap.jsonl")}
		}, "cap.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			port := freePort(t)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int, 1)
			var out, errb bytes.Buffer
			go func() { done <- runWith(ctx, tc.args(dir, port), nil, &out, &errb) }()
			url := fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", port)
			body := `{"model":"mock-model","messages":[{"role":"user","content":"hi"}],"max_tokens":3}` // perfgate mock serves its models only
			var resp *http.Response
			var err error
			for range 100 {
				resp, err = http.Post(url, "application/json", strings.NewReader(body))
				if err == nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				cancel()
				t.Fatalf("server never answered: %v (stderr %s)", err, errb.String())
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("status %d, want 200", resp.StatusCode)
			}
			cancel()
			select {
			case code := <-done:
				if code != ExitOK {
					t.Errorf("exit %d after cancel, want 0; stderr: %s", code, errb.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatal("server did not stop after cancel")
			}
			if b, err := os.ReadFile(filepath.Join(dir, tc.file)); err != nil || len(b) == 0 {
				t.Errorf("%s: %v (%d bytes), want one record", tc.file, err, len(b))
			}
		})
	}
}

// TestProfileEmbeddings: streaming is on by default only for endpoints that stream.
func TestProfileEmbeddings(t *testing.T) {
	code, out, errOut := cli(t, "profile", "--mock", "--endpoint-type", "embeddings", "--request-count", "5", "-q",
		"--artifact-dir", filepath.Join(t.TempDir(), "emb"))
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = cli(t, "profile", "--mock", "--endpoint-type", "embeddings", "--streaming", "--request-count", "5", "-q",
		"--artifact-dir", filepath.Join(t.TempDir(), "emb2"))
	if code != ExitInvalidConfig || !strings.Contains(errOut, "does not stream") {
		t.Errorf("embeddings with --streaming: exit %d, %q; want 2 and a message that it does not stream", code, errOut)
	}
}

// TestProfileAllFail: when no request succeeds the run is a runtime error (exit 1),
// with the first error named, and the artifacts are still written for diagnosis.
func TestProfileAllFail(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "faulty.json")
	os.WriteFile(cfg, []byte(`{"requests": 6, "mock": {"faults": {"error_rate": 1, "error_statuses": [503]}}}`), 0o644)
	art := filepath.Join(dir, "out")
	code, out, errOut := cli(t, "profile", "--mock", "--config", cfg, "-q", "--artifact-dir", art)
	if code != ExitRuntime || !strings.Contains(errOut, "no request succeeded") || !strings.Contains(errOut, "503") {
		t.Errorf("exit %d, stderr %q; want 1 and the first error (503)\nstdout:\n%s", code, errOut, out)
	}
	if _, err := os.Stat(filepath.Join(art, reportgen.RunReportFile)); err != nil {
		t.Errorf("no report for the failed run: %v", err)
	}
}

// TestProfileInterrupted: a profile stopped by SIGINT (its context cancelled) exits
// 130 with one line saying so, and leaves its partial exports marked was_cancelled.
func TestProfileInterrupted(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "slow.yaml")
	os.WriteFile(cfg, []byte("requests: 100000\nconcurrency: 2\nosl: fixed:4\nmock: {ttft_ms: \"fixed:50\"}\n"), 0o644)
	art := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(700*time.Millisecond, cancel) // when does not matter: any point mid-run
	var out, errb bytes.Buffer
	code := runWith(ctx, []string{"profile", "--mock", "--config", cfg, "-q", "--artifact-dir", art}, nil, &out, &errb)
	if code != ExitInterrupted || !strings.Contains(errb.String(), "interrupted after") || strings.Count(errb.String(), "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want %d and one line saying it was interrupted\nstdout:\n%s", code, errb.String(), ExitInterrupted, out.String())
	}
	var agg map[string]json.RawMessage
	readJSON(t, filepath.Join(art, reportgen.AIPerfJSONFile), &agg)
	if got := string(agg["was_cancelled"]); got != "true" {
		t.Errorf("was_cancelled = %s, want true", got)
	}
	if _, err := os.Stat(filepath.Join(art, reportgen.ManifestFile)); err != nil {
		t.Errorf("manifest of the partial run: %v", err)
	}
}
