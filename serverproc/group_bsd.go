//go:build unix && !linux

package serverproc

// groupAlive reports whether a process of group pgid is still there.
func groupAlive(pgid int) bool { return groupSignalable(pgid) }
