package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
)

// TestSeriesPacer: with constant arrivals request k is due where the series' integral
// reaches k, before, between and after its points, rising and falling.
func TestSeriesPacer(t *testing.T) {
	s := time.Second
	// 10 req/s for 10 s (100 requests), then 10 → 30 over 10 s (Λ = 100 + 10x + x²:
	// 200 more), then 30 req/s.
	up := &SeriesPacer{Series: RateSeries{{0, 10}, {10, 10}, {20, 30}}, Arrival: ArrivalConstant}
	checkPace(t, up, []paceCase{
		{"first at once", 0, 0, 0, false},
		{"flat: request 50 at 5s", 0, 50, 5 * s, false},
		{"request 100 at 10s, where the ramp starts", 0, 100, 10 * s, false},
		{"ramp: request 111 at 11s (10x + x² = 11)", 0, 111, 11 * s, false},
		{"request 300 at 20s, where the ramp ends", 0, 300, 20 * s, false},
		{"after the last point its rate holds: request 330 at 21s", 0, 330, 21 * s, false},
		{"elapsed counts: request 330 from 20.5s", 20*s + s/2, 330, s / 2, false},
	})
	// 30 → 10 over 10 s: Λ = 30x − x², 200 requests.
	down := &SeriesPacer{Series: RateSeries{{0, 30}, {10, 10}}, Arrival: ArrivalConstant}
	checkPace(t, down, []paceCase{
		{"falling: request 29 at 1s", 0, 29, s, false},
		{"request 200 at 10s", 0, 200, 10 * s, false},
		{"then 10 req/s: request 210 at 11s", 0, 210, 11 * s, false},
	})
	// The first point at 5 s: its rate holds before it.
	late := &SeriesPacer{Series: RateSeries{{5, 20}, {10, 20}}, Arrival: ArrivalConstant}
	checkPace(t, late, []paceCase{{"before the first point its rate: request 40 at 2s", 0, 40, 2 * s, false}})
	if got := up.Rate(15 * s); got != 20 {
		t.Errorf("Rate(15s) = %v; want 20 (half way from 10 to 30)", got)
	}
	if got, want := up.String(), "Series{Constant, 10@0s→10@10s→30@20s req/s}"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	if got := (RateSeries{{0, 10}, {10, 10}, {20, 30}}).Expected(5, 15); got != 50+75 {
		t.Errorf("Expected(5, 15) = %v; want 125", got)
	}
}

func TestParseRateSeries(t *testing.T) {
	for _, c := range []struct {
		in, want string // want: the series' String, or the start of the error
	}{
		{`{"points":[{"time_s":0,"qps":1},{"time_s":60,"qps":7}]}`, "1@0s→7@60s req/s"},
		{` [{"time_s":0,"qps":5},{"time_s":30,"qps":10},{"time_s":90,"qps":2.5}] `, "5@0s→10@30s→2.5@90s req/s"},
		{`{"points":[{"time_s":0,"qps":1}]}`, "1 point(s); a rate series needs at least two"},
		{`{"points":[{"time_s":0,"qps":1},{"time_s":0,"qps":2}]}`, "point 1: time_s 0 is not after point 0's 0"},
		{`[{"time_s":0,"qps":1},{"time_s":10,"qps":0}]`, "point 1: qps 0: want a finite number > 0"},
		{`[{"time_s":-1,"qps":1},{"time_s":10,"qps":2}]`, "point 0: time_s -1: want a finite number >= 0"},
		{`[{"time_s":0,"qps":1},{"time_s":10}]`, `point 1 {"time_s":10}: want both time_s and qps`},
		{`[{"time_s":0,"qps":1,"rate":3},{"time_s":10,"qps":2}]`, `point 0 {"time_s":0,"qps":1,"rate":3}: json: unknown field "rate"`},
		{`{"points":[],"ramp":1}`, `the object's keys are ["points" "ramp"]; want exactly one, "points"`},
		{`{"points":[{"time_s":0,"qps":1}`, "not JSON"},
		{`[0,10]`, "point 0 0: json: cannot unmarshal number"},
	} {
		s, err := ParseRateSeries([]byte(c.in))
		got := s.String()
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("ParseRateSeries(%s) = %q; want %q", c.in, got, c.want)
		}
	}
}

// TestRateSeriesConfig: a series is an open-loop load and a stop condition of its own;
// it excludes the other ways of setting the load, and a bad one is reported with its
// point.
func TestRateSeriesConfig(t *testing.T) {
	base := func() Config {
		return Config{Target: Target{URLs: []string{"http://127.0.0.1:9"}}, Load: Load{RateSeries: RateSeries{{0, 10}, {5, 20}}, Arrival: ArrivalConstant}}
	}
	if c := base(); c.Validate() != nil || !c.OpenLoop() {
		t.Errorf("a series alone: Validate() = %v, OpenLoop() = %v; want nil, true", c.Validate(), c.OpenLoop())
	}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Rate = 5 }, "request_rate_series and rate, ramp, schedule or pacer conflict"},
		{func(c *Config) { c.Ramp = time.Second }, "request_rate_series and rate, ramp, schedule or pacer conflict"},
		{func(c *Config) { c.RateSeries[1].TimeS = 0 }, "request_rate_series: point 1: time_s 0 is not after point 0's 0"},
	} {
		cfg := base()
		c.edit(&cfg)
		if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate() = %v; want an invalid config containing %q", err, c.want)
		}
	}
}

