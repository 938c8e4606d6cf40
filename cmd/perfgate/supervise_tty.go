//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// foreground hands the terminal to the supervised child when perfgate runs in the
// foreground of one: the child's process group becomes the terminal's foreground
// group, so that the child may switch the terminal to raw mode and read keys (the live
// dashboard; a background group that tries is stopped by SIGTTOU), and a Ctrl-C typed
// at the terminal reaches the child once. The returned function, called when the child
// has ended, takes the terminal back and restores the modes it had before, so a child
// killed in the middle of a full-screen display (SIGKILL, a second Ctrl-C) does not
// leave the terminal raw; killed also leaves the alternate screen and shows the cursor.
func foreground(attr *syscall.SysProcAttr) (restore func(killed bool)) {
	fd := int(os.Stdin.Fd())
	pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || pg != syscall.Getpgrp() {
		return func(bool) {}
	}
	state, err := term.GetState(fd)
	if err != nil {
		return func(bool) {}
	}
	attr.Foreground, attr.Ctty = true, 0 // Ctty is the child's descriptor: its stdin, this terminal
	return func(killed bool) {
		// Taking the terminal back from a background group needs SIGTTOU ignored.
		signal.Ignore(syscall.SIGTTOU)
		defer signal.Reset(syscall.SIGTTOU)
		_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, syscall.Getpgrp())
		_ = term.Restore(fd, state)
		if killed && term.IsTerminal(int(os.Stderr.Fd())) {
			os.Stderr.WriteString("\x1b[?1049l\x1b[?25h")
		}
	}
}
