//go:build unix

package serverproc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

// start starts s with its logs in a fresh directory, and stops it at the end of the
// test whatever happened.
func start(t *testing.T, s Server) (*Process, string) {
	t.Helper()
	dir := t.TempDir()
	p, err := s.Start(dir)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	return p, dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A server that answers 503 for a while is waited for; once ready it serves, Stop
// ends it with SIGTERM, and its port is free again.
func TestStartWaitReadyStop(t *testing.T) {
	s := standinServer(t, "B", "serve", standinReadyAfter+"=600ms")
	s.Cmd, s.Args = strings.Join([]string{shellQuote(os.Args[0])}, " "), nil // through sh -c
	p, dir := start(t, s)
	if err := p.WaitReady(t.Context()); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	addr, _ := hostPort(s.URL)
	if !accepts(addr) {
		t.Fatalf("ready, but %s refuses connections", addr)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned, but Exited is not closed")
	}
	if err := p.Err(); err != nil {
		t.Errorf("Err() after Stop = %v, want nil: stopping is not exiting on its own", err)
	}
	if accepts(addr) {
		t.Errorf("%s still accepts connections after Stop returned nil", addr)
	}
	stdout, stderr := p.Logs()
	if filepath.Dir(stdout) != dir || filepath.Base(stdout) != "server-B.stdout.log" || filepath.Base(stderr) != "server-B.stderr.log" {
		t.Errorf("Logs() = %s, %s; want server-B.stdout.log and server-B.stderr.log in %s", stdout, stderr, dir)
	}
	out := readFile(t, stdout)
	for _, want := range []string{"perfgate: ", "starting server B", "standin: listening on", "ready after", "SIGTERM", "stopped: signal: terminated"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout log lacks %q:\n%s", want, out)
		}
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop = %v, want the first's nil", err)
	}
}

// A server that exits before it is ready: WaitReady says so, naming it, with its exit
// status and the last lines of its stderr.
func TestExitBeforeReady(t *testing.T) {
	p, _ := start(t, standinServer(t, "A", "exit"))
	err := p.WaitReady(t.Context())
	if !errors.Is(err, ErrExited) {
		t.Fatalf("WaitReady = %v, want ErrExited", err)
	}
	msg := err.Error()
	first, _, _ := strings.Cut(msg, "\n")
	if !strings.HasPrefix(first, "serverproc: server A exited before it was ready: exit status 3, ") {
		t.Errorf("first line %q: want it to start with what happened, said once", first)
	}
	for _, want := range []string{"server A exited before it was ready", "exit status 3"} {
		if !strings.Contains(first, want) {
			t.Errorf("first line %q lacks %q", first, want)
		}
	}
	for _, want := range []string{"stderr (last 2 lines):", "standin: loading weights", "standin: out of memory", "server-A.stderr.log"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop of an exited server = %v, want nil", err)
	}
}

