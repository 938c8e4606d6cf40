package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// The supervisor: perfgate runs its command in a child process and watches it, so that
// a crash anywhere (a panic on any goroutine, which Go ends with exit code 2, the code
// of invalid configuration) is reported as what it is: exit 1, "internal error", and
// the stack written into the artifact directory. Signals are passed on to the child.
const (
	supervisedEnv = "PERFGATE_SUPERVISED" // set in the child
	crashFileEnv  = "PERFGATE_CRASH_FILE" // where the child's runtime writes a crash
	panicTestEnv  = "PERFGATE_TEST_PANIC" // makes the child panic on a goroutine (tests)
	// CrashFile is the stack of a crash, in the artifact directory.
	CrashFile = "perfgate_crash.txt"
)

// supervised reports whether a command runs under the supervisor: every command
// that runs load, serves or writes artifacts. tokenize reads its input from the
// terminal, which a child in its own process group could not (SIGTTIN); it and the
// informational commands run in this process.
func supervised(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "tokenize", "analyze-trace", "version", "help", "-h", "--help":
		return false
	}
	return true
}

// supervise runs perfgate with args in a child process and returns its exit code; ok is
// false when no child could be started (perfgate then runs in this process).
func supervise(args []string) (code int, ok bool) {
	exe, err := os.Executable()
	if err != nil {
		return 0, false
	}
	crash, err := os.CreateTemp("", "perfgate-crash-*.txt")
	if err != nil {
		return 0, false
	}
	crashPath := crash.Name()
	crash.Close()
	defer os.Remove(crashPath)

	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), supervisedEnv+"=1", crashFileEnv+"="+crashPath)
	// The child is its own process group, so a terminal's Ctrl-C reaches it once:
	// through the supervisor, or directly when the child's group is the terminal's
	// foreground group (foreground: the live dashboard needs the terminal); it dies
	// with the supervisor (Pdeathsig, tied to the thread that starts it).
	cmd.SysProcAttr = childAttr()
	restore := foreground(cmd.SysProcAttr)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case err := <-done:
			var ee *exec.ExitError
			restore(errors.As(err, &ee) && !ee.Exited())
			return childExit(err, crashPath, args), true
		}
	}
}

// childExit maps the child's end onto perfgate's exit code.
func childExit(err error, crashPath string, args []string) int {
	if err == nil {
		return ExitOK
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		fmt.Fprintf(os.Stderr, "perfgate: internal error: %v\n", err)
		return ExitRuntime
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		if ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM {
			fmt.Fprintln(os.Stderr, "perfgate: aborted; what was written stays")
			return ExitInterrupted
		}
		return 128 + int(ws.Signal())
	}
	code := ee.ExitCode()
	if st, err := os.Stat(crashPath); err == nil && st.Size() > 0 {
		where := keepCrash(crashPath, args)
		fmt.Fprintf(os.Stderr, "perfgate: internal error (a bug in perfgate, not in the configuration): %s\n    stack: %s\n", panicLine(crashPath), where)
		return ExitRuntime
	}
	return code
}

// keepCrash copies the crash report into the run's artifact directory when there is
// one, else next to the working directory's temporary files, and returns its path.
func keepCrash(crashPath string, args []string) string {
	dst := filepath.Join(os.TempDir(), fmt.Sprintf("perfgate-crash-%d.txt", os.Getpid()))
	if dir := artifactDirArg(args); dir != "" {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			dst = filepath.Join(dir, CrashFile)
		}
	}
	in, err := os.Open(crashPath)
	if err != nil {
		return crashPath
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return crashPath
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		return crashPath
	}
	return dst
}

// artifactDirArg is the --artifact-dir the command was given (or its default for the
// commands that write artifacts), "" for others.
func artifactDirArg(args []string) string {
	for i, a := range args {
		name, val, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "artifact-dir" {
			continue
		}
		if inline {
			return val
		}
		if i+1 < len(args) {
			return args[i+1]
		}
	}
	if len(args) > 0 && (args[0] == "profile" || args[0] == "report") {
		return DefaultArtifactDir
	}
	return ""
}

// panicLine is the first line of a crash report ("panic: …").
func panicLine(path string) string {
	b, _ := os.ReadFile(path)
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}
