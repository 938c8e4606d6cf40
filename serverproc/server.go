package serverproc

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Defaults of a [Server]'s zero fields, shared by perfgate's flags and docs.
const (
	// DefaultReady is the readiness path probed when Ready and ReadyCmd are empty:
	// vLLM, SGLang, TGI, llama.cpp and perfgate's mock answer 200 there once they serve.
	DefaultReady = "/health"
	// DefaultReadyTimeout bounds the wait for readiness: real model servers load
	// weights for minutes.
	DefaultReadyTimeout = 10 * time.Minute
	// DefaultStopGrace is how long Stop waits after SIGTERM before SIGKILL.
	DefaultStopGrace = 10 * time.Second
	// ReadyPoll is how often WaitReady probes, once the server has been starting for
	// 5 s (every 50 ms before).
	ReadyPoll = 250 * time.Millisecond
	// PortReleaseTimeout bounds how long Stop waits, once the server's processes are
	// gone, for its port to refuse connections.
	PortReleaseTimeout = 5 * time.Second
	// TailLines is how many of the last lines of a server's stderr an error quotes.
	TailLines = 10
)

// The kinds of the errors of [Process], for errors.Is; each error's text names the
// server and says what happened ("serverproc: server B exited while serving: exit
// status 3, …").
var (
	// ErrExited: the server could not start, or exited on its own, before it was
	// ready or while serving.
	ErrExited = errors.New("serverproc: server exited")
	// ErrNotReady: the readiness probe did not pass within the ready timeout.
	ErrNotReady = errors.New("serverproc: server not ready")
	// ErrPortHeld: the server's port accepted connections before it started, or still
	// did after it stopped.
	ErrPortHeld = errors.New("serverproc: port held")
)

// A Server describes how to run one server build: the command, its environment, where
// it serves, how to tell it is ready and how to stop it. It is plain data; [Server.Start]
// runs it. It prints (String, %v, %+v, %#v) with its secrets redacted.
type Server struct {
	// Name names the server, the build, in errors, log lines and log file names ("A",
	// "B", "vllm-0.9"); "" = "server".
	Name string
	// Cmd is a shell command line, run with sh -c ("vllm serve m --port 8000"); or
	// Args is the program and its arguments, run without a shell. Set exactly one.
	// The server must stay in the foreground: a command that daemonizes exits at once,
	// which is an error.
	Cmd  string
	Args []string
	// Env is added to perfgate's own environment ("NAME=value"; the later of two
	// entries of a name wins). Values whose names look secret ([SecretName]) are
	// redacted wherever perfgate prints or writes them.
	Env []string
	// Dir is the working directory; "" = perfgate's.
	Dir string
	// URL is the base URL the server serves, scheme://host:port
	// ("http://127.0.0.1:8000"): where readiness is probed, and the port that must be
	// free before the server starts and released after it stops.
	URL string
	// Ready is the readiness probe: a path ("/health", "/v1/models") on URL, or a URL,
	// polled with GET until it answers 200 (every ReadyPoll, sooner at first); "" =
	// DefaultReady. ReadyCmd, when set, replaces it: a shell command run as often
	// until it exits 0.
	Ready    string
	ReadyCmd string
	// ReadyTimeout bounds the wait for readiness; 0 = DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// StopGrace is how long Stop waits after SIGTERM to the process group before
	// SIGKILL; 0 = DefaultStopGrace.
	StopGrace time.Duration
}

// NameOrDefault is the server's name, "server" when it has none.
func (s Server) NameOrDefault() string { return cmp.Or(s.Name, "server") }

// WithDefaults returns s with its zero fields at their documented defaults.
func (s Server) WithDefaults() Server {
	s.Name = s.NameOrDefault()
	if s.Ready == "" && s.ReadyCmd == "" {
		s.Ready = DefaultReady
	}
	if s.ReadyTimeout == 0 {
		s.ReadyTimeout = DefaultReadyTimeout
	}
	if s.StopGrace == 0 {
		s.StopGrace = DefaultStopGrace
	}
	return s
}

// Validate reports every setting that cannot work, in one error.
func (s Server) Validate() error {
	var bad []string
	switch {
	case s.Cmd == "" && len(s.Args) == 0:
		bad = append(bad, "no command: set Cmd (a shell command line) or Args")
	case s.Cmd != "" && len(s.Args) > 0:
		bad = append(bad, "both Cmd and Args: set one")
	case strings.TrimSpace(s.Cmd) == "" && len(s.Args) == 0, len(s.Args) > 0 && s.Args[0] == "":
		bad = append(bad, "an empty command")
	}
	if _, err := hostPort(s.URL); err != nil {
		bad = append(bad, err.Error())
	}
	if r := s.Ready; r != "" && !strings.HasPrefix(r, "/") && !strings.HasPrefix(r, "http://") && !strings.HasPrefix(r, "https://") {
		bad = append(bad, fmt.Sprintf("ready %q: want a path such as /health, or an http(s) URL", r))
	}
	if s.ReadyTimeout < 0 || s.StopGrace < 0 {
		bad = append(bad, fmt.Sprintf("ready timeout %v, stop grace %v: want >= 0", s.ReadyTimeout, s.StopGrace))
	}
	for _, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			bad = append(bad, fmt.Sprintf("env entry %q: want NAME=value", redactEnvEntry(kv)))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("serverproc: server %s: %s", s.NameOrDefault(), strings.Join(bad, "; "))
	}
	return nil
}

// hostPort returns the host:port of a base URL (the scheme's port when it has none).
func hostPort(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("url %q: want the base URL the server serves, such as http://127.0.0.1:8000", raw)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// String describes the server with its secrets redacted: the command line (Cmd as
// written, Args shell-quoted), then its added environment and directory, e.g.
// "vllm serve m --api-key [redacted] (env HF_TOKEN=[redacted])". It leaves out the
// Name, so two builds run by the same command describe alike.
func (s Server) String() string {
	var b strings.Builder
	if s.Cmd != "" {
		b.WriteString(Redact(s.Cmd))
	} else {
		b.WriteString(quoteArgs(redactArgs(s.Args)))
	}
	var extra []string
	if len(s.Env) > 0 {
		extra = append(extra, "env "+strings.Join(redactEnv(s.Env), " "))
	}
	if s.Dir != "" {
		extra = append(extra, "in "+s.Dir)
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, "; ") + ")")
	}
	return b.String()
}

// GoString keeps %#v from printing a secret.
func (s Server) GoString() string {
	return fmt.Sprintf("serverproc.Server{Name: %q, %s, URL: %q}", s.Name, s.String(), s.URL)
}

// Format prints the redacted form for every verb, %+v included, so no field's
// secret reaches a log through fmt.
func (s Server) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, s.GoString())
		return
	}
	fmt.Fprint(f, s.String())
}

// logBase is the base of the server's log file names: "server" or "server-NAME".
func (s Server) logBase() string {
	if s.Name == "" || s.Name == "server" {
		return "server"
	}
	return "server-" + unsafeName.ReplaceAllString(s.Name, "_")
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
