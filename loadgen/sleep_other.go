//go:build !linux

package loadgen

import "time"

func preciseSleep(d time.Duration) { time.Sleep(d) }
