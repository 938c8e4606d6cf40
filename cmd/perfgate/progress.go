package main

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// progress shows a run's progress: on a terminal a live line redrawn in place (requests
// done, rate, errors, running TTFT p50/p99), otherwise a plain line every interval.
// Its sink is called by the load generator once per finished request.
type progress struct {
	w        io.Writer
	tty      bool
	width    int // terminal width; the live line is cut to fit (0 = no limit)
	total    int // expected requests; 0 = unknown
	interval time.Duration
	label    string

	mu      sync.Mutex
	start   time.Time
	done    int
	errors  int
	warmup  int
	ttft    []float64 // ms, the most recent maxKeep
	next    int
	stop    chan struct{}
	stopped chan struct{}
	lastLen int
}

const maxKeep = 20000 // TTFT samples kept for the running quantiles (a ring)

func newProgress(w io.Writer, tty bool, total int, label string) *progress {
	p := &progress{w: w, tty: tty, total: total, label: label, interval: 5 * time.Second, stop: make(chan struct{}), stopped: make(chan struct{})}
	if tty {
		p.interval = 200 * time.Millisecond
	}
	return p
}

// sink records one finished request.
func (p *progress) sink(r record.Client) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.Warmup {
		p.warmup++
		return
	}
	p.done++
	if !r.OK() {
		p.errors++
		return
	}
	if ttft, ok := metric.TTFT(&r); ok { // TTFT alone: deriving every value cost ~0.3 µs a request
		v := metric.MS(ttft)
		if len(p.ttft) < maxKeep {
			p.ttft = append(p.ttft, v)
		} else {
			p.ttft[p.next] = v
			p.next = (p.next + 1) % maxKeep
		}
	}
}

// begin starts the ticker.
func (p *progress) begin() {
	p.start = time.Now()
	go func() {
		defer close(p.stopped)
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.print(false)
			case <-p.stop:
				return
			}
		}
	}()
}

// end stops the ticker and prints the final state (ending the live line).
func (p *progress) end() {
	close(p.stop)
	<-p.stopped
	p.print(true)
}

func (p *progress) line() string {
	p.mu.Lock()
	done, errs, warm := p.done, p.errors, p.warmup
	tt := slices.Clone(p.ttft)
	p.mu.Unlock()
	el := time.Since(p.start)
	rate := 0.0
	if s := el.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	count := fmt.Sprintf("%d", done)
	if p.total > 0 {
		count = fmt.Sprintf("%d/%d", done, p.total)
	}
	s := fmt.Sprintf("%s %s requests  %.1f req/s  errors %d", p.label, count, rate, errs)
	if warm > 0 {
		s += fmt.Sprintf("  warmup %d", warm)
	}
	if len(tt) > 0 {
		slices.Sort(tt)
		s += fmt.Sprintf("  TTFT p50 %.1f ms  p99 %.1f ms", metric.QuantileSorted(tt, 0.5), metric.QuantileSorted(tt, 0.99))
	}
	return s + fmt.Sprintf("  %s", el.Round(100*time.Millisecond))
}

func (p *progress) print(final bool) {
	l := p.line()
	if p.tty && p.width > 1 && len(l) >= p.width {
		l = l[:p.width-1]
	}
	if !p.tty {
		fmt.Fprintln(p.w, l)
		return
	}
	pad := ""
	if n := p.lastLen - len(l); n > 0 {
		pad = fmt.Sprintf("%*s", n, "")
	}
	p.lastLen = len(l)
	fmt.Fprint(p.w, "\r"+l+pad)
	if final {
		fmt.Fprintln(p.w)
	}
}
