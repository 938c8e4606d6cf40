package loadgen

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// satSim is a synthetic run fed to a SaturationWatch in virtual time: every
// AbortTick the watch gets a sample of the requests in flight and the requests that
// completed in the tick, each with its TTFT, and is asked whether to stop.
type satSim struct {
	// inflight(t) and rate(t) (completions per second) and ttft(t) at t seconds.
	inflight, rate, ttft func(t float64) float64
	noise                float64 // relative noise on each value (seeded)
}

// run feeds the watch until it says stop or until end; it returns when it stopped
// (0 = never) and why.
func (s satSim) run(w *SaturationWatch, end time.Duration) (time.Duration, string) {
	rng := rand.New(rand.NewPCG(37, 1))
	jitter := func(v float64) float64 { return max(v*(1+s.noise*(2*rng.Float64()-1)), 0) }
	owed := 0.0 // fractional completions carried to the next tick
	for now := AbortTick; now <= end; now += AbortTick {
		t := now.Seconds()
		owed += s.rate(t) * AbortTick.Seconds()
		for ; owed >= 1; owed-- {
			ttft := time.Duration(jitter(s.ttft(t)) * float64(time.Second))
			rec := &record.Client{Sent: now - ttft - time.Millisecond, Stream: true,
				Chunks: []record.Chunk{{T: now - time.Millisecond, Tokens: 1}}, Done: now}
			if got, ok := rec.TTFT(); !ok || got != ttft {
				panic("satSim: the record's TTFT is not the one meant")
			}
			w.Observe(rec, now)
		}
		w.ObserveInFlight(int(math.Round(jitter(s.inflight(t)))), now)
		if why, stop := w.Check(now); stop {
			if why.Kind != AbortSaturation {
				panic("satSim: kind " + why.Kind)
			}
			return now, why.Reason
		}
	}
	return 0, ""
}

// TestSaturationWatchSynthetic: the detector on synthetic runs in virtual time, with
// guidellm's defaults (30 s before any judgement, a 120 s window, TTFT floor 2.5 s)
// unless a case says otherwise, 10% seeded noise on every value. It stops a server
// offered twice what it completes (the queue, and with it TTFT, grows while the
// completions stay at 10/s), also when nothing completes any more, and nothing else:
// a steady server with a high TTFT, a rising load the server keeps up with (in flight
// and TTFT rising, the throughput rising too), a queue whose TTFT is still under the
// floor (which a floor of -1 then stops), or a closed loop whose in-flight count
// cannot rise; and nothing before MinDuration (a saturated run stops at its first look
// after it).
func TestSaturationWatchSynthetic(t *testing.T) {
	const capacity = 10.0                                                   // completions per second at saturation
	queue := func(t float64) float64 { return 20 + capacity*t }             // 20/s offered, 10/s served
	queueTTFT := func(t float64) float64 { return 0.5 + queue(t)/capacity } // the wait of the queue ahead
	flat := func(v float64) func(float64) float64 { return func(float64) float64 { return v } }
	for _, c := range []struct {
		name     string
		cfg      OverSaturation
		sim      satSim
		end      time.Duration
		stop     bool
		from, by time.Duration // when it must stop: in [from, by]
		says     string
	}{
		{name: "saturated", sim: satSim{inflight: queue, rate: flat(capacity), ttft: queueTTFT, noise: 0.1},
			end: 5 * time.Minute, stop: true, from: DefaultSaturationMinDuration, by: 40 * time.Second, says: "TTFT rising"},
		{name: "nothing completes", sim: satSim{inflight: queue, rate: flat(0), ttft: queueTTFT, noise: 0.1},
			end: 5 * time.Minute, stop: true, from: DefaultSaturationMinDuration, by: 40 * time.Second, says: "0 first tokens (too few to fit)"},
		{name: "steady, slow", sim: satSim{inflight: flat(40), rate: flat(capacity), ttft: flat(4), noise: 0.1}, end: 3 * time.Minute},
		{name: "rising load, kept up with", sim: satSim{inflight: func(t float64) float64 { return 10 + t }, rate: func(t float64) float64 { return 5 + t/2 },
			ttft: func(t float64) float64 { return 3 + t/100 }, noise: 0.1}, end: 3 * time.Minute},
		{name: "under the TTFT floor", sim: satSim{inflight: queue, rate: flat(capacity), ttft: func(t float64) float64 { return 0.1 + t/1000 }, noise: 0.1}, end: 2 * time.Minute},
		{name: "no TTFT floor", cfg: OverSaturation{MinTTFT: -1}, sim: satSim{inflight: queue, rate: flat(capacity), ttft: func(t float64) float64 { return 0.1 + t/1000 }, noise: 0.1},
			end: 2 * time.Minute, stop: true, from: DefaultSaturationMinDuration, by: 40 * time.Second, says: "TTFT rising"},
		{name: "closed loop", sim: satSim{inflight: flat(32), rate: flat(capacity), ttft: queueTTFT, noise: 0.1}, end: 3 * time.Minute},
		{name: "before MinDuration", cfg: OverSaturation{MinDuration: 2 * time.Minute}, sim: satSim{inflight: queue, rate: flat(capacity), ttft: queueTTFT, noise: 0.1},
			end: 3 * time.Minute, stop: true, from: 2 * time.Minute, by: 2 * time.Minute, says: "TTFT rising"},
		{name: "short window", cfg: OverSaturation{MinDuration: 500 * time.Millisecond, Window: time.Second, MinTTFT: 50 * time.Millisecond},
			sim: satSim{inflight: func(t float64) float64 { return 4 + 300*t }, rate: flat(100), ttft: func(t float64) float64 { return 0.04 + 3*t }, noise: 0.1},
			end: 10 * time.Second, stop: true, from: 500 * time.Millisecond, by: 1500 * time.Millisecond, says: "TTFT rising"},
	} {
		t.Run(c.name, func(t *testing.T) {
			at, why := c.sim.run(NewSaturationWatch(c.cfg), c.end)
			if at != 0 {
				t.Logf("stopped at %v: %s", at, why)
			}
			switch {
			case !c.stop && at != 0:
				t.Errorf("stopped at %v: %s", at, why)
			case c.stop && at == 0:
				t.Errorf("never stopped in %v", c.end)
			case c.stop && (at < c.from || at > c.by):
				t.Errorf("stopped at %v, want in [%v, %v]: %s", at, c.from, c.by, why)
			case c.stop && (!strings.HasPrefix(why, "over-saturated at "+at.String()+": requests in flight rising ") || !strings.Contains(why, c.says) ||
				!strings.Contains(why, "throughput flat") || !strings.HasSuffix(why, "the server cannot keep up with the offered load")):
				t.Errorf("reason: %s", why)
			}
		})
	}
}

