package loadgen

// The over-saturation detector: a server offered more than it can serve queues the
// excess, so the requests in flight and the time to first token grow while the
// completions per second stay where they were. Past that point every further second
// measures a growing queue, not the server at the load asked for. guidellm's
// over-saturation constraint stops such a run by testing both series for a rising
// linear trend; this is the same method, with a throughput check added
// (docs/abort.md says what was taken and what differs).

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/record"
)

// AbortSaturation: the over-saturation detector stopped the run (Self.AbortedBy): the
// server could not keep up with the offered load. It is judged as an objective
// failure (`perfgate profile` exits 99), as an abort rule is, and a sweep runs no
// higher load after it.
const AbortSaturation = "saturation"

// OverSaturation configures the over-saturation detector ([NewSaturationWatch]). The
// zero value is guidellm's defaults. docs/abort.md.
type OverSaturation struct {
	// MinDuration is how long into the run nothing is judged (guidellm's
	// min_seconds): a server's first seconds, its queue filling to its batch size,
	// look like saturation. 0 = DefaultSaturationMinDuration.
	MinDuration time.Duration `json:"min_duration,omitempty"`
	// Window is how far back the trends are fitted (guidellm's max_window_seconds).
	// 0 = DefaultSaturationWindow.
	Window time.Duration `json:"window,omitempty"`
	// MinTTFT is the TTFT at least half of the window's first tokens must exceed
	// (guidellm's minimum_ttft): a queue that grows while TTFT is still small is not
	// yet one worth stopping for. 0 = DefaultSaturationMinTTFT; < 0 = no floor.
	MinTTFT time.Duration `json:"min_ttft,omitempty"`
	// MaxMOE is the margin of error a rising trend must have less than (guidellm's
	// moe_threshold): the half-width of the slope's confidence interval over the
	// slope. 0 = DefaultSaturationMaxMOE.
	MaxMOE float64 `json:"max_moe,omitempty"`
	// Confidence is the level of that interval (Student t). 0 = 0.95; else in (0, 1).
	Confidence float64 `json:"confidence,omitempty"`
	// MinPoints is the fewest effective points a trend is fitted on (guidellm's
	// minimum_window_size). 0 = DefaultSaturationMinPoints; else at least 3.
	MinPoints int `json:"min_points,omitempty"`
	// FlatThroughput is how much faster, as a fraction, the window's second half may
	// complete requests than its first half for the throughput to count as flat: a
	// load that is rising (a rate series, a ramp) raises the requests in flight and
	// the completions together, and is not saturation. 0 = DefaultSaturationFlat.
	FlatThroughput float64 `json:"flat_throughput,omitempty"`
}

// Over-saturation defaults: guidellm's, but for DefaultSaturationFlat, which is
// perfgate's own.
const (
	DefaultSaturationMinDuration = 30 * time.Second
	DefaultSaturationWindow      = 120 * time.Second
	DefaultSaturationMinTTFT     = 2500 * time.Millisecond
	DefaultSaturationMaxMOE      = 2.0
	DefaultSaturationConfidence  = 0.95
	DefaultSaturationMinPoints   = 5
	DefaultSaturationFlat        = 0.10
	// SaturationSlots is how many effective points a whole window holds: points
	// closer together than Window/SaturationSlots are counted as one in a trend's
	// degrees of freedom, as requests that end within the same second are not
	// independent (guidellm counts at most one per second of its 120 s window).
	SaturationSlots = 120
	// MaxSaturationPoints bounds each series a watch keeps (the window's latest TTFTs
	// and in-flight samples), so its memory and each look's cost stay bounded at any
	// rate.
	MaxSaturationPoints = 10_000
)

// WithDefaults returns c with its zero fields set to their defaults.
func (c OverSaturation) WithDefaults() OverSaturation {
	c.MinDuration = cmp.Or(c.MinDuration, DefaultSaturationMinDuration)
	c.Window = cmp.Or(c.Window, DefaultSaturationWindow)
	c.MinTTFT = cmp.Or(c.MinTTFT, DefaultSaturationMinTTFT)
	c.MaxMOE = cmp.Or(c.MaxMOE, DefaultSaturationMaxMOE)
	c.Confidence = cmp.Or(c.Confidence, DefaultSaturationConfidence)
	c.MinPoints = cmp.Or(c.MinPoints, DefaultSaturationMinPoints)
	c.FlatThroughput = cmp.Or(c.FlatThroughput, DefaultSaturationFlat)
	return c
}

