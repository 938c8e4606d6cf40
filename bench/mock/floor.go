package mockbench

import (
	"slices"
	"sync"
	"syscall"
	"time"
)

// TimerFloor is the Go runtime's own pacing floor, the peer of the mock's emission
// lateness: n goroutines wake at absolute deadlines every period (started spread over
// one period, as the lateness benchmark's streams are) and each wake burns work of CPU
// (a spin, standing in for the mock's and its client's per-token cost), for d. It
// returns the lateness of every wake — how long after its deadline it ran — sorted.
// No sockets, no parsing: whatever the mock adds to this is its own.
func TimerFloor(n int, period, work, d time.Duration) []time.Duration {
	start := time.Now()
	end := start.Add(d)
	var (
		mu  sync.Mutex
		all []time.Duration
		wg  sync.WaitGroup
	)
	for i := range n {
		wg.Go(func() {
			dl := start.Add(time.Duration(i) * period / time.Duration(n))
			t := time.NewTimer(time.Hour)
			defer t.Stop()
			var late []time.Duration
			for {
				dl = dl.Add(period)
				if dl.After(end) {
					break
				}
				if left := time.Until(dl); left > 0 {
					t.Reset(left)
					<-t.C
				}
				late = append(late, time.Since(dl))
				spin(work)
			}
			mu.Lock()
			all = append(all, late...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(all)
	return all
}

func spin(d time.Duration) {
	for t := time.Now(); time.Since(t) < d; {
	}
}

// Quantile returns the p-quantile of sorted (nearest rank), 0 if empty.
func Quantile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(p*float64(len(sorted))), len(sorted)-1)]
}

// CPUTime returns the CPU time (user + system) the process has used so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
