package loadgen

// The event loop's choice, shared by every OS (the loop itself is evloop_linux.go).

import (
	"os"
	"strconv"
)

// eventLoopOff turns the event loops off: PERFGATE_EVENT_LOOP=off in the environment
// (an escape hatch, and the peer the benchmark compares with), or a test's -evloop=off.
var eventLoopOff = os.Getenv("PERFGATE_EVENT_LOOP") == "off"

// eventLoopCount is how many event loops a run uses at most: PERFGATE_EVENT_LOOPS, or
// 0 = one per processor (GOMAXPROCS).
var eventLoopCount, _ = strconv.Atoi(os.Getenv("PERFGATE_EVENT_LOOPS"))

// loopable reports whether the run's requests can go through the event loops: the
// closed loop without a ramp, no streaming, plain http:// targets dialled over TCP, no
// per-request cancellation (cancel_fraction) and no prefill cap, the real HTTP sender.
// Anything else, and anything a loop meets that it does not handle itself (a
// conversation of several turns, a streaming turn, an answer that is not plain),
// goes the goroutine way (worker.do).
func (r *runner) loopable() bool {
	if eventLoopOff || r.pacer != nil || r.cfg.Streams() || r.cfg.Ramp > 0 || r.cfg.CancelFraction > 0 || r.prefill != nil ||
		r.cfg.SessionHeader != "" || (r.cfg.ConnectionReuse != "" && r.cfg.ConnectionReuse != ReusePooled) {
		return false
	}
	if _, ok := r.sender.(*httpSender); !ok {
		return false
	}
	for _, t := range r.targets {
		if t.tls || t.dialer.dial != nil {
			return false
		}
	}
	return true
}