// Validate reports every field out of its range, each named by its JSON key.
func (c OverSaturation) Validate() error {
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
	if c.MinDuration < 0 {
		bad("min_duration %v: want a duration >= 0", c.MinDuration)
	}
	if c.Window < 0 {
		bad("window %v: want a duration >= 0", c.Window)
	}
	if !(c.MaxMOE >= 0) || math.IsInf(c.MaxMOE, 0) {
		bad("max_moe %v: want a number >= 0", c.MaxMOE)
	}
	if !(c.Confidence >= 0 && c.Confidence < 1) {
		bad("confidence %v: want a level in (0, 1), 0 = 0.95", c.Confidence)
	}
	if c.MinPoints != 0 && c.MinPoints < 3 {
		bad("min_points %d: want at least 3 (a trend and its error need 3 points), 0 = %d", c.MinPoints, DefaultSaturationMinPoints)
	}
	if !(c.FlatThroughput >= 0) || math.IsInf(c.FlatThroughput, 0) {
		bad("flat_throughput %v: want a fraction >= 0", c.FlatThroughput)
	}
	return errors.Join(errs...)
}

// An InFlightWatch is an [AbortWatch] that is also told, before each Check, how many
// requests are in flight: sent (or being sent) and not yet ended, warm-ups included.
type InFlightWatch interface {
	AbortWatch
	ObserveInFlight(n int, now time.Duration)
}

// SaturationWatch is the over-saturation detector as an [InFlightWatch]. It keeps,
// over the last Window of the run clock, each successful request's TTFT at its end
// and each sample of the requests in flight with the successful requests ended so
// far, and says stop when, from MinDuration on:
//
//   - the requests in flight rise: a least-squares slope over the window that is
//     positive, with a margin of error (t quantile × standard error / slope) below
//     MaxMOE, the degrees of freedom those of at most SaturationSlots points a window;
//   - the TTFTs rise by the same test, and at least half of them exceed MinTTFT
//     (with fewer than MinPoints TTFTs, as when nothing completes any more, the
//     requests in flight alone decide, as in guidellm);
//   - the throughput is flat: the window's second half completed at most
//     FlatThroughput more requests per second than its first half.
//
// It is pure: times are the run clock's, given by the caller, so tests feed it
// synthetic series in virtual time. Safe for concurrent use.
type SaturationWatch struct {
	c OverSaturation

	mu       sync.Mutex
	ttft     ring // (end, TTFT in seconds) of successful requests
	inflight ring // (sample time, requests in flight)
	done     ring // (sample time, successful requests ended so far), beside inflight
	ok       int64
	xs, ys   []float64           // scratch
	tq       map[float64]float64 // t quantiles by degrees of freedom
}

var _ InFlightWatch = (*SaturationWatch)(nil)

// NewSaturationWatch returns a detector configured by c (its zero fields defaulted).
// c must be valid.
func NewSaturationWatch(c OverSaturation) *SaturationWatch {
	return &SaturationWatch{c: c.WithDefaults(), tq: map[float64]float64{}}
}

// Observe keeps a successful request's TTFT (a request without one, such as a
// non-streamed answer, counts toward the throughput only).
func (w *SaturationWatch) Observe(rec *record.Client, now time.Duration) {
	if !rec.OK() {
		return
	}
	t, ok := rec.TTFT()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ok++
	if ok {
		w.ttft.push(now, t.Seconds())
	}
}

// ObserveInFlight keeps a sample of the requests in flight at now.
func (w *SaturationWatch) ObserveInFlight(n int, now time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inflight.push(now, float64(n))
	w.done.push(now, float64(w.ok))
}

// Check says stop when the run is over-saturated at now, with the trends that say so.
func (w *SaturationWatch) Check(now time.Duration) (Abort, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.c
	from := now - c.Window
	w.ttft.prune(from)
	w.inflight.prune(from)
	w.done.prune(from)
	if now < c.MinDuration {
		return Abort{}, false
	}
	slots := float64(SaturationSlots) * min(now, c.Window).Seconds() / c.Window.Seconds()
	q, qok := w.trend(&w.inflight, slots)
	if !qok || !q.rising(c) {
		return Abort{}, false
	}
	over := 0
	for i := range w.ttft.n {
		if _, y := w.ttft.at(i); y > c.MinTTFT.Seconds() {
			over++
		}
	}
	if w.ttft.n > 2*over {
		return Abort{}, false
	}
	t, tok := w.trend(&w.ttft, slots)
	if tok && !t.rising(c) {
		return Abort{}, false
	}
	r1, r2, flat := w.throughput(c.FlatThroughput)
	if !flat {
		return Abort{}, false
	}
	why := fmt.Sprintf("over-saturated at %v: requests in flight rising %.3g/s (±%.2g/s, %.0f to %.0f)",
		now.Round(time.Millisecond), q.slope, q.half, q.first, q.last)
	if tok {
		why += fmt.Sprintf(", TTFT rising %v/s (±%v/s; %d of %d above %v)", secDur(t.slope), secDur(t.half), over, w.ttft.n, c.MinTTFT)
	} else {
		why += fmt.Sprintf(", %d first tokens (too few to fit)", w.ttft.n)
	}
	why += fmt.Sprintf(", throughput flat (%.3g then %.3g req/s) over the last %v: the server cannot keep up with the offered load", r1, r2, min(now, c.Window).Round(time.Millisecond))
	return Abort{Kind: AbortSaturation, Reason: why}, true
}

