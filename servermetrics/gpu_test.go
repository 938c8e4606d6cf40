package servermetrics

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// dcgmScrapes renders the stub's page at t0 + k s for k in 0..n-1, as scrapes of url.
func dcgmScrapes(t *testing.T, d *testutil.DCGM, url string, t0 time.Time, n int) []Scrape {
	t.Helper()
	var out []Scrape
	for k := range n {
		at := t0.Add(time.Duration(k) * time.Second)
		out = append(out, Scrape{URL: url, Phase: PhaseDuring, UnixNano: at.UnixNano(), Samples: parse(t, d.Page(at))})
	}
	return out
}

// TestGPUSummary: the energy over a window that falls between scrapes is the counters'
// interpolated difference (the stub's GPUs draw 300 W and 150 W: exactly W × the
// window), and power, utilisation and memory are the samples inside the window's.
func TestGPUSummary(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	d := &testutil.DCGM{Watts: [2]float64{300, 150}, Boot: t0.Add(-time.Hour)}
	a := NewGPUAccumulator()
	for _, sc := range dcgmScrapes(t, d, "http://gpu:9400/metrics", t0, 10) {
		a.Add(sc)
	}
	w := Window{Start: t0.Add(1500 * time.Millisecond), End: t0.Add(7250 * time.Millisecond)}
	s := a.Summary(w)
	if len(s.GPUs) != 2 {
		t.Fatalf("GPUs = %d, want 2: %+v", len(s.GPUs), s)
	}
	g0, g1 := s.GPUs[0], s.GPUs[1]
	if g0.ID != "0" || g0.Model != "NVIDIA H100 80GB HBM3" || g0.Host != "gpu-node-1" || !strings.HasPrefix(g0.UUID, "GPU-2f5c") {
		t.Errorf("GPU 0's labels = %+v", g0)
	}
	if !near(s.Seconds, 5.75) || !near(g0.EnergyJ, 300*5.75) || !near(g1.EnergyJ, 150*5.75) || !near(s.EnergyJ, 450*5.75) {
		t.Errorf("window %v s, energy %v J + %v J = %v J; want 5.75 s, 1725 + 862.5 = 2587.5 J", s.Seconds, g0.EnergyJ, g1.EnergyJ, s.EnergyJ)
	}
	if g0.EnergyFrom != "counter" || !near(g0.PowerMeanW, 300) || !near(s.PowerMeanW, 450) {
		t.Errorf("energy from %q, mean power %v W (all %v W); want counter, 300 W, 450 W", g0.EnergyFrom, g0.PowerMeanW, s.PowerMeanW)
	}
	// Scrapes 2..7 are inside: power swings ×1, ×0.9, ×1, ×1.1, ×1, ×0.9; utilisation
	// 80, 100, 40, 60, 80, 100 %; memory used 1,200 … 1,700 MiB of 81,559.
	if g0.Samples != 6 || !near(g0.PowerMaxW, 330) {
		t.Errorf("samples %d, max power %v W; want 6, 330 W", g0.Samples, g0.PowerMaxW)
	}
	if g0.UtilMean == nil || !near(*g0.UtilMean, 460.0/600) || s.UtilMean == nil || !near(*s.UtilMean, 460.0/600) {
		t.Errorf("utilisation %v (all %v), want 0.7667", g0.UtilMean, s.UtilMean)
	}
	if g0.MemUsedMaxMiB == nil || *g0.MemUsedMaxMiB != 1700 || *g0.MemUsedMeanMiB != 1450 || *g0.MemTotalMiB != 81559 || *s.MemUsedMaxMiB != 1700 {
		t.Errorf("memory used max %v mean %v total %v, want 1700, 1450, 81559", g0.MemUsedMaxMiB, g0.MemUsedMeanMiB, g0.MemTotalMiB)
	}
	// The zero window is every scrape's span: 9 s.
	if all := a.Summary(Window{}); !near(all.Seconds, 9) || !near(all.EnergyJ, 450*9) {
		t.Errorf("whole span: %v s, %v J; want 9 s, 4050 J", all.Seconds, all.EnergyJ)
	}
}

