//go:build linux

package loadgen

import (
	"encoding/binary"
	"io"
	"net"
	"syscall"
	"time"
)

// Linux SO_TIMESTAMPING flags (linux/net_tstamp.h).
const (
	sofTimestampingRxSoftware = 1 << 3
	sofTimestampingSoftware   = 1 << 4
)

// kernelStamper reads a TCP connection with recvmsg and returns, with each read, the
// kernel's software receive timestamp of the last segment read (SO_TIMESTAMPING):
// when the bytes reached the host, independent of when this process got the CPU.
type kernelStamper struct {
	rc  syscall.RawConn
	oob []byte
	// The current read's buffer and results, for recv (a method value made once, so
	// a read allocates no closure).
	p        []byte
	n, oobn  int
	rerr     error
	recvFunc func(fd uintptr) bool
}

// newKernelStamper enables receive timestamps on c; nil if c is not TCP or the kernel
// refuses.
func newKernelStamper(c net.Conn) *kernelStamper {
	rc := tcpRawConn(c)
	if rc == nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPING, sofTimestampingRxSoftware|sofTimestampingSoftware)
	}); err != nil || serr != nil {
		return nil
	}
	k := &kernelStamper{rc: rc, oob: make([]byte, 128)}
	k.recvFunc = k.recv
	return k
}

func (k *kernelStamper) recv(fd uintptr) bool {
	k.n, k.oobn, _, _, k.rerr = syscall.Recvmsg(int(fd), k.p, k.oob, 0)
	return k.rerr != syscall.EAGAIN
}

// tcpRawConn returns c's raw connection for system calls on its descriptor; nil if c
// is not plain TCP.
func tcpRawConn(c net.Conn) syscall.RawConn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// read reads into p; ts is the receive time (zero if the kernel gave none).
func (k *kernelStamper) read(p []byte) (n int, ts time.Time, err error) {
	k.p = p
	err = k.rc.Read(k.recvFunc)
	k.p = nil
	n, oobn, rerr := k.n, k.oobn, k.rerr
	if err == nil {
		err = rerr
	}
	if n < 0 {
		n = 0
	}
	if err != nil {
		return n, ts, err
	}
	if n == 0 && len(p) > 0 {
		return 0, ts, io.EOF
	}
	return n, parseTimestamping(k.oob[:oobn]), nil
}

// parseTimestamping returns the software timestamp of an SCM_TIMESTAMPING control
// message (struct scm_timestamping: three timespecs, [0] = software).
func parseTimestamping(oob []byte) time.Time {
	const hdr = 16 // struct cmsghdr on 64-bit Linux: len uint64, level int32, type int32
	for len(oob) >= hdr {
		l := int(binary.NativeEndian.Uint64(oob))
		level := int32(binary.NativeEndian.Uint32(oob[8:]))
		typ := int32(binary.NativeEndian.Uint32(oob[12:]))
		if l < hdr || l > len(oob) {
			break
		}
		if level == syscall.SOL_SOCKET && typ == syscall.SCM_TIMESTAMPING && l >= hdr+16 {
			sec := int64(binary.NativeEndian.Uint64(oob[hdr:]))
			nsec := int64(binary.NativeEndian.Uint64(oob[hdr+8:]))
			if sec != 0 || nsec != 0 {
				return time.Unix(sec, nsec)
			}
		}
		l = (l + 7) &^ 7
		if l >= len(oob) {
			break
		}
		oob = oob[l:]
	}
	return time.Time{}
}