// secDur is s seconds as a duration rounded for a message.
func secDur(s float64) time.Duration {
	d := time.Duration(s * float64(time.Second))
	if d.Abs() >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

// fit is a least-squares line through a series: its slope (per second) and the
// half-width of the slope's confidence interval; first and last are the fitted
// values at the window's ends.
type fit struct {
	slope, half, first, last float64
	neff                     float64
}

// rising reports whether the fit rises beyond its noise: a positive slope whose margin
// of error (half-width over slope) is below c.MaxMOE.
func (f fit) rising(c OverSaturation) bool {
	return f.slope > 0 && f.half/f.slope < c.MaxMOE
}

// trend fits s, counting at most slots effective points; ok is false when it has
// fewer than MinPoints.
func (w *SaturationWatch) trend(s *ring, slots float64) (f fit, ok bool) {
	f.neff = min(float64(s.n), slots)
	if s.n < 3 || f.neff < float64(w.c.MinPoints) || f.neff < 3 {
		return f, false
	}
	w.xs, w.ys = w.xs[:0], w.ys[:0]
	for i := range s.n {
		x, y := s.at(i)
		w.xs, w.ys = append(w.xs, x.Seconds()), append(w.ys, y)
	}
	var mx, my float64
	for i := range w.xs {
		mx += w.xs[i]
		my += w.ys[i]
	}
	n := float64(len(w.xs))
	mx, my = mx/n, my/n
	var sxx, sxy, syy float64
	for i := range w.xs {
		dx, dy := w.xs[i]-mx, w.ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if !(sxx > 0) {
		return f, false // every point at one time: no trend to fit
	}
	f.slope = sxy / sxx
	rss := max(syy-sxy*sxy/sxx, 0)
	// The residual variance over the effective degrees of freedom: points closer than a
	// slot carry no more information than one (guidellm's correction).
	df := f.neff - 2
	se := math.Sqrt(rss / df / sxx)
	// The quantile is costly, and a full window's degrees of freedom repeat.
	tq, ok := w.tq[df]
	if !ok {
		if len(w.tq) >= 64 {
			clear(w.tq)
		}
		tq = distribution.TQuantile(0.5+0.5*w.c.Confidence, df)
		w.tq[df] = tq
	}
	f.half = tq * se
	f.first = my + f.slope*(w.xs[0]-mx)
	f.last = my + f.slope*(w.xs[len(w.xs)-1]-mx)
	return f, true
}

// throughput is the successful requests per second over the first and the second half
// of the in-flight samples' span, and whether the second is at most flat more than
// the first (flat when nothing completed in either).
func (w *SaturationWatch) throughput(flat float64) (r1, r2 float64, ok bool) {
	s := &w.done
	if s.n < 3 {
		return 0, 0, false
	}
	t0, c0 := s.at(0)
	t1, c1 := s.at(s.n - 1)
	mid := t0 + (t1-t0)/2
	m, best := 0, time.Duration(math.MaxInt64)
	for i := range s.n { // the sample nearest the middle
		if t, _ := s.at(i); (t - mid).Abs() < best {
			m, best = i, (t - mid).Abs()
		}
	}
	tm, cm := s.at(m)
	if tm <= t0 || tm >= t1 {
		return 0, 0, false
	}
	r1, r2 = (cm-c0)/(tm-t0).Seconds(), (c1-cm)/(t1-tm).Seconds()
	return r1, r2, r2 <= r1*(1+flat)
}

// ring is a series of (time, value) points, oldest first, at most MaxSaturationPoints
// of them (the oldest goes first).
type ring struct {
	t       []time.Duration
	v       []float64
	head, n int
}

func (r *ring) push(t time.Duration, v float64) {
	if r.t == nil {
		r.t, r.v = make([]time.Duration, 64), make([]float64, 64)
	}
	if r.n == len(r.t) {
		if len(r.t) < MaxSaturationPoints {
			r.grow()
		} else {
			r.head = (r.head + 1) % len(r.t) // the oldest goes
			r.n--
		}
	}
	i := (r.head + r.n) % len(r.t)
	r.t[i], r.v[i] = t, v
	r.n++
}

func (r *ring) grow() {
	size := min(2*len(r.t), MaxSaturationPoints)
	t, v := make([]time.Duration, size), make([]float64, size)
	for i := range r.n {
		t[i], v[i] = r.at(i)
	}
	r.t, r.v, r.head = t, v, 0
}

// at is the i-th oldest point.
func (r *ring) at(i int) (time.Duration, float64) {
	j := (r.head + i) % len(r.t)
	return r.t[j], r.v[j]
}

// prune drops the points before from.
func (r *ring) prune(from time.Duration) {
	for r.n > 0 && r.t[r.head] < from {
		r.head = (r.head + 1) % len(r.t)
		r.n--
	}
}
