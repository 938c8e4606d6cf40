package perftest

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Captured is what [Capture] recorded.
type Captured struct {
	testing.TB // the real test: logs, Context, ArtifactDir, Name, Attr … go to it

	mu     sync.Mutex
	errors []string
	failed bool
	fatal  bool
}

// Capture runs f with a TB that records failures instead of failing t, so a test can
// prove that an assertion fails, and with which message (testify's capture-T). f runs
// on its own goroutine; a Fatal, FailNow or Skip inside f ends that goroutine with
// runtime.Goexit and Capture returns. Everything else (Logf, Context, ArtifactDir,
// Cleanup, Attr) goes to t.
func Capture(t testing.TB, f func(t testing.TB)) *Captured {
	t.Helper()
	c := &Captured{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(c)
	}()
	<-done
	return c
}

// Helper does nothing: the captured messages carry no file:line.
func (c *Captured) Helper() {}

// Errorf records a failure.
func (c *Captured) Errorf(format string, args ...any) { c.Error(fmt.Sprintf(format, args...)) }

// Error records a failure.
func (c *Captured) Error(args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errors = append(c.errors, strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
	c.failed = true
}

// Fatalf records a failure and stops f.
func (c *Captured) Fatalf(format string, args ...any) { c.Errorf(format, args...); c.FailNow() }

// Fatal records a failure and stops f.
func (c *Captured) Fatal(args ...any) { c.Error(args...); c.FailNow() }

// Fail marks f as failed.
func (c *Captured) Fail() { c.mu.Lock(); c.failed = true; c.mu.Unlock() }

// FailNow marks f as failed and stops it (runtime.Goexit on f's goroutine).
func (c *Captured) FailNow() {
	c.mu.Lock()
	c.failed, c.fatal = true, true
	c.mu.Unlock()
	runtime.Goexit()
}

// SkipNow stops f without failing it.
func (c *Captured) SkipNow() { runtime.Goexit() }

// Skip logs args to t and stops f.
func (c *Captured) Skip(args ...any) { c.TB.Log(args...); runtime.Goexit() }

// Skipf logs to t and stops f.
func (c *Captured) Skipf(format string, args ...any) { c.TB.Logf(format, args...); runtime.Goexit() }

// Failed reports whether f failed.
func (c *Captured) Failed() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.failed }

// Stopped reports whether f was stopped by Fatal/FailNow.
func (c *Captured) Stopped() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.fatal }

// Messages returns the recorded failure messages in order.
func (c *Captured) Messages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errors...)
}

// Text returns the recorded messages joined by newlines.
func (c *Captured) Text() string { return strings.Join(c.Messages(), "\n") }
