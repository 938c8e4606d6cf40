package mockserver

import (
	"math/rand/v2"
	"net"
	"time"
)

// Pacing: when each chunk of a response may go out. A stream's chunks wait for absolute
// deadlines from the receive time (TTFT, then one ITL per token, so there is no drift)
// or for the batching scheduler's steps; a non-generating request waits TTFT-style
// latency once.

// pacer waits for each chunk's moment: absolute deadlines from the receive time
// (no drift), or the batching scheduler's steps.
type pacer struct {
	s        *Server
	c        *call
	g        *gen
	conn     net.Conn
	out      streamOut   // flushed before each sleep (nil: nothing to flush)
	dues     []time.Time // deadlines of the chunks queued in out, for the lateness histogram
	timer    *time.Timer
	deadline time.Time
	q        *bseq
	started  bool
	sent     int // tokens whose deadline is in p.deadline
}

// wait blocks until tokens [0, upto) may be sent. It returns false if the server is
// cutting streams or the client has gone.
func (p *pacer) wait(upto int) bool {
	if p.s.lat.fast {
		return true
	}
	if p.q != nil {
		for int(p.q.produced.Load()) < upto {
			if !p.flush() {
				return false
			}
			select {
			case <-p.q.notify:
			case <-p.s.abort:
				return false
			case <-p.tick():
				if connGone(p.conn) {
					return false
				}
			}
		}
		p.due(time.Unix(0, p.q.stepEnd.Load()))
		return true
	}
	if !p.started {
		p.started = true
		p.deadline = p.c.recv.Add(p.g.samp.firstToken(p.c.rec.ISL, p.c.rec.CachedTokens))
		p.sent = 1
	}
	for p.sent < upto {
		p.deadline = p.deadline.Add(p.g.samp.nextToken())
		p.sent++
	}
	for {
		left := time.Until(p.deadline)
		if left <= 0 {
			p.due(p.deadline)
			return true
		}
		if !p.flush() {
			return false
		}
		step := min(left, gonePoll)
		if p.timer == nil {
			p.timer = time.NewTimer(step)
		} else {
			p.timer.Reset(step)
		}
		select {
		case <-p.timer.C:
		case <-p.s.abort:
			return false
		}
		if step < left && connGone(p.conn) {
			return false
		}
	}
}

// gonePoll is how often a long wait checks whether the client has gone.
const gonePoll = 50 * time.Millisecond

// due notes the deadline of a chunk about to be queued; its lateness is taken when it
// is written (see emitted).
func (p *pacer) due(t time.Time) {
	if p.out == nil {
		p.s.late.observe(time.Since(t))
		return
	}
	p.dues = append(p.dues, t)
}

// emitted observes the lateness of the chunks just written: write time minus deadline.
func (p *pacer) emitted() {
	if len(p.dues) == 0 {
		return
	}
	now := time.Now()
	for _, t := range p.dues {
		p.s.late.observe(now.Sub(t))
	}
	p.dues = p.dues[:0]
}

// flush puts queued chunks on the wire before the pacer sleeps; false if the client
// has gone.
func (p *pacer) flush() bool {
	if p.out == nil {
		return true
	}
	if err := p.out.flush(); err != nil {
		p.c.rec.ClientGone = true
		return false
	}
	p.emitted()
	return true
}

func (p *pacer) tick() <-chan time.Time {
	if p.timer == nil {
		p.timer = time.NewTimer(gonePoll)
	} else {
		p.timer.Reset(gonePoll)
	}
	return p.timer.C
}

func (p *pacer) close() {
	if p.timer != nil {
		p.timer.Stop()
	}
	if p.q != nil {
		p.q.cancelled.Store(true)
	}
}

func (s *Server) newPacer(c *call, g *gen, conn net.Conn) *pacer {
	p := &pacer{s: s, c: c, g: g, conn: conn}
	if s.sched != nil && g.target > 0 {
		p.q = s.sched.submit(c.rec.ISL-c.rec.CachedTokens, g.target) // the prefix cache spares its tokens the prefill
	}
	return p
}

// simpleWait applies TTFT-style latency (no ITL) to a non-generating request.
func (s *Server) simpleWait(c *call, rng *rand.Rand, conn net.Conn) bool {
	samp := s.lat.sampler(rng, &s.inflight, &s.streams)
	return s.sleep(c, samp.firstToken(c.rec.ISL, c.rec.CachedTokens), conn)
}

// sleep waits d from c's receipt; false if the server is shutting down (c is then
// recorded as such).
func (s *Server) sleep(c *call, d time.Duration, _ net.Conn) bool {
	if d <= 0 {
		return true
	}
	deadline := c.recv.Add(d)
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.abort:
		c.rec.Fault, c.rec.Status = "shutdown", 503
		s.finish(c, nil)
		return false
	}
}
