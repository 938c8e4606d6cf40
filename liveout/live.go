package liveout

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/record"
)

// exporter pushes snapshots to one receiver.
type exporter interface {
	push(ctx context.Context, s *snapshot) error
	close(ctx context.Context) error
}

// Stats say what the live outputs did over a run.
type Stats struct {
	// Records is the finished requests Record was given; Dropped those it dropped
	// because the buffer was full (the run's recording has them all).
	Records, Dropped uint64
	// Outputs is each output's pushes.
	Outputs []OutputStats
	// Warnings are the problems met, one line each, secrets redacted.
	Warnings []string
}

// OutputStats count one output's pushes: done, failed, and skipped because the one
// before was still going (a slow receiver).
type OutputStats struct {
	Output                  string // Output.String(): the URL redacted
	Pushes, Failed, Skipped int64
}

// Live streams one run's metrics. Make it with [Start]; give [Live.Record] to the load
// generator as its sink; end it with [Live.Stop].
type Live struct {
	cfg     Config
	ch      chan event
	records atomic.Uint64
	dropped atomic.Uint64
	stopped atomic.Bool
	st      *state
	start   time.Time
	pushers []*pusher
	aggDone chan struct{}
	stop    chan struct{}
	tickers sync.WaitGroup
	warn    func(string)

	mu       sync.Mutex
	prev     *snapshot
	warnings []string
}

// pusher is one output and its counts.
type pusher struct {
	out                     Output
	exp                     exporter
	status                  *atomic.Int32 // the last HTTP status the receiver answered
	busy                    atomic.Bool
	inflight                sync.WaitGroup
	pushes, failed, skipped atomic.Int64
	warned                  atomic.Bool
}

// Start validates cfg, makes each output's exporter and pushes the empty run once to
// each, waiting at most the interval: a receiver that answers that push with a 4xx is
// an error wrapping [ErrInvalid] (nothing would ever be accepted), one that cannot be
// reached or fails otherwise is a warning (it may come up). Then it pushes every
// interval until [Live.Stop]. warn, if not nil, is called with each warning as it
// happens (at most one per output for failed pushes), secrets redacted.
func Start(ctx context.Context, cfg Config, warn func(string)) (*Live, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Live{cfg: cfg, ch: make(chan event, cfg.buffer()), st: newState(), start: time.Now(),
		aggDone: make(chan struct{}), stop: make(chan struct{}), warn: warn}
	for _, o := range cfg.Outputs {
		p, err := newPusher(o, cfg)
		if err != nil {
			l.closeAll(ctx)
			return nil, err
		}
		l.pushers = append(l.pushers, p)
	}
	first := l.snapshot()
	var errs []error
	var wg sync.WaitGroup
	res := make([]error, len(l.pushers))
	for i, p := range l.pushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = p.pushNow(ctx, first, cfg.interval())
		}()
	}
	wg.Wait()
	for i, p := range l.pushers {
		switch err := res[i]; {
		case err == nil:
		case refused(p.status.Load()):
			errs = append(errs, fmt.Errorf("%w: %s: the receiver refused the first push (HTTP %d): %s", ErrInvalid, p.out, p.status.Load(), scrub(err.Error(), p.out.URL)))
		default:
			l.warnOnce(p, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		l.closeAll(ctx)
		return nil, err
	}
	go l.aggregate()
	l.tickers.Add(1)
	go l.tick()
	return l, nil
}

// refused reports whether an HTTP status says the push can never succeed as sent:
// a 4xx other than 408 (timeout) and 429 (rate limit).
func refused(status int32) bool {
	return status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}

func newPusher(o Output, cfg Config) (*pusher, error) {
	p := &pusher{out: o, status: new(atomic.Int32)}
	client := &http.Client{Transport: newTransport(o.URL, p.status), Timeout: cfg.interval()}
	var err error
	switch o.Kind {
	case PrometheusRW:
		p.exp, err = newPromRW(o.URL, client, cfg.Labels)
	case OTLP:
		p.exp, err = newOTLP(o.URL, client, cfg.Labels)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalid, o, scrub(err.Error(), o.URL))
	}
	return p, nil
}

// pushNow pushes s and waits for it, bounded by timeout.
func (p *pusher) pushNow(ctx context.Context, s *snapshot, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	p.pushes.Add(1)
	err := p.exp.push(ctx, s)
	if err != nil {
		p.failed.Add(1)
	}
	return err
}

