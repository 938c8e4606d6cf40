//go:build linux

package serverproc

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// groupAlive reports whether a process of group pgid is still running (not a zombie:
// an orphan that exited stays a zombie where PID 1 does not reap, e.g. in a
// container, and holds nothing), from /proc.
func groupAlive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return groupSignalable(pgid)
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone since the listing
		}
		f := statFields(string(b))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			return true
		}
	}
	return false
}

// exitedOrReaped reports, from /proc, whether process pid, a child of this process,
// has exited or is exiting: a zombie, a task with PF_EXITING, or no longer there at
// all. Only its parent reaps it, so a pid missing from /proc was reaped by
// Process.wait's cmd.Wait, whose goroutine may not have run since (on a busy machine
// it waits for a processor after the system call returns).
func exitedOrReaped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	return statExiting(string(b))
}

// pfExiting is the kernel's task flag PF_EXITING (include/linux/sched.h), set as a
// task begins to exit and before its files are closed: a server whose listening socket
// already refuses connections, but which is not yet a zombie, carries it.
const pfExiting = 0x4

// statExiting reads a /proc/PID/stat line: a zombie (state Z), or a task with
// PF_EXITING in its flags (the ninth field).
func statExiting(stat string) bool {
	f := statFields(stat)
	if len(f) > 0 && f[0] == "Z" {
		return true
	}
	if len(f) > 6 {
		flags, err := strconv.ParseUint(f[6], 10, 64)
		return err == nil && flags&pfExiting != 0
	}
	return false
}

// statFields splits a /proc/PID/stat line "pid (comm) state ppid pgrp session tty_nr
// tpgid flags …" after its comm, which may hold spaces and parentheses: state first;
// nil for a line without one.
func statFields(stat string) []string {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(stat[i+1:])
}
