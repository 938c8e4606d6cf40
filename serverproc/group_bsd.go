//go:build unix && !linux

package serverproc

// groupAlive reports whether a process of group pgid is still there.
func groupAlive(pgid int) bool { return groupSignalable(pgid) }

// exitedOrReaped cannot tell here: a server that exited just before Stop is reported
// as stopped unless Process.wait saw its exit first.
func exitedOrReaped(int) bool { return false }
