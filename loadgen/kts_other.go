//go:build !linux

package loadgen

import (
	"net"
	"time"
)

type kernelStamper struct{}

func newKernelStamper(net.Conn) *kernelStamper { return nil }

func (*kernelStamper) read([]byte) (int, time.Time, error) { panic("unreachable") }
