package loadgen

// The event loops' transport and its choice, shared by every OS (the loop itself is
// evloop_linux.go; elsewhere the goroutine workers send).

import (
	"sync/atomic"

	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// forceGoroutines sends every request the goroutine way whatever the run's Transport:
// a test's -evloop=off, which runs the package's tests over the reference path.
var forceGoroutines bool

// loopable reports whether the run's requests can go through the event loops: the
// Transport is TransportAuto, the closed loop (pacer nil) without a ramp, no
// streaming, plain http:// targets dialled over TCP, no per-request cancellation
// (cancel_fraction) and no prefill cap, the real HTTP sender s. Anything else, and
// anything a loop meets that it does not handle itself (a conversation of several
// turns, a streaming turn, an answer that is not plain), goes the goroutine way
// (worker.do).
func loopable(cfg *Config, pacer Pacer, s sender, targets []*target) bool {
	if forceGoroutines || cfg.Transport == TransportGoroutines || pacer != nil || cfg.Streams() || cfg.Ramp > 0 || cfg.CancelFraction > 0 || cfg.PrefillConcurrency > 0 ||
		cfg.SessionHeader != "" || (cfg.ConnectionReuse != "" && cfg.ConnectionReuse != ReusePooled) {
		return false
	}
	if _, ok := s.(*httpSender); !ok {
		return false
	}
	for _, t := range targets {
		if t.tls || t.dialer.dial != nil {
			return false
		}
	}
	return true
}

// loopPath is what an event loop asks of the run's send path (the runner's): a
// conversation it does not send itself, sent the goroutine way, and the two halves
// around a request it sends itself.
type loopPath interface {
	sendPath
	// begin readies request idx, the one turn of conv, in sc and q (see runner.begin).
	begin(conv dataset.Conversation, idx int, sc *scratch, q *turnReq) (tg *target, rec *record.Client, ok bool)
	// end finishes it once sent (see runner.end).
	end(q *turnReq, sc *scratch, rec *record.Client, tg *target)
}

// eventLoops is the closed loop's transport over event loops: its n workers' requests
// go through at most most loops (Config.EventLoops; see loops), which draw from wl and
// send through send, on Linux (evloop_linux.go). Where there is no epoll, the
// goroutine workers (fallback) send instead.
type eventLoops struct {
	wl       *workload
	send     loopPath
	sender   sender // a streaming turn's, handed to a goroutine
	clock    *runClock
	targets  []*target
	most, n  int
	served   *atomic.Int64 // requests the loops sent and finished themselves
	fallback driver
}

var _ driver = (*eventLoops)(nil)
