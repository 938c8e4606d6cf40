package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"
)

// RatePoint is one control point of a [RateSeries]: the request rate QPS (req/s) at
// TimeS seconds after the run starts. The JSON names are AIPerf's.
type RatePoint struct {
	TimeS float64 `json:"time_s"`
	QPS   float64 `json:"qps"`
}

// RateSeries is a time-varying open-loop request rate, AIPerf's
// --request-rate-series: the rate is linear between consecutive points, the first
// point's before it and the last point's after it. At least two points, TimeS >= 0 and
// strictly increasing, QPS > 0 (see [RateSeries.Err]). A step is two points close
// together: [{0,10},{30,10},{30.001,50},{90,50}] is 10 req/s for 30 s, then 50.
type RateSeries []RatePoint

// Err reports the first problem of s, naming the point (by index, from 0) and its
// field, or nil.
func (s RateSeries) Err() error {
	if len(s) < 2 {
		return fmt.Errorf("%d point(s); a rate series needs at least two", len(s))
	}
	for i, p := range s {
		switch {
		case math.IsNaN(p.TimeS) || math.IsInf(p.TimeS, 0) || p.TimeS < 0:
			return fmt.Errorf("point %d: time_s %v: want a finite number >= 0", i, p.TimeS)
		case math.IsNaN(p.QPS) || math.IsInf(p.QPS, 0) || p.QPS <= 0:
			return fmt.Errorf("point %d: qps %v: want a finite number > 0", i, p.QPS)
		case i > 0 && p.TimeS <= s[i-1].TimeS:
			return fmt.Errorf("point %d: time_s %v is not after point %d's %v (time_s must increase strictly)", i, p.TimeS, i-1, s[i-1].TimeS)
		}
	}
	return nil
}

