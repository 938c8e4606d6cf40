package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// The burner is a neighbour at the benchmark's own priority, as a CI job's neighbour
// would be. On Linux with sched_autogroup_enabled (the default on desktop and many VM
// kernels), CPU is first shared between sessions (autogroups) and only then between the
// processes of a session by their nice values, so `nice -n -15 gate` alone neither
// protects the benchmark from other sessions nor makes a child burner a neighbour: a
// burner in the benchmark's session spends the session's own share, and the benchmark's
// threads then wait for the session's turn. startBurner therefore puts the burner in a
// session of its own and gives that session the benchmark's autogroup nice. Run the
// benchmark with its session at high priority too (bench/gate/run.sh does:
// `echo -15 > /proc/self/autogroup`).

// newSession starts cmd in a new session (and so, with autogroups, a new autogroup).
func newSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// autogroupNice is this process's autogroup nice ("" when the kernel has no autogroups).
func autogroupNice() string {
	b, err := os.ReadFile("/proc/self/autogroup")
	if err != nil {
		return ""
	}
	return parseAutogroup(string(b))
}

// parseAutogroup returns the nice of a /proc/PID/autogroup line, "/autogroup-1722 nice
// -15" ("" when it is not one).
func parseAutogroup(s string) string {
	f := strings.Fields(s)
	if len(f) == 3 && f[1] == "nice" {
		if _, err := strconv.Atoi(f[2]); err == nil {
			return f[2]
		}
	}
	return ""
}

// matchAutogroup gives the burner's session the nice BURN_AUTOGROUP_NICE (the
// benchmark's). It is best effort: without the privilege the burner keeps nice 0, and
// says so.
func matchAutogroup() {
	n := os.Getenv("BURN_AUTOGROUP_NICE")
	if n == "" {
		return
	}
	if err := os.WriteFile("/proc/self/autogroup", []byte(n), 0); err != nil {
		os.Stderr.WriteString("gate burn: could not set the burner's autogroup nice to " + n + ": " + err.Error() + "\n")
	}
}