// TestSaturationTrend: the fitted slope and its half-width against the textbook
// formulas (ordinary least squares; SE = sqrt(RSS/(n-2)/Sxx), half = t(0.975, n-2)·SE)
// on a small series where every point is its own slot, and a perfect line's half-width
// is 0. Points closer than a slot lower the degrees of freedom (the half-width grows).
func TestSaturationTrend(t *testing.T) {
	w := NewSaturationWatch(OverSaturation{})
	var r ring
	xs := []float64{1, 2, 3, 4, 5, 6}
	ys := []float64{2.0, 4.5, 5.5, 8.5, 9.0, 12.5}
	for i := range xs {
		r.push(time.Duration(xs[i]*float64(time.Second)), ys[i])
	}
	f, ok := w.trend(&r, 1000)
	// By hand: mean x 3.5, mean y 7; Sxx 17.5, Sxy 34.5, Syy 70, slope 1.9714286;
	// RSS = Syy - Sxy²/Sxx = 1.9857143; SE = sqrt(1.9857143/4/17.5) = 0.1684261;
	// t(0.975, 4) = 2.7764451 (scipy.stats.t.ppf), half-width 0.4676258.
	if !ok || math.Abs(f.slope-1.9714286) > 1e-6 || math.Abs(f.half-0.4676258) > 1e-6 {
		t.Errorf("fit %+v, want slope 1.9714286, half 0.4676258", f)
	}
	g, _ := w.trend(&r, 5) // five effective points: three degrees of freedom
	if !(g.half > f.half) || math.Abs(g.slope-f.slope) > 1e-12 {
		t.Errorf("fewer effective points: %+v vs %+v", g, f)
	}
	var line ring
	for i := range 10 {
		line.push(time.Duration(i)*time.Second, 3+0.5*float64(i))
	}
	if f, ok := w.trend(&line, 1000); !ok || f.slope != 0.5 || f.half != 0 || !f.rising(w.c) {
		t.Errorf("a perfect line: %+v", f)
	}
	if _, ok := w.trend(&line, 2); ok {
		t.Error("fitted on fewer effective points than MinPoints")
	}
}

// TestSaturationWatchBounded: a watch keeps at most MaxSaturationPoints of each series
// however many requests end inside its window (20,000 a second here), and drops the
// points older than the window.
func TestSaturationWatchBounded(t *testing.T) {
	w := NewSaturationWatch(OverSaturation{Window: 10 * time.Second})
	rec := &record.Client{Stream: true, Chunks: []record.Chunk{{T: time.Millisecond, Tokens: 1}}}
	for i := range 20_000 {
		now := time.Duration(i) * 50 * time.Microsecond
		w.Observe(rec, now)
		w.ObserveInFlight(i, now)
	}
	if w.ttft.n != MaxSaturationPoints || len(w.ttft.t) != MaxSaturationPoints || w.inflight.n != MaxSaturationPoints {
		t.Errorf("kept %d TTFTs (%d slots), %d samples; want %d", w.ttft.n, len(w.ttft.t), w.inflight.n, MaxSaturationPoints)
	}
	if first, _ := w.ttft.at(0); first != time.Duration(20_000-MaxSaturationPoints)*50*time.Microsecond {
		t.Errorf("the oldest kept is at %v", first)
	}
	w.Check(time.Hour)
	if w.ttft.n != 0 || w.inflight.n != 0 || w.done.n != 0 {
		t.Errorf("an hour later the window still holds %d, %d, %d points", w.ttft.n, w.inflight.n, w.done.n)
	}
}

// TestOverSaturationValidate: each field out of range is named; the zero value and
// guidellm's defaults are valid.
func TestOverSaturationValidate(t *testing.T) {
	if err := (OverSaturation{}).Validate(); err != nil {
		t.Errorf("zero: %v", err)
	}
	if err := (OverSaturation{}).WithDefaults().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	bad := OverSaturation{MinDuration: -1, Window: -1, MaxMOE: -1, Confidence: 1, MinPoints: 2, FlatThroughput: math.NaN()}
	err := bad.Validate()
	for _, want := range []string{"min_duration -1ns", "window -1ns", "max_moe -1", "confidence 1", "min_points 2", "flat_throughput NaN"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not name %q", err, want)
		}
	}
}
