package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/record"
)

// badServer is an OpenAI-compatible server on 127.0.0.1 that misbehaves on purpose:
// each request is answered by behave(n) for its sequence number n (0, 1, …). It
// writes raw HTTP/1.1 so that it can do what no well-behaved library would: hang,
// trickle, reset. Every response closes its connection.
type badServer struct {
	t      *testing.T
	ln     net.Listener
	URL    string
	behave func(n int) string
	seq    atomic.Int64
	done   chan struct{}
	mu     sync.Mutex
	conns  map[net.Conn]bool
	killed atomic.Bool
}

func newBadServer(t *testing.T, behave func(n int) string) *badServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &badServer{t: t, ln: ln, URL: "http://" + ln.Addr().String(), behave: behave, done: make(chan struct{}), conns: map[net.Conn]bool{}}
	go s.serve()
	t.Cleanup(func() { s.kill(); close(s.done) })
	return s
}

func (s *badServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.killed.Load() {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.mu.Unlock()
		go s.handle(c)
	}
}

// kill stops the server as a crash would: the listener and every connection close.
func (s *badServer) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.killed.Swap(true) {
		return
	}
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
}

const sseChunk = `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" hello"}}]}` + "\n\n"

func (s *badServer) handle(c net.Conn) {
	defer c.Close()
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return // the preflight's bare connect
	}
	_, _ = req.Body.Read(make([]byte, 1<<16))
	if req.URL.Path == "/v1/models" {
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 49\r\nConnection: close\r\n\r\n"+`{"object":"list","data":[{"id":"m","object":"x"}]}`[:49])
		return
	}
	n := int(s.seq.Add(1) - 1)
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
	wait := func(d time.Duration) {
		select {
		case <-s.done:
		case <-time.After(d):
		}
	}
	switch s.behave(n) {
	case "ok":
		fmt.Fprint(c, head+strings.Repeat(sseChunk, 4)+"data: [DONE]\n\n")
	case "500":
		body := `{"error":{"message":"engine overloaded","code":500}}`
		fmt.Fprintf(c, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	case "error200":
		body := `{"error":{"message":"model crashed","type":"server_error"}}`
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	case "hang": // the first token, then nothing
		fmt.Fprint(c, head+sseChunk)
		wait(time.Minute)
	case "noheaders":
		wait(time.Minute)
	case "trickle": // one byte a second
		fmt.Fprint(c, head)
		for _, b := range []byte(strings.Repeat(sseChunk, 4)) {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			wait(time.Second)
		}
	case "reset": // a token, then RST
		fmt.Fprint(c, head+sseChunk)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	case "kill":
		s.kill()
	}
}

