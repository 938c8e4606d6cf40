//go:build !linux

package mockserver

import "net"

// connGone cannot peek portably; a gone client is noticed at the next write.
func connGone(net.Conn) bool { return false }
