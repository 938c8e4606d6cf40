//go:build linux

package mockserver

import (
	"net"
	"syscall"
)

// connGone reports whether the peer has closed conn, without consuming data: a
// non-blocking MSG_PEEK read that returns 0 bytes means EOF.
func connGone(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	var b [1]byte
	_ = rc.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = n == 0 && err == nil || err == syscall.ECONNRESET
	})
	return gone
}
