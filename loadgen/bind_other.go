//go:build !linux

package loadgen

import "syscall"

// bindNoPort does nothing off Linux: the source port is picked when binding.
func bindNoPort(network, address string, c syscall.RawConn) error { return nil }
