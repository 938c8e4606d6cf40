//go:build !linux

package loadgen

import "time"

// lockPreciseThread: a thread's timer slack is a Linux setting.
func lockPreciseThread() {}

func preciseSleep(d time.Duration) { time.Sleep(d) }
