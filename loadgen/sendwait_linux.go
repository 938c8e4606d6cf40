//go:build linux

package loadgen

import (
	"net"
	"os"
	"syscall"
	"time"
)

// sendWaiter writes a request and then waits, without reading, until the answer can
// be read: one system call less per request than a write followed by a read, which on
// a kept-alive connection almost always finds nothing yet (EAGAIN), parks, and reads
// again once the poller reports the socket readable.
//
// It rests on Go's poller: RawConn.Read first clears the descriptor's read readiness,
// then calls the function, and parks until the socket is readable while it returns
// false. The request is written inside the function, after the readiness was cleared,
// so the answer to it (or the reset or close that ends the connection, each a new
// event for the edge-triggered poller) always ends the wait; a readiness left from
// earlier events at worst ends it early, and the read that follows then finds nothing
// and waits the ordinary way. A wait ended by the read deadline or by closing the
// connection leaves the same condition to the read that follows. An end of stream seen
// before the write (a server's half-close of an idle connection) would not end the
// wait: connections idle for sendWaitIdle are written the ordinary way.
type sendWaiter struct {
	rc      syscall.RawConn
	conn    net.Conn
	b       []byte // what is left to write
	ran     bool   // the function has run (and written)
	werr    error  // the write's error
	clock   *runClock
	written time.Duration // when the request was written
	fn      func(fd uintptr) bool
}

func newSendWaiter(c net.Conn) *sendWaiter {
	rc := tcpRawConn(c)
	if rc == nil {
		return nil
	}
	s := &sendWaiter{rc: rc, conn: c}
	s.fn = s.step
	return s
}

func (s *sendWaiter) step(fd uintptr) bool {
	if s.ran {
		return true // readable, or woken: the read that follows says which
	}
	s.ran = true
	for len(s.b) > 0 {
		n, err := syscall.Write(int(fd), s.b)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return true // the send buffer is full: the caller writes the rest
		case err != nil:
			s.werr = err
			return true
		}
		s.b = s.b[n:]
	}
	s.written = s.clock.now()
	return false
}

// writeThenWait writes b and waits until the connection is readable (or its read
// deadline passes, or it is closed). rest is what was not written (the caller writes
// it the ordinary way); err is the write's error, as net.Conn.Write reports it.
func (s *sendWaiter) writeThenWait(b []byte, clock *runClock) (rest []byte, err error) {
	s.b, s.ran, s.werr, s.clock = b, false, nil, clock
	_ = s.rc.Read(s.fn) // a wait that ended early leaves its cause to the next read
	rest, err = s.b, s.werr
	s.b = nil
	if err != nil {
		return nil, &net.OpError{Op: "write", Net: "tcp", Source: s.conn.LocalAddr(), Addr: s.conn.RemoteAddr(), Err: os.NewSyscallError("write", err)}
	}
	if !s.ran {
		// Closed, or the deadline had passed, before anything was written: the
		// ordinary write meets the same condition.
		return b, nil
	}
	return rest, nil
}
