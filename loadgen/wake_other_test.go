//go:build !linux

package loadgen

import (
	"math/rand/v2"
	"time"
)

func contextSwitches() (vol, invol int64) { return 0, 0 }

// bareWaits: see wake_linux_test.go; elsewhere the waits are Go timers.
func bareWaits(n int, rate float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	start := time.Now()
	due := time.Duration(0)
	over := make([]float64, 0, n)
	for range n {
		due += time.Duration(rng.ExpFloat64() / rate * 1e9)
		time.Sleep(due - time.Since(start))
		over = append(over, float64(time.Since(start)-due)/1e6)
	}
	return over
}
