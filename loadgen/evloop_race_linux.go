//go:build linux && race

package loadgen

import "syscall"

// sysRead and sysWrite: package syscall's, whose race annotations order a peer's write
// before this read (see evloop_norace_linux.go).
func sysRead(fd int, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(fd, p)
	if err != nil {
		return 0, err.(syscall.Errno)
	}
	return n, 0
}

func sysWrite(fd int, p []byte) (int, syscall.Errno) {
	n, err := syscall.Write(fd, p)
	if err != nil {
		return 0, err.(syscall.Errno)
	}
	return n, 0
}
