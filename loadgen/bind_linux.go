//go:build linux

package loadgen

import "syscall"

// ipBindAddressNoPort is IP_BIND_ADDRESS_NO_PORT (linux/in.h; the same on every
// architecture). Package syscall has it for a few architectures only.
const ipBindAddressNoPort = 0x18

// bindNoPort is a net.Dialer Control function for dials from a chosen source address:
// the kernel then picks the source port at connect time, unique per destination,
// instead of at bind time, unique per source address over every destination. Binding
// first would cap each source address at one ephemeral range in total, and makes the
// kernel's port search slow (it scans the used ports) as the range fills. A kernel
// without the option (before 4.2) keeps the old behaviour.
func bindNoPort(network, address string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort, 1)
	})
}
