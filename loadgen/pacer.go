package loadgen

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// A Pacer decides when the open-loop send loop fires its next request. It is pure in
// the sense that matters for testing: the answer depends only on (elapsed, sent) and
// the pacer's own parameters and seed, never on the wall clock.
//
// Pace is called with the time since the run began and the number of requests sent
// so far; it returns how long to wait before sending request number sent (0 = now),
// or stop = true when the pacer has nothing more to send. Rate returns the intended
// request rate (req/s) at elapsed, for reports. String describes the pacer for failure
// messages, e.g. "Poisson{20 req/s}".
//
// Implementations must be safe for concurrent use.
type Pacer interface {
	Pace(elapsed time.Duration, sent uint64) (wait time.Duration, stop bool)
	Rate(elapsed time.Duration) float64
	String() string
}

// Compile-time checks.
var (
	_ Pacer = ConstantPacer{}
	_ Pacer = (*PoissonPacer)(nil)
	_ Pacer = (*GammaPacer)(nil)
	_ Pacer = RampPacer{}
	_ Pacer = TracePacer{}
)

// waitFor turns a due time (seconds since start) into a wait.
func waitFor(due float64, elapsed time.Duration) time.Duration {
	w := time.Duration(due*1e9) - elapsed
	if w < 0 {
		return 0
	}
	return w
}

// ConstantPacer sends requests at a fixed rate: request k is due at k/Freq seconds
// (the first at once). A zero or negative Freq means "as fast as possible": Pace
// always returns 0.
type ConstantPacer struct {
	Freq float64 // requests per second
}

// Pace implements [Pacer].
func (p ConstantPacer) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	if p.Freq <= 0 {
		return 0, false
	}
	return waitFor(float64(sent)/p.Freq, elapsed), false
}

// Rate implements [Pacer]; an unlimited pacer reports +Inf.
func (p ConstantPacer) Rate(time.Duration) float64 {
	if p.Freq <= 0 {
		return math.Inf(1)
	}
	return p.Freq
}

// String implements [Pacer], e.g. "Constant{20 req/s}".
func (p ConstantPacer) String() string {
	if p.Freq <= 0 {
		return "Constant{unlimited}"
	}
	return fmt.Sprintf("Constant{%g req/s}", p.Freq)
}

// renewal caches the due times of a renewal process (i.i.d. gaps) so Pace stays a
// function of sent: due[k] is the arrival time of request k, due[0] = 0. It keeps 8
// bytes per request sent.
type renewal struct {
	mu  sync.Mutex
	due []float64
}

func (r *renewal) at(k uint64, gap func() float64) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.due) == 0 {
		r.due = append(r.due, 0)
	}
	for uint64(len(r.due)) <= k {
		r.due = append(r.due, r.due[len(r.due)-1]+gap())
	}
	return r.due[k]
}

// PoissonPacer sends requests as a Poisson process: the gaps between requests are
// independent Exponential(Freq) draws from Src (nil: a source seeded with 0), so the
// gap mean is 1/Freq. Request 0 is due at once. Use it by pointer; it must not be
// copied after first use. Freq must be > 0.
type PoissonPacer struct {
	Freq float64     // mean requests per second
	Src  rand.Source // gap source; nil = rand.NewPCG(0, 0)

	once sync.Once
	rng  *rand.Rand
	r    renewal
}

// Pace implements [Pacer].
func (p *PoissonPacer) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	p.once.Do(func() { p.rng = newRand(p.Src) })
	return waitFor(p.r.at(sent, func() float64 { return p.rng.ExpFloat64() / p.Freq }), elapsed), false
}

// Rate implements [Pacer].
func (p *PoissonPacer) Rate(time.Duration) float64 { return p.Freq }

// String implements [Pacer], e.g. "Poisson{20 req/s}".
func (p *PoissonPacer) String() string { return fmt.Sprintf("Poisson{%g req/s}", p.Freq) }

// GammaPacer sends requests with Gamma-distributed gaps of mean 1/Freq and shape
// Burstiness (vLLM's --burstiness): shape 1 is Poisson, < 1 burstier, > 1 more
// regular. Gaps come from Src (nil: seeded with 0). Use it by pointer.
type GammaPacer struct {
	Freq       float64     // mean requests per second
	Burstiness float64     // Gamma shape k; 0 means 1
	Src        rand.Source // gap source; nil = rand.NewPCG(0, 0)

	once sync.Once
	rng  *rand.Rand
	r    renewal
}

// Pace implements [Pacer].
func (p *GammaPacer) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	p.once.Do(func() { p.rng = newRand(p.Src) })
	k := p.shape()
	return waitFor(p.r.at(sent, func() float64 { return gammaRand(p.rng, k) / (p.Freq * k) }), elapsed), false
}

func (p *GammaPacer) shape() float64 {
	if p.Burstiness <= 0 {
		return 1
	}
	return p.Burstiness
}

// Rate implements [Pacer].
func (p *GammaPacer) Rate(time.Duration) float64 { return p.Freq }

// String implements [Pacer], e.g. "Gamma{20 req/s, burstiness 0.5}".
func (p *GammaPacer) String() string {
	return fmt.Sprintf("Gamma{%g req/s, burstiness %g}", p.Freq, p.shape())
}

func newRand(src rand.Source) *rand.Rand {
	if src == nil {
		src = rand.NewPCG(0, 0)
	}
	return rand.New(src)
}

