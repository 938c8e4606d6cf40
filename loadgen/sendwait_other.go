//go:build !linux

package loadgen

import (
	"net"
	"time"
)

// sendWaiter is Linux-only; elsewhere requests are written and read the ordinary way.
type sendWaiter struct{ written time.Duration }

func newSendWaiter(net.Conn) *sendWaiter { return nil }

func (s *sendWaiter) writeThenWait(b []byte, _ *runClock) ([]byte, error) { return b, nil }
