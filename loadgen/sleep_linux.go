//go:build linux

package loadgen

import (
	"syscall"
	"time"
)

// Linux prctl options for the calling thread's timer slack (linux/prctl.h).
const (
	prSetTimerSlack = 29
	prGetTimerSlack = 30
)

// preciseSleep blocks the calling thread in nanosleep: the kernel's high-resolution
// timers wake it within tens of µs, unlike Go timers. The thread's timer slack (how
// late the kernel may fire a timer to batch wake-ups, 50 µs by default) is set to
// 1 ns for the sleep and restored after, so the wake-up is late only by the
// scheduler's delay.
func preciseSleep(d time.Duration) {
	old, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if e == 0 && old > 1 {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0); e == 0 {
			defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, old, 0) //nolint:errcheck
		}
	}
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
