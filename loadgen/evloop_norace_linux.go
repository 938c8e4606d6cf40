//go:build linux && !race

package loadgen

import (
	"syscall"
	"unsafe"
)

// sysRead and sysWrite are an event loop's reads and writes on its non-blocking
// sockets: raw system calls, which never block, so the scheduler need not know of
// them. (A race build uses package syscall's, which tell the race detector that what a
// write sent happens before what a read receives: evloop_race_linux.go.)
func sysRead(fd int, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

func sysWrite(fd int, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}