// A server that never becomes ready: an error after the ready timeout naming it and
// the probe's last answer.
func TestNotReadyWithinTimeout(t *testing.T) {
	s := standinServer(t, "B", "serve", standinReadyAfter+"=1h")
	s.ReadyTimeout = 700 * time.Millisecond
	p, _ := start(t, s)
	// Listening first, so the probe's last answer is the 503 however slowly the
	// stand-in started.
	addr, _ := hostPort(s.URL)
	for !accepts(addr) {
		select {
		case <-p.Exited():
			t.Fatalf("the stand-in exited: %v", p.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	err := p.WaitReady(t.Context())
	if !errors.Is(err, ErrNotReady) {
		t.Fatalf("WaitReady = %v, want ErrNotReady", err)
	}
	for _, want := range []string{"server B not ready after 700ms", "GET " + s.URL + "/health", "answered 503"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// A ready command replaces the HTTP probe; a cancelled context ends the wait with the
// context's error.
func TestReadyCmdAndCancel(t *testing.T) {
	s := standinServer(t, "", "serve")
	flag := filepath.Join(t.TempDir(), "ready")
	s.ReadyCmd = "test -e " + shellQuote(flag)
	p, _ := start(t, s)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := p.WaitReady(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitReady with the flag file absent = %v, want the context's deadline", err)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitReady(t.Context()); err != nil {
		t.Fatalf("WaitReady with the flag file there = %v", err)
	}
	if p.Name() != "server" {
		t.Errorf("Name() of an unnamed server = %q, want server", p.Name())
	}
}

// A server that exits while serving closes Exited, and Err names it, its status and
// its stderr.
func TestExitWhileServing(t *testing.T) {
	s := standinServer(t, "B", "serve")
	p, _ := start(t, s)
	if err := p.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := p.Err(); err != nil {
		t.Fatalf("Err() while running = %v, want nil", err)
	}
	if resp, err := http.Get(s.URL + "/crash"); err == nil {
		resp.Body.Close()
	}
	select {
	case <-p.Exited():
	case <-time.After(time.Minute):
		t.Fatal("Exited not closed a minute after the server crashed")
	}
	err := p.Err()
	if !errors.Is(err, ErrExited) {
		t.Fatalf("Err() = %v, want ErrExited", err)
	}
	for _, want := range []string{"server B exited while serving: exit status 3", "illegal memory access"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// A server that exited on its own just before Stop, while wait had not kept why yet,
// is reported as exited while serving, not as stopped. At load 20 a crashed build's run
// finished its requests (connection refused) before wait ran, and the A/B gate said
// "error rate 96.7%" (exit 99) instead of "server B exited while serving" (exit 1).
// Wait is held (a machine too busy to run it) before it reaps the process (a zombie),
// or after (its goroutine waits for a processor once the system call returns; the pid
// is gone from /proc).
func TestStopFindsAnExitWaitHasNotKept(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("an exited process not yet waited for is told from /proc on Linux only")
	}
	gone := func(pid int) bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/stat")
		return errors.Is(err, fs.ErrNotExist)
	}
	for _, c := range []struct {
		name  string
		hook  *func()
		until func(pid int) bool // the crashed server is in the state the case holds it in
	}{
		{"unreaped", &waitHook, exitedOrReaped},
		{"reaped", &reapedHook, gone},
	} {
		t.Run(c.name, func(t *testing.T) {
			release, once := make(chan struct{}), sync.Once{}
			free := func() { once.Do(func() { close(release) }) }
			*c.hook = func() { <-release }
			s := standinServer(t, "B", "serve")
			p, _ := start(t, s)
			t.Cleanup(func() { free(); _ = p.Stop(); *c.hook = nil })
			if err := p.WaitReady(t.Context()); err != nil {
				t.Fatal(err)
			}
			if resp, err := http.Get(s.URL + "/crash"); err == nil {
				resp.Body.Close()
			}
			for deadline := time.Now().Add(time.Minute); !c.until(p.Pid()); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the crashed server is not %s a minute later", c.name)
				}
			}
			go func() {
				time.Sleep(50 * time.Millisecond) // Stop has begun by now, unless the machine is very busy
				free()
			}()
			if err := p.Stop(); err != nil {
				t.Fatalf("Stop = %v, want nil", err)
			}
			err := p.Err()
			if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "server B exited while serving: exit status 3") {
				t.Fatalf("Err() after Stop = %v, want ErrExited: server B exited while serving: exit status 3", err)
			}
		})
	}
}

// A server that ignores SIGTERM is killed after the grace.
func TestIgnoresSIGTERMKilledAfterGrace(t *testing.T) {
	s := standinServer(t, "A", "ignore-term")
	s.StopGrace = 300 * time.Millisecond
	p, _ := start(t, s)
	if err := p.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop = %v, want nil (SIGKILL stops it, and the port is free)", err)
	}
	if err := syscall.Kill(p.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(%d, 0) after Stop = %v, want ESRCH: the process is gone", p.Pid(), err)
	}
	out, _ := p.Logs()
	log := readFile(t, out)
	for _, want := range []string{"still running 300ms after SIGTERM: SIGKILL", "stopped: signal: killed"} {
		if !strings.Contains(log, want) {
			t.Errorf("stdout log lacks %q:\n%s", want, log)
		}
	}
}

// A server whose daemonized child keeps the port after the group is stopped: Stop's
// error names the server and the port.
func TestKeepsPortAfterStop(t *testing.T) {
	defer func(d time.Duration) { portWait = d }(portWait)
	portWait = 500 * time.Millisecond
	holder := filepath.Join(t.TempDir(), "holder.pid")
	s := standinServer(t, "B", "keep-port", standinHolder+"="+holder)
	p, _ := start(t, s)
	if err := p.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(holder); err == nil {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	err := p.Stop()
	if !errors.Is(err, ErrPortHeld) {
		t.Fatalf("Stop = %v, want ErrPortHeld", err)
	}
	addr, _ := hostPort(s.URL)
	if want := "server B stopped, but " + addr + " still accepts connections"; !strings.Contains(err.Error(), want) {
		t.Errorf("error lacks %q:\n%v", want, err)
	}
}

// A port that accepts connections before the server starts is refused: the server
// there would answer in the new one's place.
func TestPortInUseBeforeStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := Server{Name: "A", Args: []string{"true"}, URL: "http://" + ln.Addr().String()}
	_, err = s.Start(t.TempDir())
	if !errors.Is(err, ErrPortHeld) || !strings.Contains(err.Error(), "server A: "+ln.Addr().String()+" already accepts connections") {
		t.Errorf("Start with the port taken = %v, want ErrPortHeld naming A and the address", err)
	}
}

// A command that cannot start is an error naming the server.
func TestStartFails(t *testing.T) {
	s := Server{Name: "A", Args: []string{filepath.Join(t.TempDir(), "no-such-server")}, URL: "http://" + testutil.FreeAddr(t)}
	if _, err := s.Start(t.TempDir()); !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "server A: could not start") {
		t.Errorf("Start of a missing program = %v, want ErrExited naming A", err)
	}
}

// Secrets given to a server (an environment variable, an --api-key in its command
// line) reach no log file and no error or printed form of the server.
func TestSecretsNeverWritten(t *testing.T) {
	const envSecret, argSecret = "hf_envSECRET123", "sk-argSECRET456"
	s := standinServer(t, "A", "exit", "HF_TOKEN="+envSecret)
	s.Cmd, s.Args = shellQuote(os.Args[0])+" --api-key "+argSecret+" -H 'Authorization: Bearer "+argSecret+"'", nil
	p, dir := start(t, s)
	err := p.WaitReady(t.Context())
	if err == nil {
		t.Fatal("WaitReady of an exiting server = nil")
	}
	_ = p.Stop()
	texts := map[string]string{"error": err.Error(), "String": s.String(), "%v": fmt.Sprintf("%v", s), "%+v": fmt.Sprintf("%+v", &s), "%#v": fmt.Sprintf("%#v", s)}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			texts[path] = readFile(t, path)
		}
		return nil
	})
	for where, text := range texts {
		for _, secret := range []string{envSecret, argSecret} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds the secret %s:\n%s", where, secret, text)
			}
		}
	}
	if log := readFile(t, filepath.Join(dir, "server-A.stdout.log")); !strings.Contains(log, "HF_TOKEN="+Redacted) || !strings.Contains(log, "--api-key "+Redacted) {
		t.Errorf("stdout log does not show the command with its secrets redacted:\n%s", log)
	}
}
