package serverproc

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A Process is a started [Server]: its process group, its log files and a watch on
// it. Its methods are safe for concurrent use.
type Process struct {
	srv        Server // defaults filled in
	cmd        *exec.Cmd
	addr       string // host:port of srv.URL
	started    time.Time
	stdoutPath string
	stderrPath string
	stdout     *os.File // perfgate's own lines go here too ("perfgate: …")
	stderr     *os.File
	tmpDir     string // removed by Stop when the logs had no directory
	done       chan struct{}

	mu       sync.Mutex
	ready    bool
	stopping bool
	exitErr  error // why it exited on its own (nil while running, or when Stop stopped it)
	state    *os.ProcessState

	stopOnce sync.Once
	stopErr  error
}

// Start starts s in its own process group, with its stdout and stderr appended to
// DIR/server-NAME.stdout.log and DIR/server-NAME.stderr.log ("server.stdout.log" when
// unnamed; dir "" = a temporary directory Stop removes). The stdout log starts with a
// line saying what was started, its secrets redacted. Before it starts, s's port must
// refuse connections: a server already there (an earlier build still running) would
// answer in its place ([ErrPortHeld]). Start does not wait for readiness:
// [Process.WaitReady] does.
func (s Server) Start(dir string) (*Process, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.WithDefaults()
	addr, _ := hostPort(s.URL)
	if accepts(addr) {
		return nil, errorf(ErrPortHeld, "server %s: %s already accepts connections before the server started: another process holds the port (an earlier server that did not stop?)", s.Name, addr)
	}
	p := &Process{srv: s, addr: addr, done: make(chan struct{})}
	if dir == "" {
		d, err := os.MkdirTemp("", "perfgate-server-")
		if err != nil {
			return nil, fmt.Errorf("serverproc: server %s: logs: %w", s.Name, err)
		}
		dir, p.tmpDir = d, d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("serverproc: server %s: logs: %w", s.Name, err)
	}
	base := filepath.Join(dir, s.logBase())
	p.stdoutPath, p.stderrPath = base+".stdout.log", base+".stderr.log"
	var err error
	if p.stdout, err = openLog(p.stdoutPath); err == nil {
		if p.stderr, err = openLog(p.stderrPath); err != nil {
			p.stdout.Close()
		}
	}
	if err != nil {
		p.removeTmp()
		return nil, fmt.Errorf("serverproc: server %s: logs: %w", s.Name, err)
	}
	if s.Cmd != "" {
		p.cmd = exec.Command("sh", "-c", s.Cmd)
	} else {
		p.cmd = exec.Command(s.Args[0], s.Args[1:]...)
	}
	p.cmd.Env = append(os.Environ(), s.Env...)
	p.cmd.Dir = s.Dir
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr // files: the child writes them directly
	p.cmd.SysProcAttr = groupAttr()
	p.logf("starting server %s: %s", s.Name, s)
	if err := p.cmd.Start(); err != nil {
		p.logf("could not start: %v", err)
		p.closeLogs()
		p.removeTmp()
		return nil, errorf(ErrExited, "server %s: could not start %s: %w", s.Name, s, err)
	}
	p.started = time.Now()
	p.logf("pid %d, serving %s", p.cmd.Process.Pid, s.URL)
	go p.wait()
	return p, nil
}

func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o644)
}

// waitHook and reapedHook, when set (by a test), run in wait before it reaps the
// process and after: a test holds one to stand for a machine too busy to run wait.
var waitHook, reapedHook func()

// wait reaps the process and, unless Stop stopped it, keeps why it exited.
func (p *Process) wait() {
	if waitHook != nil {
		waitHook()
	}
	err := p.cmd.Wait()
	if reapedHook != nil {
		reapedHook()
	}
	p.mu.Lock()
	p.state = p.cmd.ProcessState
	if !p.stopping {
		when := "before it was ready"
		if p.ready {
			when = "while serving"
		}
		status := "exit status unknown"
		if p.state != nil {
			status = p.state.String()
		} else if err != nil {
			status = err.Error()
		}
		hint := ""
		if p.state != nil && p.state.Success() && !p.ready {
			hint = " (a server must stay in the foreground: a command that daemonizes cannot be watched or stopped)"
		}
		p.exitErr = errorf(ErrExited, "server %s exited %s: %s, %v after it started%s%s", p.srv.Name, when, status,
			time.Since(p.started).Round(time.Millisecond), hint, p.evidence())
	}
	p.mu.Unlock()
	close(p.done)
}