// gateRun runs `perfgate profile` against url with the flags given and returns the exit
// code, the output and the client records it left.
func gateRun(t *testing.T, url string, flags ...string) (int, string, []record.Client, time.Duration) {
	t.Helper()
	art := filepath.Join(t.TempDir(), "out")
	args := append([]string{"profile", "--url", url, "--model", "m", "--tokenizer", "gpt2", "-q", "--artifact-dir", art}, flags...)
	start := time.Now()
	code, out, errOut := cli(t, args...)
	took := time.Since(start)
	f, err := os.Open(filepath.Join(art, perfrun.ClientFile))
	if err != nil {
		t.Fatalf("exit %d: no client records: %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	defer f.Close()
	recs, err := record.ReadClient(f)
	if err != nil {
		t.Fatal(err)
	}
	return code, out + errOut, recs, took
}

// kinds counts records by error kind ("" = ok).
func kinds(recs []record.Client) map[string]int {
	m := map[string]int{}
	for _, r := range recs {
		m[r.ErrorKind]++
	}
	return m
}

// TestGateMisbehavingServers: against servers that fail in each way a real one does,
// the gate never passes, every request leaves one record of the right kind, and a
// hung server cannot hold the run past its time bounds.
func TestGateMisbehavingServers(t *testing.T) {
	testutil.Long(t) // 7–16 s: make test stays under 10 minutes on a fresh 2-core machine
	half := func(bad string) func(int) string {
		return func(n int) string {
			if n%2 == 1 {
				return bad
			}
			return "ok"
		}
	}
	all := func(b string) func(int) string { return func(int) string { return b } }
	for _, tc := range []struct {
		name     string
		behave   func(int) string
		flags    []string
		code     int
		want     map[string]int // records by kind
		text     string         // in the output
		maxSpan  time.Duration  // bound on the last record's Done (0 = none)
		anyKinds []string       // instead of want: every record is one of these
	}{
		{name: "half 500", behave: half("500"), flags: []string{"--request-count", "10", "--concurrency", "2"}, code: ExitAssertFailed,
			want: map[string]int{"": 5, record.ErrHTTPStatus: 5}, text: "FAIL error rate = 50% (5 of 10 requests failed), want none"},
		{name: "half 200 with an error body", behave: half("error200"), flags: []string{"--request-count", "10"}, code: ExitAssertFailed,
			want: map[string]int{"": 5, record.ErrErrorBody: 5}, text: "error_body (first: #"},
		{name: "opted out", behave: half("500"), flags: []string{"--request-count", "10", "--assert", "error_rate<=1"}, code: ExitOK,
			want: map[string]int{"": 5, record.ErrHTTPStatus: 5}, text: "PASS error rate = 50%"},
		{name: "error_rate<=0 is a verdict", behave: all("ok"), flags: []string{"--request-count", "4", "--assert", "error_rate<=0"}, code: ExitOK,
			want: map[string]int{"": 4}, text: "PASS error rate = 0%"},
		{name: "error_rate<=0% fails on one error", behave: func(n int) string { return map[bool]string{true: "500", false: "ok"}[n == 2] },
			flags: []string{"--request-count", "6", "--assert", "error_rate<=0%"}, code: ExitAssertFailed,
			want: map[string]int{"": 5, record.ErrHTTPStatus: 1}},
		{name: "hang after the first token", behave: all("hang"), flags: []string{"--request-count", "3", "--idle-timeout-seconds", "0.3"}, code: ExitRuntime,
			want: map[string]int{record.ErrTimeout: 3}, text: "no request succeeded", maxSpan: 3 * (300*time.Millisecond + time.Second)},
		{name: "never sends headers", behave: all("noheaders"), flags: []string{"--request-count", "2", "--idle-timeout-seconds", "0.3"}, code: ExitRuntime,
			want: map[string]int{record.ErrTimeout: 2}, text: "idle timeout waiting for the response headers", maxSpan: 2 * (300*time.Millisecond + time.Second)},
		{name: "hung server and a duration", behave: all("noheaders"),
			flags: []string{"--benchmark-duration", "1", "--benchmark-grace-period", "1", "--concurrency", "3", "--idle-timeout-seconds", "0"}, code: ExitRuntime,
			want: map[string]int{record.ErrCancelled: 3}, text: "grace period", maxSpan: 1*time.Second + 1*time.Second + time.Second},
		{name: "1 byte/s trickle", behave: all("trickle"), flags: []string{"--request-count", "2", "--concurrency", "2", "--request-timeout-seconds", "1.5"}, code: ExitRuntime,
			want: map[string]int{record.ErrTimeout: 2}, text: "total timeout", maxSpan: 1500*time.Millisecond + time.Second},
		{name: "reset mid-stream", behave: half("reset"), flags: []string{"--request-count", "6"}, code: ExitAssertFailed,
			want: map[string]int{"": 3, record.ErrReset: 3}},
		{name: "killed mid-run", behave: func(n int) string {
			if n == 5 {
				return "kill"
			}
			return "ok"
		}, flags: []string{"--request-count", "20", "--concurrency", "1"}, code: ExitAssertFailed,
			anyKinds: []string{"", record.ErrConnect, record.ErrReset}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newBadServer(t, tc.behave)
			code, out, recs, _ := gateRun(t, s.URL, tc.flags...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, out)
			}
			if tc.text != "" && !strings.Contains(out, tc.text) {
				t.Errorf("output lacks %q:\n%s", tc.text, out)
			}
			got := kinds(recs)
			if tc.anyKinds != nil {
				n := 0
				for _, k := range tc.anyKinds {
					n += got[k]
				}
				if n != len(recs) || len(recs) != 20 || got[""] != 5 {
					t.Errorf("records by kind %v (%d records); want 20, 5 ok, the rest of kinds %q", got, len(recs), tc.anyKinds)
				}
			} else if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("records by kind %v, want %v", got, tc.want)
			}
			if tc.maxSpan > 0 {
				for _, r := range recs {
					if r.Done > tc.maxSpan {
						t.Errorf("record %d done at %v into the run; the time bounds allow %v", r.Index, r.Done, tc.maxSpan)
					}
				}
			}
		})
	}
}

