//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"

	tea "charm.land/bubbletea/v2"
)

// watchResize asks prog to re-read the terminal's size on every SIGWINCH from now
// until stop is called. bubbletea starts its own SIGWINCH listener only after it has
// drawn the first frame, and a SIGWINCH that comes before that listener exists is
// ignored by the process: a terminal resized at the start of a run would keep a frame
// of the old width until the next resize. Watching from before the program starts
// closes that gap; bubbletea's own listener then only repeats the same size.
func watchResize(prog *tea.Program) (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-sig:
				// Send waits for the program's event loop, or returns once it has ended.
				prog.Send(tea.RequestWindowSize())
			}
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}
