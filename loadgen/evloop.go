package loadgen

// The event loop's choice, shared by every OS (the loop itself is evloop_linux.go).

// forceGoroutines sends every request the goroutine way whatever the run's Transport:
// a test's -evloop=off, which runs the package's tests over the reference path.
var forceGoroutines bool

// loopable reports whether the run's requests can go through the event loops: the
// Transport is TransportAuto, the closed loop without a ramp, no streaming, plain
// http:// targets dialled over TCP, no per-request cancellation (cancel_fraction) and
// no prefill cap, the real HTTP sender. Anything else, and anything a loop meets that
// it does not handle itself (a conversation of several turns, a streaming turn, an
// answer that is not plain), goes the goroutine way (worker.do).
func (r *runner) loopable() bool {
	if forceGoroutines || r.cfg.Transport == TransportGoroutines || r.pacer != nil || r.cfg.Streams() || r.cfg.Ramp > 0 || r.cfg.CancelFraction > 0 || r.prefill != nil ||
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