// TestGPUEnergyFromPower: without the energy counter, the power gauge is integrated
// (a ramp 100 + 10·t W over [2.5 s, 7.5 s]: 750 J); a counter that resets (a driver
// reload) counts on from 0.
func TestGPUEnergyFromPower(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	a := NewGPUAccumulator()
	for k := range 11 {
		a.Add(Scrape{URL: "u", UnixNano: t0.Add(time.Duration(k) * time.Second).UnixNano(), Samples: []Sample{
			{Name: DCGMPower, Labels: map[string]string{"gpu": "0"}, Type: TypeGauge, Value: 100 + 10*float64(k)},
		}})
	}
	s := a.Summary(Window{Start: t0.Add(2500 * time.Millisecond), End: t0.Add(7500 * time.Millisecond)})
	if len(s.GPUs) != 1 || s.GPUs[0].EnergyFrom != "power" || !near(s.EnergyJ, 750) || !near(s.PowerMeanW, 150) || s.GPUs[0].PowerMaxW != 170 {
		t.Errorf("power-only GPU: %+v; want 750 J from power, 150 W mean, 170 W max", s)
	}
	if s.UtilMean != nil || s.MemUsedMaxMiB != nil {
		t.Errorf("utilisation %v and memory %v without their series; want nil", s.UtilMean, s.MemUsedMaxMiB)
	}
	b := NewGPUAccumulator()
	for k, mj := range []float64{1000, 2000, 500, 1500} {
		b.Add(Scrape{URL: "u", UnixNano: t0.Add(time.Duration(k) * time.Second).UnixNano(), Samples: []Sample{
			{Name: DCGMEnergy, Labels: map[string]string{"gpu": "0"}, Type: TypeCounter, Value: mj},
		}})
	}
	if got := b.Summary(Window{}).EnergyJ; !near(got, 2.5) {
		t.Errorf("energy across a counter reset = %v J, want 2.5 (1 + 0.5 + 1)", got)
	}
}

// TestGPUEnergyBeyondTheScrapes: a window's end past the last scrape (the scrape
// after a run stamped up to 1 ms early, the exposition's milliseconds floored) gets
// the last interval's rate, as does a start before the first; an end further out than
// one interval gets that interval's energy and no more.
func TestGPUEnergyBeyondTheScrapes(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	a := NewGPUAccumulator()
	for k := range 3 { // 300 W: 300,000 mJ a second
		a.Add(Scrape{URL: "u", UnixNano: t0.Add(time.Duration(k) * time.Second).UnixNano(), Samples: []Sample{
			{Name: DCGMEnergy, Labels: map[string]string{"gpu": "0"}, Type: TypeCounter, Value: 300_000 * float64(k)},
		}})
	}
	for _, c := range []struct {
		from, to time.Duration
		want     float64
	}{
		{500 * time.Millisecond, 2*time.Second + 400*time.Microsecond, 300 * 1.5004},
		{-250 * time.Millisecond, 2 * time.Second, 300 * 2.25},
		{0, 5 * time.Second, 300 * 3}, // one interval past the last scrape, then held
		{-3 * time.Second, 2 * time.Second, 300 * 3},
	} {
		s := a.Summary(Window{Start: t0.Add(c.from), End: t0.Add(c.to)})
		if len(s.GPUs) != 1 || s.GPUs[0].EnergyFrom != "counter" || math.Abs(s.EnergyJ-c.want) > 1e-9*c.want {
			t.Errorf("window [%v, %v]: %v J (%+v); want %v J from the counter", c.from, c.to, s.EnergyJ, s.GPUs, c.want)
		}
	}
	// Two scrapes stamped in one millisecond: the rate is the interval before them.
	b := NewGPUAccumulator()
	for _, k := range []int{0, 1, 1} {
		b.Add(Scrape{URL: "u", UnixNano: t0.Add(time.Duration(k) * time.Second).UnixNano(), Samples: []Sample{
			{Name: DCGMEnergy, Labels: map[string]string{"gpu": "0"}, Type: TypeCounter, Value: 300_000 * float64(k)},
		}})
	}
	if s := b.Summary(Window{Start: t0.Add(-time.Second / 2), End: t0.Add(1500 * time.Millisecond)}); math.Abs(s.EnergyJ-600) > 1e-9*600 {
		t.Errorf("counter with two scrapes in one millisecond, window [-0.5 s, 1.5 s]: %v J; want 600 J", s.EnergyJ)
	}
}

