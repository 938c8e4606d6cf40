//go:build linux

package serverproc

import (
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
		// pid (comm) state ppid pgrp …: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			return true
		}
	}
	return false
}

// exitedUnreaped reports whether process pid has exited and waits to be reaped (a
// zombie), from /proc.
func exitedUnreaped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	return i >= 0 && len(f) > 0 && f[0] == "Z"
}
