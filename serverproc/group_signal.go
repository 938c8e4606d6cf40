//go:build unix

package serverproc

import "syscall"

// groupSignalable reports whether signal 0 reaches a process of group pgid (zombies
// included).
func groupSignalable(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
