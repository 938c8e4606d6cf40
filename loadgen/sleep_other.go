//go:build !(linux || darwin || freebsd)

package loadgen

import "time"

func preciseSleep(d time.Duration) { time.Sleep(d) }
