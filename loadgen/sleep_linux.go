//go:build linux

package loadgen

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling thread in nanosleep: the kernel's high-resolution
// timers wake it within tens of µs, unlike Go timers.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