// evidence is the lines an error adds under its first: the last lines of stderr and
// where the logs are.
func (p *Process) evidence() string {
	var b strings.Builder
	if tail := lastLines(p.stderrPath, TailLines); len(tail) > 0 {
		fmt.Fprintf(&b, "\n    stderr (last %d lines):", len(tail))
		for _, l := range tail {
			b.WriteString("\n      " + l)
		}
	} else {
		b.WriteString("\n    stderr: (empty)")
	}
	if p.tmpDir == "" {
		fmt.Fprintf(&b, "\n    logs: %s, %s", p.stdoutPath, p.stderrPath)
	}
	return b.String()
}

// lastLines returns the last n non-empty lines of the file at path (reading at most
// its last 64 KiB).
func lastLines(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const limit = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > limit {
		_, _ = f.Seek(st.Size()-limit, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, limit))
	var lines []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if s := strings.TrimRight(string(l), "\r "); s != "" {
			lines = append(lines, s)
		}
	}
	return lines[max(0, len(lines)-n):]
}

// logf writes one of perfgate's own lines into the stdout log.
func (p *Process) logf(format string, a ...any) {
	if p.stdout != nil {
		fmt.Fprintf(p.stdout, "perfgate: %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, a...))
	}
}

// Name is the server's name ([Server.Name], "server" when unnamed).
func (p *Process) Name() string { return p.srv.Name }

// Pid is the process id of the server's process (its group's leader).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Logs returns the paths of the stdout and stderr logs.
func (p *Process) Logs() (stdout, stderr string) { return p.stdoutPath, p.stderrPath }

// Exited is closed when the server's process has exited, on its own or stopped. A
// caller running load against the server selects on it, and then calls Err.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Err returns why the server exited on its own ([ErrExited]: its name, whether before
// it was ready or while serving, its exit status and the last lines of its stderr),
// or nil while it runs or when Stop stopped it.
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitErr
}

// WaitReady probes the server until it is ready (every ReadyPoll, sooner at first):
// GET Ready answers 200, or ReadyCmd exits 0. It returns an error when the server exits first
// ([ErrExited]), when ReadyTimeout passes ([ErrNotReady], with the last probe's answer
// and the server's stderr), or when ctx is done (wrapping ctx's error). The server is
// left running on error: call Stop.
func (p *Process) WaitReady(ctx context.Context) error {
	deadline := time.NewTimer(p.srv.ReadyTimeout)
	defer deadline.Stop()
	why := "not probed yet"
	for {
		select {
		case <-p.done:
			return p.Err()
		default:
		}
		ok, w := p.probe(ctx)
		if ok {
			p.mu.Lock()
			p.ready = true
			p.mu.Unlock()
			p.logf("ready after %v (%s)", time.Since(p.started).Round(time.Millisecond), p.probeName())
			return nil
		}
		why = w
		select {
		case <-p.done:
			return p.Err()
		case <-ctx.Done():
			return fmt.Errorf("serverproc: server %s: waiting until it is ready: %w", p.srv.Name, ctx.Err())
		case <-deadline.C:
			p.logf("not ready after %v: %s", p.srv.ReadyTimeout, why)
			return errorf(ErrNotReady, "server %s not ready after %v: %s: %s%s", p.srv.Name, p.srv.ReadyTimeout, p.probeName(), why, p.evidence())
		case <-time.After(p.pollWait()):
		}
	}
}

// pollWait is the wait before the next readiness probe: short while the server is
// young (a light server is up in tens of milliseconds), ReadyPoll once it has been
// starting for a while (a model server loads for minutes, and may log each probe).
func (p *Process) pollWait() time.Duration {
	if time.Since(p.started) < readyFastFor {
		return readyFastPoll
	}
	return ReadyPoll
}

const (
	readyFastPoll = 50 * time.Millisecond
	readyFastFor  = 5 * time.Second
)

// probeName says what the readiness probe is.
func (p *Process) probeName() string {
	if p.srv.ReadyCmd != "" {
		return "ready command " + Redact(p.srv.ReadyCmd)
	}
	return "GET " + p.readyURL()
}

func (p *Process) readyURL() string {
	r := p.srv.Ready
	if strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "https://") {
		return r
	}
	return strings.TrimRight(p.srv.URL, "/") + r
}

// probeClient is the readiness probe's HTTP client: short timeouts, no keep-alive
// (each probe is a new connection, as a starting server sees them), and no
// certificate check (the probe sends nothing secret, and asks only "are you up?").
var probeClient = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: insecureTLS()},
}

func insecureTLS() *tls.Config { return &tls.Config{InsecureSkipVerify: true} } //nolint:gosec // a readiness probe

