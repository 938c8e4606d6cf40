//go:build linux

package loadgen

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// contextSwitches returns the context switches of all the process's threads so far:
// voluntary ones (a thread blocked: each is a later wake-up) and involuntary ones.
func contextSwitches() (vol, invol int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return ru.Nvcsw, ru.Nivcsw
}

// bareWaits is the machine's own timer wake-up latency, the floor under any send
// accuracy a sleeping waiter reaches (see poissonOvershoots): each wait is a
// nanosleep to the due time (no early wake, no spin) on a thread of its own with 1 ns
// timer slack and nothing else to do.
func bareWaits(n int, rate float64, seed uint64) []float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)         //nolint:errcheck
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, old, 0) //nolint:errcheck
	return poissonOvershoots(n, rate, seed, func(d time.Duration) {
		ts := syscall.NsecToTimespec(int64(d))
		syscall.Syscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0) //nolint:errcheck
	})
}