// TestGateMaxErrorRateZeroInFile: a scenario file's max_error_rate: 0 declared alone
// is the gate (no failed request), as the zero value is.
func TestGateMaxErrorRateZeroInFile(t *testing.T) {
	s := newBadServer(t, func(n int) string { return map[bool]string{true: "500", false: "ok"}[n == 1] })
	cfg := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(cfg, []byte("requests: 4\nobjectives:\n  max_error_rate: 0\n"), 0o644)
	code, out, recs, _ := gateRun(t, s.URL, "--config", cfg)
	if code != ExitAssertFailed || !strings.Contains(out, "FAIL error rate = 25%") || len(recs) != 4 {
		t.Errorf("exit %d with %d records; want 99, 4 records and a failed error-rate verdict:\n%s", code, len(recs), out)
	}
}

// TestGateNoRequestCompleted: a run that measured nothing fails (exit 1, the reason).
func TestGateNoRequestCompleted(t *testing.T) {
	s := newBadServer(t, func(int) string { return "ok" })
	art := filepath.Join(t.TempDir(), "out")
	code, out, errOut := cli(t, "profile", "--url", s.URL, "--model", "m", "-q", "--artifact-dir", art, "--benchmark-duration", "0.000000001")
	if code != ExitRuntime || !strings.Contains(errOut, "no request was completed") {
		t.Errorf("exit %d, stderr %q; want 1 saying nothing was measured\n%s", code, errOut, out)
	}
}

// TestGateLimitsBeforeAnyRequest: settings no run can carry out are invalid
// configuration (exit 2) found before a request is sent, naming the flag.
func TestGateLimitsBeforeAnyRequest(t *testing.T) {
	s := newBadServer(t, func(int) string { return "ok" })
	dir := t.TempDir()
	var trace, payloads strings.Builder
	for i := 1; i <= 600; i++ {
		if i == 500 {
			trace.WriteString(`{"timestamp": 5, "input_length": oops}` + "\n")
			payloads.WriteString(`{"messages": [}` + "\n")
			continue
		}
		fmt.Fprintf(&trace, `{"timestamp": %d, "input_length": 10, "output_length": 5, "hash_ids": [%d]}`+"\n", i, i)
		payloads.WriteString(`{"messages": [{"role": "user", "content": "hi"}]}` + "\n")
	}
	badTrace, badPayloads := filepath.Join(dir, "trace.jsonl"), filepath.Join(dir, "payloads.jsonl")
	os.WriteFile(badTrace, []byte(trace.String()), 0o644)
	os.WriteFile(badPayloads, []byte(payloads.String()), 0o644)
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--input-file", badTrace, "--custom-dataset-type", "mooncake"}, badTrace + ":500: invalid character"},
		{[]string{"--input-file", badPayloads, "--custom-dataset-type", "payloads"}, badPayloads + ":500: not a JSON object"},
		{[]string{"--isl", "1e12"}, "no server takes more than"},
		{[]string{"--osl-dist", "fixed:20000000"}, "no server takes more than"},
		{[]string{"--request-count", "0"}, "--request-count 0"},
		{[]string{"--concurrency", "100000000", "--request-count", "5"}, "concurrency 100000000"},
		{[]string{"--isl-dist", "mix:0.6*fixed:10+0.6*fixed:20"}, "sum to 1"},
		{[]string{"--request-timeout-seconds", "0"}, "--request-timeout-seconds 0"},
	} {
		profileInvalid(t, s, tc.flags, tc.want)
	}
}

// profileInvalid runs profile against s with flags and checks that it is rejected as
// invalid configuration mentioning want, before any request reached s and without
// leaving an artifact directory; it returns stderr.
func profileInvalid(t *testing.T, s *badServer, flags []string, want string) string {
	t.Helper()
	art := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code, out, errOut := cliCtx(ctx, append([]string{"profile", "--url", s.URL, "--model", "m", "-q", "--artifact-dir", art}, flags...)...)
	if code != ExitInvalidConfig || !strings.Contains(errOut, want) {
		t.Errorf("%v: exit %d, stderr %q; want %d mentioning %q\n%s", flags, code, errOut, ExitInvalidConfig, want, out)
	}
	if n := s.seq.Load(); n != 0 {
		t.Errorf("%v: %d requests reached the server; want none", flags, n)
	}
	if _, err := os.Stat(art); err == nil {
		t.Errorf("%v: an artifact directory was left behind", flags)
	}
	return errOut
}

