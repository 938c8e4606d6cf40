package loadgen

// The goroutine workers: the closed loop's reference transport, the one a reader
// follows from the pacing to the wire. Each worker is a goroutine that sends
// conversation after conversation, waiting on each request's connection in the
// runtime's poller (worker.do). The event loops (evloop_linux.go) are the same closed
// loop, faster, for the requests they can take.

import (
	"context"
	"sync"
	"time"
)

// workers is the closed loop over goroutines: n workers in the run (local of them in
// this shard, global(i) being the run's number of the shard's i-th), each sending
// conversation after conversation from wl through send until the run ends. A ramp
// starts global worker w at Ramp·w/n.
type workers struct {
	wl     *workload
	send   sendPath
	clock  *runClock
	n      int
	local  int
	global func(i int) int
	ramp   time.Duration
}

var _ driver = (*workers)(nil)

// newWorkers returns the closed loop's n workers over goroutines, this shard's share
// of them (see Config.shardWorkers).
func newWorkers(cfg *Config, n int, wl *workload, send sendPath, clock *runClock) *workers {
	local, global := cfg.shardWorkers(n)
	return &workers{wl: wl, send: send, clock: clock, n: n, local: local, global: global, ramp: cfg.Ramp}
}

func (d *workers) drive(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range d.local {
		if ctx.Err() != nil {
			return // interrupted while starting workers
		}
		var start time.Duration
		if d.ramp > 0 && d.n > 1 {
			start = time.Duration(int64(d.ramp) * int64(d.global(i)) / int64(d.n))
		}
		wg.Go(func() {
			if !sleep(ctx, start-d.clock.now()) {
				return
			}
			d.work(ctx)
		})
	}
}

// work is a closed-loop worker: conversation after conversation until the run ends.
func (d *workers) work(ctx context.Context) {
	for {
		idx, conv, ok := d.wl.take(ctx)
		if !ok {
			return
		}
		if !d.send.conversation(ctx, conv, idx, 0, false, nil) {
			return
		}
	}
}
