//go:build !linux || mips || mipsle || mips64 || mips64le

package main

import (
	"errors"
	"syscall"
)

// reusePort is implemented for Linux only (MIPS numbers the option differently).
func reusePort(network, address string, c syscall.RawConn) error {
	return errors.New("SO_REUSEPORT: Linux only in this bench")
}
