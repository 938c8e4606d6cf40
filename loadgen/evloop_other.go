//go:build !linux

package loadgen

import "context"

// eventLoops reports false: the event loop is Linux's (epoll); the goroutine way sends.
func (r *runner) eventLoops(ctx context.Context, n int) bool { return false }
