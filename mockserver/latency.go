package mockserver

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/distribution"
)

// latencyModel samples TTFT and ITL for one request (non-batching mode).
type latencyModel struct {
	fast                    bool
	ttft, itl               distribution.Distribution // milliseconds
	ttftFixed, itlFixed     float64                   // >= 0 when the distribution is Fixed
	perISL, ttftLin, itlLin float64                   // ms
	prefill                 float64                   // ms per uncached prompt token
	ttftCV, itlCV           float64
	scale                   latencyScale // Config.LatencyScale, 1 when unset; SetLatencyScale changes it
}

// latencyScale is a float64 factor read and written atomically.
type latencyScale struct{ bits atomic.Uint64 }

func (l *latencyScale) set(f float64) { l.bits.Store(math.Float64bits(orFloat(f, 1))) }
func (l *latencyScale) get() float64  { return math.Float64frombits(l.bits.Load()) }

func newLatencyModel(c *Config) *latencyModel {
	m := &latencyModel{fast: c.Fast, ttftFixed: -1, itlFixed: -1,
		perISL: durMS(c.TTFTPerISLToken), ttftLin: durMS(c.TTFTConcurrencyLin), itlLin: durMS(c.ITLConcurrencyLin),
		prefill: durMS(c.PrefixCache.PrefillPerToken),
		ttftCV:  c.TTFTJitterCV, itlCV: c.ITLJitterCV}
	m.scale.set(c.LatencyScale)
	m.ttft = c.TTFT.Or(distribution.Fixed{Value: DefaultTTFTMs})
	m.itl = c.ITL.Or(distribution.Fixed{Value: DefaultITLMs})
	if f, ok := m.ttft.(distribution.Fixed); ok {
		m.ttftFixed = f.Value
	}
	if f, ok := m.itl.(distribution.Fixed); ok {
		m.itlFixed = f.Value
	}
	return m
}

// jitter returns a log-normal factor with mean 1 and coefficient of variation cv.
func jitter(rng *rand.Rand, cv float64) float64 {
	if cv <= 0 {
		return 1
	}
	s2 := math.Log1p(cv * cv)
	return math.Exp(rng.NormFloat64()*math.Sqrt(s2) - s2/2)
}

// durMS is d in milliseconds, the latency model's unit.
func durMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func msDur(ms float64) time.Duration {
	if ms <= 0 || math.IsNaN(ms) {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// reqSampler draws one request's latencies from its own generator.
type reqSampler struct {
	m        *latencyModel
	rng      *rand.Rand
	ttft     distribution.Distribution
	itl      distribution.Distribution
	inflight *atomic.Int64
	streams  *atomic.Int64
}

func (m *latencyModel) sampler(rng *rand.Rand, inflight, streams *atomic.Int64) *reqSampler {
	return m.initSampler(new(reqSampler), rng, inflight, streams)
}

// initSampler sets r up as sampler's result and returns it.
func (m *latencyModel) initSampler(r *reqSampler, rng *rand.Rand, inflight, streams *atomic.Int64) *reqSampler {
	*r = reqSampler{m: m, rng: rng, inflight: inflight, streams: streams}
	if !m.fast {
		src := rngSource{rng}
		if m.ttftFixed < 0 {
			r.ttft = distribution.WithSrc(m.ttft, src)
		}
		if m.itlFixed < 0 {
			r.itl = distribution.WithSrc(m.itl, src)
		}
	}
	return r
}

// rngSource adapts a *rand.Rand to rand.Source.
type rngSource struct{ r *rand.Rand }

func (s rngSource) Uint64() uint64 { return s.r.Uint64() }

// firstToken returns the delay from receipt to the first token of a prompt of isl
// tokens of which cached were served by the prefix cache.
func (r *reqSampler) firstToken(isl, cached int) time.Duration {
	if r.m.fast {
		return 0
	}
	ms := r.m.ttftFixed
	if ms < 0 {
		ms = r.ttft.Rand()
	}
	ms *= jitter(r.rng, r.m.ttftCV)
	ms += r.m.perISL*float64(isl) + r.m.prefill*float64(max(isl-cached, 0))
	if r.m.ttftLin > 0 {
		ms += r.m.ttftLin * float64(max(r.inflight.Load()-1, 0))
	}
	return msDur(ms * r.m.scale.get())
}

// nextToken returns the gap before the next token.
func (r *reqSampler) nextToken() time.Duration {
	if r.m.fast {
		return 0
	}
	ms := r.m.itlFixed
	if ms < 0 {
		ms = r.itl.Rand()
	}
	if r.m.itlCV > 0 {
		ms *= jitter(r.rng, r.m.itlCV)
	}
	if r.m.itlLin > 0 {
		ms += r.m.itlLin * float64(max(r.streams.Load()-1, 0))
	}
	return msDur(ms * r.m.scale.get())
}

// lateness is a log-scale histogram of how late tokens were written relative to their
// scheduled deadlines, in microseconds. Lock-free.
type lateness struct {
	buckets [100]atomic.Uint64 // bucket i: (2^((i-1)/4), 2^(i/4)] µs, quarter-octaves, up to ~33 s
	n       atomic.Uint64
}

func latBucket(us float64) int {
	if us < 1 {
		return 0
	}
	b := int(4*math.Log2(us)) + 1
	return min(b, 99)
}

func latUpper(b int) float64 {
	if b == 0 {
		return 1
	}
	return math.Exp2(float64(b) / 4)
}

func (l *lateness) observe(d time.Duration) {
	l.buckets[latBucket(float64(d)/1e3)].Add(1)
	l.n.Add(1)
}

// quantile returns the upper bound (µs) of the bucket holding quantile p.
func (l *lateness) quantile(p float64) float64 {
	n := l.n.Load()
	if n == 0 {
		return 0
	}
	target := uint64(math.Ceil(p * float64(n)))
	cum := uint64(0)
	for i := range l.buckets {
		cum += l.buckets[i].Load()
		if cum >= max(target, 1) {
			return latUpper(i)
		}
	}
	return latUpper(99)
}

func (l *lateness) reset() {
	for i := range l.buckets {
		l.buckets[i].Store(0)
	}
	l.n.Store(0)
}