// probe runs the readiness probe once: whether it passed, else what it saw.
func (p *Process) probe(ctx context.Context) (bool, string) {
	if p.srv.ReadyCmd != "" {
		ctx, cancel := context.WithTimeout(ctx, min(p.srv.ReadyTimeout, 30*time.Second))
		defer cancel()
		c := exec.CommandContext(ctx, "sh", "-c", p.srv.ReadyCmd)
		c.Env, c.Dir = p.cmd.Env, p.srv.Dir
		c.WaitDelay = time.Second
		if err := c.Run(); err != nil {
			return false, err.Error()
		}
		return true, ""
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.readyURL(), nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return false, "no answer within 2s"
		}
		var oe *net.OpError
		if errors.As(err, &oe) {
			return false, oe.Err.Error()
		}
		return false, err.Error()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, "answered " + resp.Status
	}
	return true, ""
}

// Stop stops the server: SIGTERM to its process group, SIGKILL to the group if any
// of it is left after StopGrace, then a wait of up to PortReleaseTimeout for its port
// to refuse connections. It returns an error ([ErrPortHeld], naming the server) when
// the port is still held: a process outside the group (a daemonized child) keeps
// serving, and the next build could not start there. Stop also stops a server that
// already exited on its own (what is left of its group), closes the logs, and may be
// called more than once: later calls return the first's answer.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.stop() })
	return p.stopErr
}

func (p *Process) stop() error {
	if exitedOrReaped(p.cmd.Process.Pid) {
		// It exited on its own before this Stop, or is exiting (its socket may already
		// refuse connections), and wait has not kept why yet (a busy machine may not
		// have run it, before or after reaping it): let wait keep why, as if Stop came
		// later, so a server that crashed at the end of a run is not reported as
		// stopped. An exit that does not end within the grace is stopped as a running
		// server would be.
		select {
		case <-p.done:
		case <-time.After(p.srv.StopGrace):
		}
	}
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	gone := func() bool {
		select {
		case <-p.done:
			return !groupAlive(p.cmd.Process.Pid)
		default:
			return false
		}
	}
	if !gone() {
		p.logf("stopping: SIGTERM to process group %d", p.cmd.Process.Pid)
		terminate(p.cmd.Process)
		if !waitUntil(gone, p.srv.StopGrace) {
			p.logf("still running %v after SIGTERM: SIGKILL to process group %d", p.srv.StopGrace, p.cmd.Process.Pid)
			kill(p.cmd.Process)
			waitUntil(gone, 5*time.Second)
		}
	}
	select {
	case <-p.done:
		p.mu.Lock()
		p.logf("stopped: %v", p.state)
		p.mu.Unlock()
	case <-time.After(5 * time.Second):
		p.logf("pid %d did not exit after SIGKILL", p.cmd.Process.Pid)
	}
	var err error
	if !waitUntil(func() bool { return !accepts(p.addr) }, portWait) {
		err = errorf(ErrPortHeld, "server %s stopped, but %s still accepts connections %v later: a process outside its process group holds the port (a daemonized child, or another server); the next build cannot start there%s",
			p.srv.Name, p.addr, portWait, p.evidence())
		p.logf("port %s still accepts connections %v after the server stopped", p.addr, portWait)
	}
	p.closeLogs()
	p.removeTmp()
	return err
}

func (p *Process) closeLogs() {
	p.stdout.Close()
	p.stderr.Close()
}

func (p *Process) removeTmp() {
	if p.tmpDir != "" {
		_ = os.RemoveAll(p.tmpDir)
	}
}

// portWait is PortReleaseTimeout (a variable, for the tests).
var portWait = PortReleaseTimeout

// lifecycleError is an error of a kind (ErrExited, ErrNotReady, ErrPortHeld) whose
// text says it all: errors.Is finds the kind, which does not repeat in the text.
type lifecycleError struct {
	kind error
	err  error
}

func (e *lifecycleError) Error() string        { return e.err.Error() }
func (e *lifecycleError) Unwrap() error        { return e.err }
func (e *lifecycleError) Is(target error) bool { return target == e.kind }

// errorf returns a "serverproc: …" error of the kind.
func errorf(kind error, format string, a ...any) error {
	return &lifecycleError{kind: kind, err: fmt.Errorf("serverproc: "+format, a...)}
}

// waitUntil polls cond every 20 ms until it holds (true) or d has passed (false).
func waitUntil(cond func() bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// accepts reports whether something accepts TCP connections at addr.
func accepts(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
