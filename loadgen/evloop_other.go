//go:build !linux

package loadgen

import "context"

// drive sends with the goroutine workers: the event loop is Linux's (epoll).
func (d *eventLoops) drive(ctx context.Context) { d.fallback.drive(ctx) }
