//go:build !unix

package sse

import "time"

var started = time.Now()

// cpuTime returns the time since the tests started where the CPU time is not at hand.
func cpuTime() time.Duration { return time.Since(started) }
