//go:build linux

package loadgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// sendTrace records what bench/loadgen/sendtrace.sh needs to split an open-loop run's
// late sends by what the send loop's thread was doing: with PERFGATE_SENDTRACE set to
// a directory (and the kernel's trace events set up by the script), openLoopCost turns
// tracing on for its open-loop run only and then writes, into the directory, the trace
// (trace.txt, monotonic clock), the process ids of the client (pid) and of the stub
// server (stub), and each request's due time on the monotonic clock with its lateness
// at the client (requests.txt: "due_ns sent_lag_ns"). Nil when the variable is unset.
type sendTrace struct {
	dir, tracefs string
}

func newSendTrace(b *testing.B) *sendTrace {
	dir := os.Getenv("PERFGATE_SENDTRACE")
	if dir == "" {
		return nil
	}
	s := &sendTrace{dir: dir, tracefs: os.Getenv("PERFGATE_TRACEFS")}
	if s.tracefs == "" {
		s.tracefs = "/sys/kernel/tracing"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return s
}

func writeTraceFile(b *testing.B, file, text string) {
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		b.Fatalf("sendtrace: %v", err)
	}
}

// start clears the trace buffer and turns tracing on.
func (s *sendTrace) start(b *testing.B) {
	if s == nil {
		return
	}
	writeTraceFile(b, filepath.Join(s.tracefs, "trace"), "")
	writeTraceFile(b, filepath.Join(s.tracefs, "tracing_on"), "1")
}

// stop turns tracing off and writes the run's files.
func (s *sendTrace) stop(b *testing.B, recs []recordLite) {
	if s == nil {
		return
	}
	writeTraceFile(b, filepath.Join(s.tracefs, "tracing_on"), "0")
	trace, err := os.ReadFile(filepath.Join(s.tracefs, "trace"))
	if err != nil {
		b.Fatalf("sendtrace: %v", err)
	}
	writeTraceFile(b, filepath.Join(s.dir, "trace.txt"), string(trace))
	writeTraceFile(b, filepath.Join(s.dir, "pid"), fmt.Sprintln(os.Getpid()))
	writeTraceFile(b, filepath.Join(s.dir, "stub"), fmt.Sprintln(stubPid))
	// The records' times are wall-clock (Unix) ns, the trace's monotonic.
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0) //nolint:errcheck // CLOCK_MONOTONIC
	off := time.Now().UnixNano() - ts.Nano()
	var sb strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&sb, "%d %d\n", r.sched-off, int64(r.lag))
	}
	writeTraceFile(b, filepath.Join(s.dir, "requests.txt"), sb.String())
}
