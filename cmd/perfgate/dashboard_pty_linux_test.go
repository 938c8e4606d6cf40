package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// ptyRun is the CLI started in a pseudo-terminal (stdin, stdout and stderr its
// terminal, which is the process's controlling terminal), with everything it writes
// collected. The terminal side stays open in the test, so its modes can be read after
// the process exited.
type ptyRun struct {
	cmd         *exec.Cmd
	master, tty *os.File
	before      *unix.Termios
	mu          sync.Mutex
	out         bytes.Buffer
	exited      chan struct{} // closed when the process has ended
}

func startPTY(t *testing.T, cols, rows uint16, args ...string) *ptyRun {
	t.Helper()
	p := openPTY(t, cols, rows)
	p.cmd = cliCmd([]string{"TERM=xterm-256color"}, args...)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = p.tty, p.tty, p.tty
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// openPTY opens a pseudo-terminal of cols × rows and collects what is written to its
// terminal side; cmd is for the caller to start.
func openPTY(t *testing.T, cols, rows uint16) *ptyRun {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close(); tty.Close() })
	if err := pty.Setsize(master, &pty.Winsize{Cols: cols, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	p := &ptyRun{master: master, tty: tty, exited: make(chan struct{})}
	if p.before, err = unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS); err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p
}

func (p *ptyRun) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits until the output contains s (or the process exited, or 10 s passed).
func (p *ptyRun) waitFor(t *testing.T, s string) {
	t.Helper()
	for range 1000 {
		if strings.Contains(p.output(), s) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the terminal never showed %q:\n%q", s, p.output())
}

// waitForRE waits until the output after byte from matches re (or 10 s passed) and
// returns its first group as a number.
func (p *ptyRun) waitForRE(t *testing.T, from int, re *regexp.Regexp) int {
	t.Helper()
	for range 1000 {
		if m := re.FindStringSubmatch(p.output()[from:]); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the terminal never showed %s after byte %d:\n%q", re, from, p.output()[from:])
	return 0
}

// wait waits for the process to end and returns its exit code.
func (p *ptyRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("the run did not end; terminal:\n%q", p.output())
	}
	p.drain(t)
	return p.cmd.ProcessState.ExitCode()
}

// drain waits until the reader has read every byte the process wrote: a mark written
// to the terminal's side after the process ended comes out of the master after them,
// and is then cut off the output. (A fixed sleep lost the last frame and the terminal's
// restore sequence to a reader that a loaded machine had not yet run.)
func (p *ptyRun) drain(t *testing.T) {
	t.Helper()
	const mark = "<<perfgate-test-drained>>"
	if _, err := p.tty.Write([]byte(mark)); err != nil {
		t.Fatal(err)
	}
	for range 2000 {
		p.mu.Lock()
		i := strings.Index(p.out.String(), mark)
		if i >= 0 {
			p.out.Truncate(i)
		}
		p.mu.Unlock()
		if i >= 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the terminal's output was not drained in 20 s; so far:\n%q", p.output())
}

// checkRestored asserts the terminal is as it was before the run: the same modes
// (canonical input, echo: not left raw), the alternate screen left after it was
// entered, the cursor shown after it was last hidden.
func (p *ptyRun) checkRestored(t *testing.T) {
	t.Helper()
	after, err := unix.IoctlGetTermios(int(p.tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != p.before.Lflag || after.Iflag != p.before.Iflag || after.Oflag != p.before.Oflag || after.Cflag != p.before.Cflag {
		t.Errorf("terminal modes not restored: lflag %#x iflag %#x oflag %#x, were %#x %#x %#x",
			after.Lflag, after.Iflag, after.Oflag, p.before.Lflag, p.before.Iflag, p.before.Oflag)
	}
	if err := terminalLeftClean(p.output()); err != nil {
		t.Error(err)
	}
}

// TestDashboardShowsTheArtifactsNumbers runs a profile with the dashboard in a
// pseudo-terminal, resizes the terminal while it runs, and reads the final frame: its
// counts, whole-run percentiles and throughputs are metrics.json's. The run lasts 2 s
// (a fixed schedule, however busy the machine), so the resize, sent about 0.2 s in, is
// redrawn before it ends: a run of 0.5 s once ended first on a loaded machine.
func TestDashboardShowsTheArtifactsNumbers(t *testing.T) {
	srv := startMock(t, "127.0.0.1")
	art := filepath.Join(t.TempDir(), "art")
	p := startPTY(t, 100, 30, "profile", "--url", srv.URL(), "--benchmark-duration", "2", "--request-rate", "200",
		"--concurrency", "8", "--osl", "8", "--isl", "16", "--random-seed", "3", "--artifact-dir", art, "--ui-type", "dashboard")
	p.waitFor(t, "\x1b[?1049h")
	p.waitFor(t, "last p50")
	// One resize (SIGWINCH to the run), sent after the first frame, which bubbletea draws
	// before it watches for SIGWINCH itself: the dashboard's own watch sees it.
	resized := len(p.output())
	if err := pty.Setsize(p.master, &pty.Winsize{Cols: 50, Rows: 20}); err != nil {
		t.Fatal(err)
	}
	p.waitForRE(t, resized, regexp.MustCompile(`\x1b\[2J()`)) // redrawn while the run goes
	if code := p.wait(t); code != ExitOK {
		t.Fatalf("exit %d; terminal:\n%q", code, p.output())
	}
	p.checkRestored(t)
	out := p.output()
	// After the resize the screen is redrawn whole, each line cut to the new width.
	redraw := out[resized:]
	if i := strings.Index(redraw, "\x1b[2J"); i < 0 {
		t.Errorf("no redraw after the resize to 50 columns:\n%q", redraw)
	} else if top, _ := topLine(redraw[i+len("\x1b[2J"):]); utf8.RuneCountInString(top) != 50 {
		t.Errorf("first line after the resize is %d cells wide, want 50: %q", utf8.RuneCountInString(top), top)
	}
	f, err := parseFinalFrame(out)
	if err != nil {
		t.Fatal(err)
	}
	var m record.Metrics
	readJSON(t, filepath.Join(art, "metrics.json"), &m)
	if err := f.matches(m); err != nil {
		t.Error(err)
	}
	if f.inFlight != 0 {
		t.Errorf("final frame shows %d requests in flight, want 0 (the run has ended)", f.inFlight)
	}
}

// A terminal resized while the dashboard draws its first frame is redrawn at the new
// width. bubbletea watches for SIGWINCH only after that frame, and the process ignores
// one that comes before: the dashboard watches from before the program starts. The
// test holds the program in its first frame, resizes the terminal, signals the
// process as the terminal would (the test is not in the terminal's session), and
// lets the frame finish.
func TestDashboardRedrawsAResizeDuringItsFirstFrame(t *testing.T) {
	p := openPTY(t, 100, 30)
	d := newDashboard(p.tty, nil, "t", 0, 0, metric.Options{})
	d.interrupt = func() {}
	drawing, release := make(chan struct{}), make(chan struct{})
	d.firstView = func() { close(drawing); <-release }
	d.begin()
	select {
	case <-drawing:
	case <-time.After(10 * time.Second):
		t.Fatal("the dashboard never drew its first frame")
	}
	if err := pty.Setsize(p.master, &pty.Winsize{Cols: 50, Rows: 20}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	first := len(p.output())
	close(release)
	// The first frame (100 columns) is drawn; then the resize redraws the whole screen.
	redrawn := false
	for range 1000 {
		out := p.output()[first:]
		if i := strings.LastIndex(out, "\x1b[2J"); i >= 0 {
			if top, ok := topLine(out[i+len("\x1b[2J"):]); ok && utf8.RuneCountInString(top) == 50 {
				redrawn = true
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.end()
	if !redrawn {
		t.Errorf("no redraw at 50 columns after a resize during the first frame:\n%q", p.output()[first:])
	}
}

// topLine is the first line of a frame drawn after a screen clear: up to its carriage
// return, past the one the renderer may write first to put the cursor at the line's start.
func topLine(frame string) (string, bool) {
	top, _, ok := strings.Cut(strings.TrimLeft(frame, "\r"), "\r")
	return top, ok
}

// A size message that is not the terminal's any more (bubbletea's size from its start,
// sent from a goroutine, arriving after a resize's) asks for the terminal's size again,
// so the last word is the terminal's; the terminal's own size is taken as it comes.
func TestDashboardRequeriesAStaleSize(t *testing.T) {
	p := openPTY(t, 50, 20)
	d := newDashboard(p.tty, nil, "t", 0, 0, metric.Options{})
	m := &dashModel{d: d}
	_, cmd := m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	if cmd == nil || reflect.TypeOf(cmd()) != reflect.TypeOf(tea.RequestWindowSize()) {
		t.Errorf("a 100-column size on a 50-column terminal: command %v, want tea.RequestWindowSize", cmd)
	}
	if _, cmd := m.Update(tea.WindowSizeMsg{Width: 50, Height: 20}); cmd != nil || m.width != 50 {
		t.Errorf("the terminal's own size: command %v, width %d; want none, 50", cmd, m.width)
	}
}

// stopDashboard runs a 60-second profile with the dashboard in a pseudo-terminal
// (load: the run's flags), waits for its first frame, stops it with stop, and returns
// its exit code once it has ended, having checked that the terminal is left as it was,
// and what the terminal showed.
func stopDashboard(t *testing.T, load []string, stop func(p *ptyRun)) (int, string) {
	t.Helper()
	srv := startMock(t, "127.0.0.1")
	args := append([]string{"profile", "--url", srv.URL(), "--benchmark-duration", "60", "--osl", "4",
		"--artifact-dir", filepath.Join(t.TempDir(), "art"), "--ui-type", "dashboard"}, load...)
	p := startPTY(t, 100, 30, args...)
	p.waitFor(t, "last p50") // the first frame: the run is going
	stop(p)
	code := p.wait(t)
	p.checkRestored(t)
	return code, p.output()
}

// The dashboard shows the requests in flight live; Ctrl-C typed into it (a key in raw
// mode, not a signal) interrupts the run as SIGINT does, and the terminal is left as
// it was.
func TestDashboardCtrlCRestoresTheTerminal(t *testing.T) {
	code, out := stopDashboard(t, []string{"--concurrency", "6"}, func(p *ptyRun) {
		// A closed loop of 6 streams keeps up to 6 requests in flight: the load
		// generator's count, shown live. A frame only rewrites the cells that changed,
		// so the test resizes the terminal, which redraws the whole screen, and reads
		// the count there. The first frames may come before the first requests go out
		// (or before the 100 ms sample sees them, on a loaded machine), so it redraws
		// until the count is not 0, up to 50 times (the run lasts 60 s); a count never
		// above 0 or above 6 fails.
		inFlight := 0
		for i := range 50 {
			from := len(p.output())
			if err := pty.Setsize(p.master, &pty.Winsize{Cols: uint16(90 + i%2), Rows: 30}); err != nil {
				t.Fatal(err)
			}
			if inFlight = p.waitForRE(t, from, regexp.MustCompile(`in flight (\d+)`)); inFlight != 0 {
				break
			}
			time.Sleep(100 * time.Millisecond) // the next sample
		}
		if inFlight < 1 || inFlight > 6 {
			t.Errorf("the dashboard shows %d requests in flight, want 1 to 6 (a closed loop of 6 streams)", inFlight)
		}
		if _, err := p.master.Write([]byte{3}); err != nil {
			t.Fatal(err)
		}
	})
	if code != ExitInterrupted {
		t.Errorf("exit %d, want %d (interrupted); terminal:\n%q", code, ExitInterrupted, out)
	}
}

// SIGTERM (a kill) to perfgate ends the dashboard cleanly too.
func TestDashboardSIGTERMRestoresTheTerminal(t *testing.T) {
	code, out := stopDashboard(t, []string{"--request-rate", "50"}, func(p *ptyRun) {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	})
	if code == ExitOK {
		t.Errorf("exit 0 after SIGTERM; terminal:\n%q", out)
	}
}

// SIGKILL to the run itself (the supervised child: no chance to clean up) still leaves
// the terminal usable: the supervisor takes it back and restores its modes, leaves the
// alternate screen and shows the cursor.
func TestDashboardSIGKILLRestoresTheTerminal(t *testing.T) {
	code, out := stopDashboard(t, []string{"--request-rate", "50"}, func(p *ptyRun) {
		pg, err := unix.IoctlGetInt(int(p.master.Fd()), unix.TIOCGPGRP) // the run's group holds the terminal
		if err != nil {
			t.Fatal(err)
		}
		if pg == p.cmd.Process.Pid {
			t.Fatalf("the terminal's foreground group is the supervisor's (%d), not the run's", pg)
		}
		if raw, err := unix.IoctlGetTermios(int(p.tty.Fd()), unix.TCGETS); err != nil || raw.Lflag&unix.ICANON != 0 {
			t.Fatalf("the dashboard did not put the terminal in raw mode (lflag %#x, %v)", raw.Lflag, err)
		}
		if err := syscall.Kill(-pg, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	})
	if code == ExitOK {
		t.Errorf("exit 0 after SIGKILL; terminal:\n%q", out)
	}
}