// TestGPUCheck: an endpoint that answers without DCGM's names is an error naming it
// and what it serves; one that cannot be scraped is a warning; a DCGM exporter is
// neither. The URLs are as Scraper records them (query values redacted).
func TestGPUCheck(t *testing.T) {
	d := &testutil.DCGM{Watts: [2]float64{300, 150}, Boot: time.Unix(0, 0)}
	a := NewGPUAccumulator()
	a.Add(Scrape{URL: "http://gpu:9400/metrics", Phase: PhaseBefore, Samples: parse(t, d.Page(time.Unix(100, 0)))})
	a.Add(Scrape{URL: "http://vllm:8000/metrics?token=redacted", Phase: PhaseBefore, Samples: parse(t, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n")})
	a.Add(Scrape{URL: "http://down:9400/metrics", Phase: PhaseBefore, Error: "servermetrics: GET http://down:9400/metrics: connection refused"})
	warns, err := a.Check()
	if !errors.Is(err, ErrNoDCGM) || !strings.Contains(err.Error(), "http://vllm:8000/metrics?token=redacted serves series such as vllm:num_requests_running") || strings.Contains(err.Error(), "gpu:9400") {
		t.Errorf("Check error = %v; want ErrNoDCGM naming the vLLM endpoint and its series, not the exporter", err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "http://down:9400/metrics: GET http://down:9400/metrics: connection refused; GPU metrics are unknown") {
		t.Errorf("Check warnings = %q; want one for the endpoint that is down", warns)
	}
	ok := NewGPUAccumulator()
	ok.Add(Scrape{URL: "http://gpu:9400/metrics", Phase: PhaseBefore, Samples: parse(t, d.Page(time.Unix(100, 0)))})
	if w, err := ok.Check(); err != nil || len(w) != 0 {
		t.Errorf("a DCGM exporter: warnings %q, error %v; want none", w, err)
	}
	if s := a.Summary(Window{}); len(s.Warnings) != 2 || len(s.GPUs) != 2 {
		t.Errorf("summary warnings %q, GPUs %d; want the two bad endpoints' and 2 GPUs", s.Warnings, len(s.GPUs))
	}
}

// TestGPUScrapeStub scrapes the stub exporter over HTTP with the Scraper, as a run
// does: the energy over the scrapes' span is 450 W × its length, whatever the timing.
func TestGPUScrapeStub(t *testing.T) {
	d := testutil.NewDCGM(t, 300, 150)
	a := NewGPUAccumulator()
	s, err := StartObserved(t.Context(), Config{URLs: []string{d.URL}, Interval: 5 * time.Millisecond}, nil, a.Add)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; d.Scrapes() < 4 && i < 2000; i++ {
		time.Sleep(time.Millisecond)
	}
	if _, err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if w, err := a.Check(); err != nil || len(w) > 0 {
		t.Fatalf("Check: %v %v", w, err)
	}
	sum := a.Summary(Window{})
	if sum.Scrapes < 3 || sum.Failures != 0 || len(sum.GPUs) != 2 || sum.Seconds <= 0 || math.Abs(sum.EnergyJ-450*sum.Seconds) > 1e-6*sum.EnergyJ {
		t.Errorf("stub over %v s: %d scrapes (%d failed), %d GPUs, %v J; want ≥ 3, 0, 2, 450 W × the span", sum.Seconds, sum.Scrapes, sum.Failures, len(sum.GPUs), sum.EnergyJ)
	}
}

// FuzzSummarizeGPU: any gpu_telemetry.jsonl (a file a person may edit) is summarised
// or refused with an error, never a panic, with no more GPUs than the lines name.
func FuzzSummarizeGPU(f *testing.F) {
	d := &testutil.DCGM{Watts: [2]float64{300, 150}, Boot: time.Unix(0, 0)}
	samples, _, _ := Parse(strings.NewReader(d.Page(time.Unix(100, 0))))
	var b strings.Builder
	enc := json.NewEncoder(&b)
	_ = enc.Encode(Scrape{URL: "http://gpu:9400/metrics", Phase: PhaseBefore, UnixNano: 1e11, Samples: samples})
	_ = enc.Encode(Scrape{URL: "http://gpu:9400/metrics", Phase: PhaseAfter, UnixNano: 2e11, Error: "boom"})
	f.Add(b.String())
	f.Add(`{"url":"u","phase":"during","unix_nano":5,"samples":[{"name":"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION","type":"counter","value":-1e308,"labels":{"gpu":"0"}}]}` + "\n" +
		`{"url":"u","phase":"during","unix_nano":5,"samples":[{"name":"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION","type":"counter","value":1e308,"labels":{"gpu":"0"}}]}`)
	f.Add(`{"url":"u","samples":[{"name":"DCGM_FI_DEV_POWER_USAGE","value":1,"timestamp_ms":-9}]}`)
	f.Add("not json")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := SummarizeGPU(strings.NewReader(text), Window{})
		if err != nil {
			return
		}
		if n := strings.Count(text, "DCGM_FI_DEV_"); len(s.GPUs) > n {
			t.Fatalf("%d GPUs from %d DCGM samples", len(s.GPUs), n)
		}
		_ = s.Lines()
	})
}
