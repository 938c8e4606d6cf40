//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package main

import "syscall"

// soReusePort is SO_REUSEPORT in asm-generic/socket.h (every Linux port Go has but
// MIPS); package syscall is frozen without it.
const soReusePort = 0xf

// reusePort sets SO_REUSEPORT, so several server processes can listen on one port
// and the kernel spreads incoming connections over them.
func reusePort(network, address string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, soReusePort, 1)
	}); err != nil {
		return err
	}
	return serr
}