// Record hands r to the aggregator without waiting: when the buffer is full the
// record is dropped and counted. It is the load generator's sink (loadgen.Run's
// sink, run.OnRecord); it must not be called after Stop.
func (l *Live) Record(r record.Client) {
	l.records.Add(1)
	select {
	case l.ch <- eventOf(&r):
	default:
		l.dropped.Add(1)
	}
}

func (l *Live) aggregate() {
	defer close(l.aggDone)
	for e := range l.ch {
		l.st.add(e)
	}
}

func (l *Live) snapshot() *snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.st.snap(l.start, time.Now(), l.dropped.Load(), l.prev)
	l.prev = s
	return s
}

// tick pushes a snapshot every interval; an output still busy with the one before
// skips it (its counters are cumulative: the next push carries it).
func (l *Live) tick() {
	defer l.tickers.Done()
	t := time.NewTicker(l.cfg.interval())
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			s := l.snapshot()
			for _, p := range l.pushers {
				if !p.busy.CompareAndSwap(false, true) {
					p.skipped.Add(1)
					continue
				}
				p.inflight.Add(1)
				go func() {
					defer p.inflight.Done()
					defer p.busy.Store(false)
					if err := p.pushNow(context.Background(), s, l.cfg.interval()); err != nil {
						l.warnOnce(p, err)
					}
				}()
			}
		}
	}
}

func (l *Live) warnOnce(p *pusher, err error) {
	if !p.warned.CompareAndSwap(false, true) {
		return
	}
	msg := fmt.Sprintf("live output %s: push failed (%s); the run goes on, pushes continue", p.out, scrub(err.Error(), p.out.URL))
	l.addWarning(msg)
}

func (l *Live) addWarning(msg string) {
	l.mu.Lock()
	l.warnings = append(l.warnings, msg)
	l.mu.Unlock()
	if l.warn != nil {
		l.warn(msg)
	}
}

// Stop ends the pushes: it waits for the records given so far to be aggregated and
// for pushes in flight, pushes the whole run once more to each output (each bounded
// by the interval, and by ctx), closes the exporters and returns the counts. A
// receiver that is down costs at most the interval here.
func (l *Live) Stop(ctx context.Context) Stats {
	if !l.stopped.CompareAndSwap(false, true) {
		return l.stats()
	}
	close(l.stop)
	l.tickers.Wait()
	close(l.ch)
	<-l.aggDone
	last := l.snapshot()
	var wg sync.WaitGroup
	for _, p := range l.pushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.inflight.Wait()
			if err := p.pushNow(ctx, last, l.cfg.interval()); err != nil {
				l.warnOnce(p, err)
			}
		}()
	}
	wg.Wait()
	l.closeAll(ctx)
	if d := l.dropped.Load(); d > 0 {
		l.addWarning(fmt.Sprintf("live output: %d of %d finished requests dropped (the buffer of %d was full); the recording and metrics.json have them all", d, l.records.Load(), l.cfg.buffer()))
	}
	return l.stats()
}

func (l *Live) stats() Stats {
	st := Stats{Records: l.records.Load(), Dropped: l.dropped.Load()}
	for _, p := range l.pushers {
		st.Outputs = append(st.Outputs, OutputStats{Output: p.out.String(), Pushes: p.pushes.Load(), Failed: p.failed.Load(), Skipped: p.skipped.Load()})
	}
	l.mu.Lock()
	st.Warnings = append([]string(nil), l.warnings...)
	l.mu.Unlock()
	return st
}

func (l *Live) closeAll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	for _, p := range l.pushers {
		_ = p.exp.close(ctx)
	}
}

// transport sends a receiver URL's user information as HTTP basic authentication
// (never in the URL an error may print), and records each answer's status.
type transport struct {
	base       http.RoundTripper
	user, pass string
	auth       bool
	query      string // the URL's query, for an exporter that drops it
	status     *atomic.Int32
}

func newTransport(raw string, status *atomic.Int32) *transport {
	t := &transport{base: http.DefaultTransport, status: status}
	if u, err := url.Parse(raw); err == nil {
		t.query = u.RawQuery
		if u.User != nil {
			t.user, t.auth = u.User.Username(), true
			t.pass, _ = u.User.Password()
		}
	}
	return t
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.auth || (t.query != "" && req.URL.RawQuery == "") {
		req = req.Clone(req.Context())
		if t.auth {
			req.SetBasicAuth(t.user, t.pass)
		}
		if req.URL.RawQuery == "" {
			req.URL.RawQuery = t.query
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil {
		t.status.Store(int32(resp.StatusCode))
	}
	return resp, err
}

// stripUser returns raw without its user information (sent by transport instead).
func stripUser(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	u.User = nil
	return u, nil
}