func cliCtx(ctx context.Context, args ...string) (int, string, string) {
	var out, errb strings.Builder
	code := runWith(ctx, args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestSecretsNeverWritten plants credentials by --api-key and by -H headers (in both
// flag forms) and greps every artifact and the output for them.
func TestSecretsNeverWritten(t *testing.T) {
	secrets := []string{"sk-flag-0001", "sk-bearer-0002", "xapikey-0003", "tok-custom-0004", "cookie-0005"}
	art := filepath.Join(t.TempDir(), "out")
	code, out, errOut := cli(t, "profile", "--mock", "--request-count", "3", "--artifact-dir", art,
		"--api-key", secrets[0], "-H", "Authorization: Bearer "+secrets[1], "--header=X-Api-Key: "+secrets[2],
		"-H", "X-Custom-Token: "+secrets[3], "--header", "Cookie: session="+secrets[4], "-H", "X-Trace: visible-0006")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	n := 0
	visible := false
	err := filepath.Walk(art, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s carries the secret %q", filepath.Base(p), s)
			}
		}
		visible = visible || strings.Contains(string(b), "visible-0006")
		return nil
	})
	if err != nil || n < 5 {
		t.Fatalf("walked %d artifacts: %v", n, err)
	}
	if !visible {
		t.Errorf("no artifact records the non-credential header X-Trace: the test cannot see headers at all")
	}
	for _, s := range secrets {
		if strings.Contains(out+errOut, s) {
			t.Errorf("the output carries the secret %q", s)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	got := strings.Join(redactArgs([]string{"perfgate", "profile", "--api-key", "k1", "--api-key=k2", "-H", "Authorization: Bearer k3",
		"--header=X-Session-Token: k4", "-H", "Accept: text/plain", "--url", "http://x"}), " ")
	want := "perfgate profile --api-key [redacted] --api-key=[redacted] -H Authorization: [redacted] --header=X-Session-Token: [redacted] -H Accept: text/plain --url http://x"
	if got != want {
		t.Errorf("redactArgs =\n %s\nwant\n %s", got, want)
	}
}

// TestCrashIsInternalError: a panic on any goroutine ends perfgate with exit 1 and
// "internal error", not Go's exit 2 (which would read as invalid configuration), and
// the stack is kept in the artifact directory.
func TestCrashIsInternalError(t *testing.T) {
	art := t.TempDir()
	cmd := cliCmd([]string{panicTestEnv + "=1"}, "profile", "--mock", "--artifact-dir", art, "-q")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if code != ExitRuntime || !strings.Contains(stderr.String(), "perfgate: internal error") {
		t.Fatalf("exit %d (%v); want %d with an internal-error line:\n%s", code, err, ExitRuntime, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(art, CrashFile))
	if err != nil || !strings.Contains(string(b), "goroutine") {
		t.Errorf("crash stack in the artifact directory: %v\n%s", err, b)
	}
}

// TestSecondInterruptAborts: two SIGINTs in a row through the supervisor end the run
// with 130 and keep the records already written. Whether the second one arrives
// before the export has finished is up to the scheduler, so this checks the exit code
// and the records of either path, not that the export was cut short.
func TestSecondInterruptAborts(t *testing.T) {
	art := filepath.Join(t.TempDir(), "out")
	cmd := cliCmd(nil, "profile", "--mock", "--artifact-dir", art, "-q", "--request-rate", "200", "--benchmark-duration", "600", "--osl", "4")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	client := filepath.Join(art, perfrun.ClientFile)
	for deadline := time.Now().Add(time.Minute); countLines(client) < 20; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no records after a minute:\n%s", stderr.String())
		}
	}
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Errorf("exit %d after two interrupts; want %d\n%s", code, ExitInterrupted, stderr.String())
	}
	if n := countLines(client); n < 20 {
		t.Errorf("%d records left after the abort; want the >= 20 written before it", n)
	}
}

// TestReportRegateKeepsErrorGate: re-gating a run with `perfgate report DIR --goodput …`
// (no error rule) still fails on its failed requests, as profile would.
func TestReportRegateKeepsErrorGate(t *testing.T) {
	s := newBadServer(t, func(n int) string { return map[bool]string{true: "500", false: "ok"}[n%3 == 0] })
	art := filepath.Join(t.TempDir(), "out")
	if code, out, errOut := cli(t, "profile", "--url", s.URL, "--model", "m", "-q", "--artifact-dir", art, "--request-count", "9"); code != ExitAssertFailed {
		t.Fatalf("profile of a run with errors: exit %d, want %d\n%s%s", code, ExitAssertFailed, out, errOut)
	}
	code, out, errOut := cli(t, "report", art, "--goodput", "time_to_first_token:10000")
	if code != ExitAssertFailed || !strings.Contains(out+errOut, "error rate") {
		t.Errorf("report --goodput on a run with 3 failed requests: exit %d; want %d with the error-rate verdict\n%s%s", code, ExitAssertFailed, out, errOut)
	}
}

