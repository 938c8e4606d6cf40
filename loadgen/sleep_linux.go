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

// lockPreciseThread locks the calling goroutine to its OS thread and sets the thread's
// timer slack (how late the kernel may fire a timer to batch wake-ups, 50 µs by
// default) to 1 ns, so its precise sleeps are late only by the scheduler's delay. The
// open loop's send loop calls it once and never unlocks: the thread, with its slack,
// ends with the goroutine. (The sender that waited before it set and restored the
// slack around every sleep: two system calls a request.)
func lockPreciseThread() {
	runtime.LockOSThread()
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0) //nolint:errcheck // a coarser wake-up at worst
}

// preciseSleep blocks the calling thread in nanosleep: the kernel's high-resolution
// timers wake it within tens of µs, unlike Go timers (with lockPreciseThread's timer
// slack; at the default slack up to 50 µs later).
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