// ParseRateSeries reads a rate series as AIPerf's JSON file holds it: an object with
// exactly one key, "points", or a bare array of points, each {"time_s": …, "qps": …}
// (no other keys). It checks the series ([RateSeries.Err]).
func ParseRateSeries(b []byte) (RateSeries, error) {
	b = bytes.TrimSpace(b)
	var raw json.RawMessage = b
	if len(b) > 0 && b[0] == '{' {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		if _, ok := doc["points"]; !ok || len(doc) != 1 {
			keys := make([]string, 0, len(doc))
			for k := range doc {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return nil, fmt.Errorf("the object's keys are %q; want exactly one, \"points\"", keys)
		}
		raw = doc["points"]
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("points: want an array of {\"time_s\": …, \"qps\": …}: %w", err)
	}
	s := make(RateSeries, len(items))
	for i, it := range items {
		d := json.NewDecoder(bytes.NewReader(it))
		d.DisallowUnknownFields()
		var p struct {
			TimeS *float64 `json:"time_s"`
			QPS   *float64 `json:"qps"`
		}
		if err := d.Decode(&p); err != nil {
			return nil, fmt.Errorf("point %d %s: %w", i, it, err)
		}
		if p.TimeS == nil || p.QPS == nil {
			return nil, fmt.Errorf("point %d %s: want both time_s and qps", i, it)
		}
		s[i] = RatePoint{TimeS: *p.TimeS, QPS: *p.QPS}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// Rate returns the series' request rate (req/s) t seconds after the start.
func (s RateSeries) Rate(t float64) float64 {
	n := len(s)
	switch {
	case n == 0:
		return 0
	case t <= s[0].TimeS:
		return s[0].QPS
	case t >= s[n-1].TimeS:
		return s[n-1].QPS
	}
	i := sort.Search(n, func(i int) bool { return s[i].TimeS > t }) - 1
	a, b := s[i], s[i+1]
	return a.QPS + (b.QPS-a.QPS)*(t-a.TimeS)/(b.TimeS-a.TimeS)
}

// Expected returns the number of requests the series schedules between from and to
// seconds after the start: the integral of its rate, Λ(to) − Λ(from).
func (s RateSeries) Expected(from, to float64) float64 { return s.cum(to) - s.cum(from) }

// End returns the last point's time: the run's duration when nothing else bounds it.
func (s RateSeries) End() time.Duration {
	if len(s) == 0 {
		return 0
	}
	return time.Duration(s[len(s)-1].TimeS * 1e9)
}

// Peak returns the highest rate of the series.
func (s RateSeries) Peak() float64 {
	var m float64
	for _, p := range s {
		m = max(m, p.QPS)
	}
	return m
}

// String writes the series compactly, "10@0s→50@30s→20@90s req/s".
func (s RateSeries) String() string {
	var b strings.Builder
	for i, p := range s {
		if i > 0 {
			b.WriteString("→")
		}
		fmt.Fprintf(&b, "%g@%vs", p.QPS, p.TimeS)
	}
	b.WriteString(" req/s")
	return b.String()
}

// cum returns Λ(t), the integral of the rate from 0 to t.
func (s RateSeries) cum(t float64) float64 {
	if t <= 0 || len(s) == 0 {
		return 0
	}
	if t <= s[0].TimeS {
		return s[0].QPS * t
	}
	total := s[0].QPS * s[0].TimeS
	for i := 1; i < len(s); i++ {
		a, b := s[i-1], s[i]
		if t <= b.TimeS {
			return total + (a.QPS+s.Rate(t))/2*(t-a.TimeS)
		}
		total += (a.QPS + b.QPS) / 2 * (b.TimeS - a.TimeS)
	}
	last := s[len(s)-1]
	return total + last.QPS*(t-last.TimeS)
}

// SeriesPacer paces the open loop along a [RateSeries] (AIPerf's
// --request-rate-series), with the arrival process of Arrival: ArrivalPoisson (zero),
// ArrivalConstant or ArrivalGamma with shape Burstiness. It is exact rather than
// stepped: a unit-rate process of that kind (Poisson: Exponential(1) gaps; constant:
// gaps of 1; gamma: Gamma(shape k, scale 1/k) gaps) is drawn, and its k-th arrival u
// is mapped to the time t where the series' integral Λ(t) reaches u. So the number of
// requests in any window is Poisson with mean Λ(to) − Λ(from) for ArrivalPoisson, and
// Λ's increase, ±1, for ArrivalConstant. Request 0 is due at once. Gaps come from Src
// (nil: seeded with 0). Use it by pointer; it must not be copied after first use.
type SeriesPacer struct {
	Series     RateSeries
	Arrival    string      // one of [Arrivals]; "" = ArrivalPoisson
	Burstiness float64     // gamma shape (ArrivalGamma); 0 = 1
	Src        rand.Source // gap source; nil = rand.NewPCG(0, 0)

	once sync.Once
	rng  *rand.Rand
	cums []float64 // Λ at each point
	r    renewal
}

var _ Pacer = (*SeriesPacer)(nil)

func (p *SeriesPacer) init() {
	p.rng = newRand(p.Src)
	p.cums = make([]float64, len(p.Series))
	for i, pt := range p.Series {
		p.cums[i] = p.Series.cum(pt.TimeS)
	}
}

// Pace implements [Pacer]. An empty series stops at once.
func (p *SeriesPacer) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	p.once.Do(p.init)
	if len(p.Series) == 0 {
		return 0, true
	}
	var u float64
	switch p.Arrival {
	case ArrivalConstant:
		u = float64(sent)
	case ArrivalGamma:
		k := p.Burstiness
		if k <= 0 {
			k = 1
		}
		u = p.r.at(sent, func() float64 { return gammaRand(p.rng, k) / k })
	default:
		u = p.r.at(sent, p.rng.ExpFloat64)
	}
	due := p.inverse(u)
	if !(due < maxDue) {
		return math.MaxInt64, false // beyond any run: never (a very low rate)
	}
	return waitFor(due, elapsed), false
}

// maxDue bounds a due time in seconds (about 292 years: time.Duration's range).
const maxDue = float64(math.MaxInt64) / 1e9

// inverse returns the time t (seconds) at which Λ(t) = u.
func (p *SeriesPacer) inverse(u float64) float64 {
	s := p.Series
	if u <= p.cums[0] {
		return u / s[0].QPS
	}
	n := len(s)
	if u >= p.cums[n-1] {
		return s[n-1].TimeS + (u-p.cums[n-1])/s[n-1].QPS
	}
	i := sort.SearchFloat64s(p.cums, u) - 1 // cums[i] < u <= cums[i+1]
	a, b := s[i], s[i+1]
	v := u - p.cums[i]
	slope := (b.QPS - a.QPS) / (b.TimeS - a.TimeS)
	// Solve a.QPS·x + slope·x²/2 = v for x in [0, b.TimeS − a.TimeS]; this form has
	// no cancellation whatever the sign of slope (the discriminant is >= b.QPS² > 0).
	x := 2 * v / (a.QPS + math.Sqrt(max(a.QPS*a.QPS+2*slope*v, 0)))
	return a.TimeS + min(x, b.TimeS-a.TimeS)
}

// Rate implements [Pacer].
func (p *SeriesPacer) Rate(elapsed time.Duration) float64 { return p.Series.Rate(elapsed.Seconds()) }

// String implements [Pacer], e.g. "Series{Poisson, 10@0s→50@30s req/s}".
func (p *SeriesPacer) String() string {
	kind := "Poisson"
	switch p.Arrival {
	case ArrivalConstant:
		kind = "Constant"
	case ArrivalGamma:
		k := p.Burstiness
		if k <= 0 {
			k = 1
		}
		kind = fmt.Sprintf("Gamma burstiness %g", k)
	}
	return fmt.Sprintf("Series{%s, %v}", kind, p.Series)
}
