//go:build !linux

package loadgen

import (
	"time"
)

func contextSwitches() (vol, invol int64) { return 0, 0 }

// bareWaits: see wake_linux_test.go; elsewhere the waits are Go timers.
func bareWaits(n int, rate float64, seed uint64) []float64 {
	return poissonOvershoots(n, rate, seed, time.Sleep)
}