// TestSupervisedCommands: commands that run load, serve or write artifacts run under
// the supervisor; tokenize (which reads the terminal), analyze-trace (which only reads a
// file) and the informational ones do not.
func TestSupervisedCommands(t *testing.T) {
	for cmd, want := range map[string]bool{"profile": true, "mock": true, "capture": true, "report": true, "merge": true, "demo": true,
		"tokenize": false, "analyze-trace": false, "version": false, "help": false} {
		if got := supervised([]string{cmd}); got != want {
			t.Errorf("supervised(%s) = %v, want %v", cmd, got, want)
		}
	}
	if supervised(nil) {
		t.Errorf("supervised() with no command = true")
	}
}

// TestWaitForModelFlag: --wait-for-model-timeout waits for a mock still loading its
// model (/v1/models and inference answer 503 for its first second) and then runs
// cleanly; waiting for a model the server never lists ends in exit 2 at the timeout.
func TestWaitForModelFlag(t *testing.T) {
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		var o, e strings.Builder
		done <- runWith(ctx, []string{"mock", "--port", fmt.Sprint(port), "--fast", "--models-ready-delay-seconds", "1", "--inference-ready-delay-seconds", "1"}, nil, &o, &e)
	}()
	t.Cleanup(func() { cancel(); <-done })
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("mock did not start")
		}
	}
	art := filepath.Join(t.TempDir(), "out")
	code, out, errOut := cli(t, "profile", "--url", url, "-q", "--artifact-dir", art, "--request-count", "3", "--wait-for-model-timeout", "30")
	if code != ExitOK {
		t.Errorf("with --wait-for-model-timeout: exit %d, want 0\n%s%s", code, out, errOut)
	}
	code, _, errOut = cli(t, "profile", "--url", url, "-q", "--artifact-dir", filepath.Join(t.TempDir(), "x"), "--request-count", "3", "--wait-for-model-timeout", "0.3",
		"--model", "not-this-one")
	if code != ExitInvalidConfig || !strings.Contains(errOut, "not ready after") && !strings.Contains(errOut, "not served") {
		t.Errorf("waiting for a model the server never lists: exit %d, stderr %q; want 2 saying so", code, errOut)
	}
}

// TestExportPrefixAndLevel: --profile-export-prefix names the AIPerf exports,
// --export-level summary leaves out the per-request JSONL, `perfgate report` keeps
// both choices (they are in scenario.json), and raw is refused.
func TestExportPrefixAndLevel(t *testing.T) {
	art := filepath.Join(t.TempDir(), "out")
	if code, out, errOut := cli(t, "profile", "--mock", "-q", "--artifact-dir", art, "--request-count", "3", "--profile-export-prefix", "nightly", "--export-level", "summary"); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	check := func(when string) {
		for name, want := range map[string]bool{"nightly_aiperf.json": true, "nightly_aiperf.csv": true, "nightly.jsonl": false,
			"profile_export_aiperf.json": false, "profile_export.jsonl": false, "client.jsonl": true} {
			if _, err := os.Stat(filepath.Join(art, name)); (err == nil) != want {
				t.Errorf("%s: %s exists = %v, want %v", when, name, err == nil, want)
			}
		}
	}
	check("profile")
	if code, out, errOut := cli(t, "report", art); code != ExitOK {
		t.Fatalf("report: exit %d\n%s%s", code, out, errOut)
	}
	check("report")
	old := filepath.Join(t.TempDir(), "old")
	if code, out, errOut := cli(t, "profile", "--mock", "-q", "--artifact-dir", old, "--request-count", "2", "--profile-export-file", "weekly.json"); code != ExitOK {
		t.Fatalf("--profile-export-file: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(old, "weekly_aiperf.json")); err != nil {
		t.Errorf("--profile-export-file weekly.json: %v; want weekly_aiperf.json", err)
	}
	if code, _, errOut := cli(t, "profile", "--mock", "-q", "--artifact-dir", filepath.Join(t.TempDir(), "x"), "--export-level", "raw"); code != ExitInvalidConfig || !strings.Contains(errOut, "raw") {
		t.Errorf("--export-level raw: exit %d, stderr %q; want 2", code, errOut)
	}
}