// seriesCounts runs cfg (a rate series, no other stop) in virtual time and returns the
// sends counted in windows of width w seconds over the series' span.
func seriesCounts(t *testing.T, cfg Config, w float64) []float64 {
	t.Helper()
	out, fs := runFake(t, cfg, 5*time.Millisecond)
	end := cfg.RateSeries.End().Seconds()
	counts := make([]float64, int(math.Round(end/w)))
	for _, at := range fs.sent {
		if at.Seconds() >= end {
			t.Fatalf("a request sent at %v, after the series' end %vs: the series bounds the run", at, end)
		}
		counts[int(at.Seconds()/w)]++
	}
	if len(out.Records) != len(fs.sent) {
		t.Fatalf("%d records for %d sends", len(out.Records), len(fs.sent))
	}
	return counts
}

// TestSeriesPoissonCounts runs a Poisson series that steps 50 → 200 req/s, holds,
// ramps back to 50 and holds, for 12 s in virtual time (seed 5), and checks the sends
// against it the way a Poisson process is checked: the count in each 0.5 s window
// against the series' integral over it (Pearson chi-square on the 24 windows given the
// total, alpha 0.01), and the total against Poisson(Λ) (normal approximation, two-sided,
// alpha 0.01). The failure path: the same sends do not fit a constant rate of the same
// mean.
func TestSeriesPoissonCounts(t *testing.T) {
	series := RateSeries{{0, 50}, {3, 50}, {3.001, 200}, {6, 200}, {9, 50}, {12, 50}}
	const w, alpha = 0.5, 0.01
	counts := seriesCounts(t, Config{Target: Target{NoStream: true}, Workload: Workload{Seed: 5}, Load: Load{RateSeries: series}}, w)
	want := make([]float64, len(counts))
	flat := make([]float64, len(counts))
	var total, lambda float64
	for i := range counts {
		want[i] = series.Expected(float64(i)*w, float64(i+1)*w)
		total += counts[i]
		lambda += want[i]
	}
	for i := range flat {
		flat[i] = lambda / float64(len(flat))
	}
	fit := distribution.ChiSquare(counts, want, 0)
	t.Logf("sends per %vs window: %v; %v; total %v, Λ %.1f", w, counts, fit, total, lambda)
	if fit.PValue < alpha {
		t.Errorf("window counts do not fit the series: %v (alpha %v)", fit, alpha)
	}
	if z := (total - lambda) / math.Sqrt(lambda); math.Abs(z) > 2.576 {
		t.Errorf("%v requests for Λ = %.1f: z = %.2f, outside ±2.576 (alpha %v)", total, lambda, z, alpha)
	}
	if wrong := distribution.ChiSquare(counts, flat, 0); wrong.PValue >= alpha {
		t.Errorf("the sends also fit a constant rate: %v; the check cannot tell the series apart", wrong)
	}
}

// TestSeriesConstantCounts: with constant arrivals every 1 s window holds the series'
// integral over it, to within one request (no randomness).
func TestSeriesConstantCounts(t *testing.T) {
	series := RateSeries{{0, 20}, {2, 20}, {4, 60}, {6, 10}}
	counts := seriesCounts(t, Config{Target: Target{NoStream: true}, Load: Load{RateSeries: series, Arrival: ArrivalConstant}}, 1)
	for i, got := range counts {
		if want := series.Expected(float64(i), float64(i+1)); math.Abs(got-want) > 1 {
			t.Errorf("window %ds–%ds: %v sends; want %.1f ± 1", i, i+1, got, want)
		}
	}
}

// TestSeriesServerArrivals sends a constant-arrival series over real loopback
// connections and checks what the server saw: the run ended with the series (no more
// requests than its integral), every request arrived, none before its scheduled time
// (the client never sends early; 1 ms for the two clocks). How close to the schedule
// they came is measured by BenchmarkSeriesServerArrivals, not asserted.
func TestSeriesServerArrivals(t *testing.T) {
	g := newGroundTruth(t)
	series := RateSeries{{0, 50}, {0.5, 50}, {0.501, 150}, {1, 150}}
	out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{g.URL}}, Workload: Workload{ISL: fixed(8)},
		Load: Load{RateSeries: series, Arrival: ArrivalConstant}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	// A request due before the end but sent after it (a loaded machine) is not sent:
	// the exact count is TestSeriesConstantCounts's, in virtual time.
	if n, most := len(out.Records), int(math.Ceil(series.Expected(0, 1))); n == 0 || n > most {
		t.Errorf("%d requests; want 1 to Λ(1s) rounded up = %d", n, most)
	}
	g.mu.Lock()
	arrived := maps.Clone(g.arrived)
	g.mu.Unlock()
	for _, r := range out.Records {
		a, ok := arrived[r.RequestID]
		if !ok {
			t.Fatalf("the server never saw %s", r.RequestID)
		}
		if at := a.Sub(out.Start); at < r.Scheduled-time.Millisecond {
			t.Errorf("%s arrived at %v, before its schedule %v", r.RequestID, at, r.Scheduled)
		}
	}
}