// gammaRand draws Gamma(shape k, scale 1) by Marsaglia and Tsang's method.
func gammaRand(r *rand.Rand, k float64) float64 {
	if k < 1 {
		// Gamma(k) = Gamma(k+1) * U^(1/k).
		return gammaRand(r, k+1) * math.Pow(r.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// RampPacer changes the rate linearly from From to To (req/s) over Over, then holds
// To. Request k is due when the integral of the rate reaches k, so the first request
// is due at once. With Over = 0 it is ConstantPacer{To}.
type RampPacer struct {
	From, To float64       // requests per second at the start and at the end of the ramp
	Over     time.Duration // ramp length
}

// Pace implements [Pacer].
func (p RampPacer) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	k := float64(sent)
	D := p.Over.Seconds()
	if D <= 0 {
		if p.To <= 0 {
			return 0, true
		}
		return waitFor(k/p.To, elapsed), false
	}
	inRamp := (p.From + p.To) * D / 2 // requests sent during the ramp
	var due float64
	switch {
	case k >= inRamp:
		if p.To <= 0 {
			return 0, true
		}
		due = D + (k-inRamp)/p.To
	default:
		a := (p.To - p.From) / (2 * D) // N(t) = a t² + From t
		if math.Abs(a) < 1e-12 {
			due = k / p.From
		} else {
			disc := p.From*p.From + 4*a*k
			if disc < 0 {
				disc = 0
			}
			due = (-p.From + math.Sqrt(disc)) / (2 * a)
		}
	}
	return waitFor(due, elapsed), false
}

// Rate implements [Pacer].
func (p RampPacer) Rate(elapsed time.Duration) float64 {
	if elapsed >= p.Over || p.Over <= 0 {
		return p.To
	}
	return p.From + (p.To-p.From)*elapsed.Seconds()/p.Over.Seconds()
}

// String implements [Pacer], e.g. "Ramp{0→100 req/s over 10s}".
func (p RampPacer) String() string {
	return fmt.Sprintf("Ramp{%g→%g req/s over %v}", p.From, p.To, p.Over)
}

// TracePacer replays a schedule: request k is due at Offsets[k] / Speedup, and the
// pacer stops after the last offset. Offsets must be ascending (they are relative to
// the run start, e.g. trace timestamps minus the first one). Speedup 0 means 1.
type TracePacer struct {
	Offsets []time.Duration
	Speedup float64
}

func (p TracePacer) speed() float64 {
	if p.Speedup <= 0 {
		return 1
	}
	return p.Speedup
}

// Pace implements [Pacer].
func (p TracePacer) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	if sent >= uint64(len(p.Offsets)) {
		return 0, true
	}
	return waitFor(p.Offsets[sent].Seconds()/p.speed(), elapsed), false
}

// Rate implements [Pacer]: the number of scheduled requests in the second before
// elapsed.
func (p TracePacer) Rate(elapsed time.Duration) float64 {
	s := p.speed()
	at := func(d time.Duration) int {
		return sort.Search(len(p.Offsets), func(i int) bool { return float64(p.Offsets[i])/s > float64(d) })
	}
	return float64(at(elapsed) - at(elapsed-time.Second))
}

// String implements [Pacer], e.g. "Trace{3 requests over 2s, speed-up 2}".
func (p TracePacer) String() string {
	var span time.Duration
	if n := len(p.Offsets); n > 0 {
		span = p.Offsets[n-1] - p.Offsets[0]
	}
	return fmt.Sprintf("Trace{%d requests over %v, speed-up %g}", len(p.Offsets), span, p.speed())
}

// NewTracePacer returns a TracePacer that replays the send times of a client
// recording (record.Client.Sent, relative to the earliest), sped up by speedup, so a
// recorded run's arrivals can be sent again. Records are taken in send order.
func NewTracePacer(recs []record.Client, speedup float64) TracePacer {
	offs := make([]time.Duration, 0, len(recs))
	for _, r := range recs {
		offs = append(offs, r.Sent)
	}
	slices.Sort(offs)
	if len(offs) > 0 {
		first := offs[0]
		for i := range offs {
			offs[i] -= first
		}
	}
	return TracePacer{Offsets: offs, Speedup: speedup}
}

// newPacer returns the run's open-loop pacer for cfg drawing from in (a schedule's
// offsets), or nil for a closed loop.
func newPacer(cfg *Config, in dataset.Source) (Pacer, error) {
	if cfg.Schedule {
		sl, ok := in.(dataset.Offsets)
		if !ok {
			return nil, errors.New("loadgen: schedule needs a finite input")
		}
		speedup := cfg.Speedup
		if cfg.InputFormat == FormatAgentTrace {
			speedup = 1 // the source's offsets are already sped up and capped
		}
		return TracePacer{Offsets: sl.Offsets(), Speedup: speedup}, nil
	}
	if cfg.Pacer != nil {
		return cfg.Pacer, nil
	}
	if len(cfg.RateSeries) > 0 {
		return &SeriesPacer{Series: cfg.RateSeries, Arrival: cfg.Arrival, Burstiness: cfg.Burstiness, Src: rand.NewPCG(cfg.Seed, 0xa441)}, nil
	}
	if cfg.Rate <= 0 {
		return nil, nil
	}
	if cfg.Ramp > 0 {
		return RampPacer{From: cfg.RampFrom, To: cfg.Rate, Over: cfg.Ramp}, nil
	}
	src := rand.NewPCG(cfg.Seed, 0xa441)
	switch cfg.Arrival {
	case ArrivalConstant:
		return ConstantPacer{Freq: cfg.Rate}, nil
	case ArrivalGamma:
		return &GammaPacer{Freq: cfg.Rate, Burstiness: cfg.Burstiness, Src: src}, nil
	}
	return &PoissonPacer{Freq: cfg.Rate, Src: src}, nil
}