// BenchmarkSeriesServerArrivals sends a Poisson series (100 req/s for 2 s, then 400 for
// 2 s) over loopback and reports the rate the server saw in each step over the
// series' own rate (rate_step1/target, rate_step2/target; near 1 means the wire kept
// the series) and the chi-square p of the server's 0.25 s window counts against the
// series (Pearson, given the total).
//
//	go test ./loadgen -run '^$' -bench SeriesServerArrivals -benchtime 3x
func BenchmarkSeriesServerArrivals(b *testing.B) {
	series := RateSeries{{0, 100}, {2, 100}, {2.001, 400}, {4, 400}}
	var seed uint64
	for b.Loop() {
		seed++
		g := newGroundTruth(b)
		out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{g.URL}, Model: "ok"}, Workload: Workload{Seed: seed, ISL: fixed(8)},
			Load: Load{RateSeries: series}}, gpt2(b), nil)
		if err != nil {
			b.Fatal(err)
		}
		arr, _, _ := g.snapshot()
		slices.SortFunc(arr, func(a, b time.Time) int { return a.Compare(b) })
		const w = 0.25
		counts := make([]float64, 16)
		var step [2]float64
		for _, a := range arr {
			at := a.Sub(out.Start).Seconds()
			if i := int(at / w); i >= 0 && i < len(counts) {
				counts[i]++
			}
			if at < 2 {
				step[0]++
			} else {
				step[1]++
			}
		}
		want := make([]float64, len(counts))
		for i := range want {
			want[i] = series.Expected(float64(i)*w, float64(i+1)*w)
		}
		b.ReportMetric(step[0]/series.Expected(0, 2), "rate_step1/target")
		b.ReportMetric(step[1]/series.Expected(2, 4), "rate_step2/target")
		b.ReportMetric(distribution.ChiSquare(counts, want, 0).PValue, "chi2_p")
	}
}

// FuzzParseRateSeries: a rate-series file is an error or a valid series (at least two
// points, time_s strictly increasing, qps > 0, all finite), never a panic; an accepted
// series marshals to JSON that reads back to the same series, and its pacer's due times
// never go back.
func FuzzParseRateSeries(f *testing.F) {
	for _, s := range []string{
		`{"points":[{"time_s":0,"qps":1},{"time_s":60,"qps":7}]}`,
		`[{"time_s":0,"qps":5},{"time_s":30,"qps":10},{"time_s":30.001,"qps":2.5}]`,
		`{"points":[{"time_s":1e308,"qps":1e-300},{"time_s":1.7e308,"qps":1e308}]}`,
		`[{"time_s":0,"qps":1}]`, `{"points":null}`, `[]`, `{}`, `[{"time_s":"0","qps":1}]`,
		`[{"time_s":0,"qps":1e-300},{"time_s":1,"qps":1e-300}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseRateSeries(b)
		if err != nil {
			return
		}
		if e := s.Err(); e != nil {
			t.Fatalf("ParseRateSeries(%q) accepted an invalid series: %v", b, e)
		}
		j, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("marshal %v: %v", s, err)
		}
		back, err := ParseRateSeries(j)
		if err != nil || !slices.Equal(back, s) {
			t.Fatalf("%s read back as %v, %v; want %v", j, back, err, s)
		}
		p := &SeriesPacer{Series: s, Arrival: ArrivalConstant}
		var prev time.Duration
		for k := range uint64(20) {
			w, stop := p.Pace(0, k)
			if stop || w < prev {
				t.Fatalf("%v: request %d due at %v (stop %v), before request %d's %v", s, k, w, stop, k-1, prev)
			}
			prev = w
		}
	})
}

// TestSeriesPacerFarFuture: a rate so low that the next request is due past
// time.Duration's range waits "forever" (the run's end stops it), not 0.
func TestSeriesPacerFarFuture(t *testing.T) {
	p := &SeriesPacer{Series: RateSeries{{0, 1e-300}, {1, 1e-300}}, Arrival: ArrivalConstant}
	if w, stop := p.Pace(0, 1); stop || w != math.MaxInt64 {
		t.Errorf("Pace(0, 1) at 1e-300 req/s = %v, %v; want the longest wait, false", w, stop)
	}
}
