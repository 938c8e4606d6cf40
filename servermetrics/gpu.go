package servermetrics

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// DCGM exporter's names for what GPU telemetry reads (NVIDIA dcgm-exporter,
// etc/default-counters.csv: field, type, help). Any Prometheus endpoint that serves
// these names is read the same way.
const (
	DCGMPower  = "DCGM_FI_DEV_POWER_USAGE"              // gauge: power draw, W
	DCGMEnergy = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" // counter: energy since boot, mJ
	DCGMUtil   = "DCGM_FI_DEV_GPU_UTIL"                 // gauge: GPU utilisation, %
	DCGMFBUsed = "DCGM_FI_DEV_FB_USED"                  // gauge: framebuffer memory used, MiB
	DCGMFBFree = "DCGM_FI_DEV_FB_FREE"                  // gauge: framebuffer memory free, MiB
)

// GPU telemetry's artifact files (in a run's artifact directory).
const (
	GPUFile        = "gpu_telemetry.jsonl" // one [Scrape] per line, as File
	GPUSummaryFile = "gpu_telemetry.json"  // the [GPUSummary]
)

// ErrNoDCGM is wrapped by [GPUAccumulator.Check]'s error for an endpoint that
// answered without any of DCGM's power or energy series.
var ErrNoDCGM = errors.New("servermetrics: no DCGM power or energy metrics")

// Window is the span GPU telemetry is summarised over: the run's measured window,
// first measured request sent → last one done. The zero Window is every scrape's span.
type Window struct {
	Start, End time.Time
}

// GPU is one GPU's telemetry over the window.
type GPU struct {
	// URL is the endpoint that reported it (query values redacted); ID its "gpu"
	// label, UUID, Model and Host its UUID, modelName and Hostname labels.
	URL   string `json:"url"`
	ID    string `json:"gpu"`
	UUID  string `json:"uuid,omitempty"`
	Model string `json:"model,omitempty"`
	Host  string `json:"host,omitempty"`
	// Samples is the number of scrapes of the GPU inside the window.
	Samples int `json:"samples"`
	// EnergyJ is the energy the GPU used over the window, in joules; EnergyFrom says
	// how it was measured: "counter" (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, linearly
	// interpolated at the window's ends, or extrapolated at the nearest interval's
	// rate, for at most its length, where an end lies beyond the scrapes) or "power"
	// (DCGM_FI_DEV_POWER_USAGE integrated over the window by the trapezoid rule).
	EnergyJ    float64 `json:"energy_j"`
	EnergyFrom string  `json:"energy_from"`
	// PowerMeanW is EnergyJ / the window's length; PowerMaxW the highest power sample
	// in the window (the energy's mean when the endpoint has no power gauge).
	PowerMeanW float64 `json:"power_mean_w"`
	PowerMaxW  float64 `json:"power_max_w"`
	// UtilMean is the mean GPU utilisation of the samples, a fraction in [0, 1] (DCGM
	// reports percent); nil without DCGM_FI_DEV_GPU_UTIL.
	UtilMean *float64 `json:"util_mean,omitempty"`
	// MemUsedMeanMiB and MemUsedMaxMiB are the framebuffer memory used, mean and peak;
	// MemTotalMiB is used + free at the last sample. nil without the series.
	MemUsedMeanMiB *float64 `json:"mem_used_mean_mib,omitempty"`
	MemUsedMaxMiB  *float64 `json:"mem_used_max_mib,omitempty"`
	MemTotalMiB    *float64 `json:"mem_total_mib,omitempty"`
}

// GPUSummary is a run's GPU telemetry: each GPU's, and their totals.
type GPUSummary struct {
	// StartUnixNano and EndUnixNano bound the window summarised; Seconds is its length.
	StartUnixNano int64   `json:"start_unix_nano"`
	EndUnixNano   int64   `json:"end_unix_nano"`
	Seconds       float64 `json:"seconds"`
	GPUs          []GPU   `json:"gpus"`
	// EnergyJ and PowerMeanW add up the GPUs'; UtilMean is their mean and
	// MemUsedMaxMiB the highest peak (nil when no GPU has the series).
	EnergyJ       float64  `json:"energy_j"`
	PowerMeanW    float64  `json:"power_mean_w"`
	UtilMean      *float64 `json:"util_mean,omitempty"`
	MemUsedMaxMiB *float64 `json:"mem_used_max_mib,omitempty"`
	// Scrapes and Failures count the scrapes of every endpoint.
	Scrapes  int `json:"scrapes"`
	Failures int `json:"failures"`
	// Warnings say what is missing or failed, one line each.
	Warnings []string `json:"warnings,omitempty"`
}

// gpuPoint is one scrape of one GPU; NaN = the series was absent.
type gpuPoint struct {
	t                              int64
	power, energy, util, used, fre float64
}

type gpuSeries struct {
	url, id, uuid, model, host string
	points                     []gpuPoint
}

// GPUAccumulator keeps the DCGM series of scrapes (only those: a few numbers per GPU
// per scrape) and summarises them over a window. It is safe for concurrent use:
// [Scraper]'s goroutines add to it while [GPUAccumulator.Check] reads it.
type GPUAccumulator struct {
	mu       sync.Mutex
	gpus     map[string]*gpuSeries
	order    []string
	urls     []string
	scrapes  map[string]int
	fails    map[string]int
	errs     map[string]string // first error per URL
	names    map[string][]string
	hasDCGM  map[string]bool
	answered map[string]bool
}

// NewGPUAccumulator returns an empty GPUAccumulator.
func NewGPUAccumulator() *GPUAccumulator {
	return &GPUAccumulator{gpus: map[string]*gpuSeries{}, scrapes: map[string]int{}, fails: map[string]int{},
		errs: map[string]string{}, names: map[string][]string{}, hasDCGM: map[string]bool{}, answered: map[string]bool{}}
}

// Add adds one scrape: its DCGM samples, by GPU.
func (a *GPUAccumulator) Add(sc Scrape) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.scrapes[sc.URL]; !ok {
		a.urls = append(a.urls, sc.URL)
	}
	a.scrapes[sc.URL]++
	if sc.Error != "" {
		a.fails[sc.URL]++
		if a.errs[sc.URL] == "" {
			a.errs[sc.URL] = sc.Error
		}
		return
	}
	a.answered[sc.URL] = true
	// A sample's time is its own timestamp when the exposition gives one, else the
	// middle of the scrape (the exporter answered some time during it).
	at := sc.UnixNano + sc.DurationNS/2
	pts := map[string]*gpuPoint{}
	var keys []string
	for _, s := range sc.Samples {
		var field *float64
		p := func(key string) *gpuPoint {
			pt := pts[key]
			if pt == nil {
				nan := math.NaN()
				pt = &gpuPoint{t: at, power: nan, energy: nan, util: nan, used: nan, fre: nan}
				pts[key] = pt
				keys = append(keys, key)
			}
			if s.TimestampMs > 0 && (s.Name == DCGMEnergy || s.Name == DCGMPower && math.IsNaN(pt.energy)) {
				pt.t = s.TimestampMs * 1e6 // when the exporter measured it
			}
			return pt
		}
		key := sc.URL + "\x00" + s.Labels["gpu"] + "\x00" + s.Labels["UUID"]
		switch s.Name {
		case DCGMPower:
			field = &p(key).power
		case DCGMEnergy:
			field = &p(key).energy
		case DCGMUtil:
			field = &p(key).util
		case DCGMFBUsed:
			field = &p(key).used
		case DCGMFBFree:
			field = &p(key).fre
		default:
			if len(a.names[sc.URL]) < 5 && !slices.Contains(a.names[sc.URL], s.Name) {
				a.names[sc.URL] = append(a.names[sc.URL], s.Name)
			}
			continue
		}
		if s.Name == DCGMPower || s.Name == DCGMEnergy {
			a.hasDCGM[sc.URL] = true
		}
		*field = s.Value
		if a.gpus[key] == nil {
			a.gpus[key] = &gpuSeries{url: sc.URL, id: s.Labels["gpu"], uuid: s.Labels["UUID"], model: s.Labels["modelName"], host: s.Labels["Hostname"]}
			a.order = append(a.order, key)
		}
	}
	for _, k := range keys {
		g := a.gpus[k]
		g.points = append(g.points, *pts[k])
		if n := len(g.points); n > 1 && g.points[n-2].t > g.points[n-1].t {
			slices.SortStableFunc(g.points, func(x, y gpuPoint) int { return cmp.Compare(x.t, y.t) })
		}
	}
}

// Check says, after the scrapes before the run, whether each endpoint serves DCGM's
// names: an endpoint that answered without any power or energy series is an error
// wrapping [ErrNoDCGM] (it is not a GPU exporter: the run would measure nothing), and
// one that could not be scraped is a warning (it may come up; the GPU metrics are
// unknown if it does not).
func (a *GPUAccumulator) Check() (warnings []string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for _, u := range a.urls {
		switch {
		case !a.answered[u]:
			warnings = append(warnings, fmt.Sprintf("gpu telemetry %s: %s; GPU metrics are unknown unless it answers during the run", u, strings.TrimPrefix(a.errs[u], "servermetrics: ")))
		case !a.hasDCGM[u]:
			seen := "no series at all"
			if n := a.names[u]; len(n) > 0 {
				seen = "series such as " + strings.Join(n, ", ")
			}
			errs = append(errs, fmt.Errorf("%w: gpu telemetry %s serves %s, not %s or %s (want a DCGM exporter's /metrics, e.g. http://HOST:9400/metrics)", ErrNoDCGM, u, seen, DCGMPower, DCGMEnergy))
		}
	}
	return warnings, errors.Join(errs...)
}

// Summary summarises the GPUs over w (the zero Window: over every scrape's span).
func (a *GPUAccumulator) Summary(w Window) GPUSummary {
	a.mu.Lock()
	defer a.mu.Unlock()
	var lo, hi int64
	if !w.Start.IsZero() && !w.End.IsZero() && w.End.After(w.Start) {
		lo, hi = w.Start.UnixNano(), w.End.UnixNano()
	} else {
		first := true
		for _, g := range a.gpus {
			for _, p := range g.points {
				if first || p.t < lo {
					lo = p.t
				}
				if first || p.t > hi {
					hi = p.t
				}
				first = false
			}
		}
	}
	s := GPUSummary{StartUnixNano: lo, EndUnixNano: hi, Seconds: float64(hi-lo) / 1e9, GPUs: []GPU{}}
	for _, u := range a.urls {
		s.Scrapes += a.scrapes[u]
		s.Failures += a.fails[u]
		switch {
		case !a.answered[u]:
			s.Warnings = append(s.Warnings, fmt.Sprintf("gpu telemetry %s: no scrape succeeded (%s)", u, strings.TrimPrefix(a.errs[u], "servermetrics: ")))
		case !a.hasDCGM[u]:
			s.Warnings = append(s.Warnings, fmt.Sprintf("gpu telemetry %s: no %s or %s series", u, DCGMPower, DCGMEnergy))
		case a.fails[u] > 0:
			s.Warnings = append(s.Warnings, fmt.Sprintf("gpu telemetry %s: %d of %d scrapes failed (%s)", u, a.fails[u], a.scrapes[u], strings.TrimPrefix(a.errs[u], "servermetrics: ")))
		}
	}
	var utils, mems []float64
	for _, k := range a.order {
		g, ok := a.gpus[k].summary(lo, hi)
		if !ok {
			continue
		}
		s.GPUs = append(s.GPUs, g)
		s.EnergyJ += g.EnergyJ
		s.PowerMeanW += g.PowerMeanW
		if g.UtilMean != nil {
			utils = append(utils, *g.UtilMean)
		}
		if g.MemUsedMaxMiB != nil {
			mems = append(mems, *g.MemUsedMaxMiB)
		}
	}
	if len(utils) > 0 {
		m := mean(utils)
		s.UtilMean = &m
	}
	if len(mems) > 0 {
		m := slices.Max(mems)
		s.MemUsedMaxMiB = &m
	}
	// Endpoints in the order given, each one's GPUs by index.
	at := func(u string) int { return slices.Index(a.urls, u) }
	sort.SliceStable(s.GPUs, func(i, j int) bool {
		x, y := s.GPUs[i], s.GPUs[j]
		if ux, uy := at(x.URL), at(y.URL); ux != uy {
			return ux < uy
		}
		if len(x.ID) != len(y.ID) {
			return len(x.ID) < len(y.ID) // "2" before "10"
		}
		return x.ID < y.ID
	})
	return s
}

// summary is one GPU's telemetry over [lo, hi] (Unix ns); false when it has no power
// or energy series.
func (g *gpuSeries) summary(lo, hi int64) (GPU, bool) {
	out := GPU{URL: g.url, ID: g.id, UUID: g.uuid, Model: g.model, Host: g.host}
	secs := float64(hi-lo) / 1e9
	col := func(f func(gpuPoint) float64) (ts []int64, vs []float64) {
		for _, p := range g.points {
			if v := f(p); !math.IsNaN(v) {
				ts, vs = append(ts, p.t), append(vs, v)
			}
		}
		return ts, vs
	}
	inside := func(ts []int64, vs []float64) []float64 {
		var out []float64
		for i, t := range ts {
			if t >= lo && t <= hi {
				out = append(out, vs[i])
			}
		}
		if len(out) == 0 && len(vs) > 0 {
			// No scrape fell inside a short window: the values around it.
			out = append(out, valueAt(ts, vs, lo), valueAt(ts, vs, hi))
		}
		return out
	}
	et, ev := col(func(p gpuPoint) float64 { return p.energy })
	pt, pv := col(func(p gpuPoint) float64 { return p.power })
	switch {
	case len(ev) >= 2:
		cum := unreset(ev)
		out.EnergyJ = (counterAt(et, cum, hi) - counterAt(et, cum, lo)) / 1000 // mJ → J
		out.EnergyFrom = "counter"
	case len(pv) >= 1:
		out.EnergyJ = integrate(pt, pv, lo, hi)
		out.EnergyFrom = "power"
	default:
		return out, false
	}
	if secs > 0 {
		out.PowerMeanW = out.EnergyJ / secs
	}
	out.PowerMaxW = out.PowerMeanW
	if in := inside(pt, pv); len(in) > 0 {
		out.PowerMaxW = slices.Max(in)
	}
	for _, p := range g.points {
		if p.t >= lo && p.t <= hi {
			out.Samples++
		}
	}
	if ut, uv := col(func(p gpuPoint) float64 { return p.util }); len(uv) > 0 {
		m := mean(inside(ut, uv)) / 100 // DCGM reports percent
		out.UtilMean = &m
	}
	if mt, mv := col(func(p gpuPoint) float64 { return p.used }); len(mv) > 0 {
		in := inside(mt, mv)
		m, x := mean(in), slices.Max(in)
		out.MemUsedMeanMiB, out.MemUsedMaxMiB = &m, &x
		for i := len(g.points) - 1; i >= 0; i-- {
			if p := g.points[i]; !math.IsNaN(p.used) && !math.IsNaN(p.fre) {
				tot := p.used + p.fre
				out.MemTotalMiB = &tot
				break
			}
		}
	}
	return out, true
}

// unreset turns a counter's samples into a series that only grows: a sample below
// the one before it is a reset (the driver reloaded), after which it counts from 0.
func unreset(vs []float64) []float64 {
	out := make([]float64, len(vs))
	out[0] = vs[0]
	for i := 1; i < len(vs); i++ {
		d := vs[i] - vs[i-1]
		if d < 0 {
			d = vs[i]
		}
		out[i] = out[i-1] + d
	}
	return out
}

// counterAt is a counter's value at t (ts ascending, at least two samples): linear
// between samples, and beyond the first or last sample extrapolated at the rate of the
// nearest interval, for at most that interval's length, then held. The exposition
// format stamps a sample to the millisecond, floored, so the scrape after a window can
// carry a stamp up to 1 ms before the window's end; holding the counter there would
// drop that millisecond's energy.
func counterAt(ts []int64, vs []float64, t int64) float64 {
	n := len(ts)
	switch {
	case t < ts[0]:
		j := 1 // the nearest interval of positive length (two scrapes can share a millisecond)
		for j < n-1 && ts[j] == ts[0] {
			j++
		}
		return extend(ts[0], vs[0], ts[j], vs[j], t)
	case t > ts[n-1]:
		j := n - 2
		for j > 0 && ts[j] == ts[n-1] {
			j--
		}
		return extend(ts[n-1], vs[n-1], ts[j], vs[j], t)
	}
	return valueAt(ts, vs, t)
}

// extend is the line through (t0, v0) and (t1, v1) at t, t no further from t0 than t1
// is; v0 when t0 = t1.
func extend(t0 int64, v0 float64, t1 int64, v1 float64, t int64) float64 {
	d := t1 - t0
	if d < 0 {
		d = -d
	}
	if d == 0 {
		return v0
	}
	return v0 + (v1-v0)/float64(t1-t0)*float64(max(-d, min(t-t0, d)))
}

// valueAt interpolates the samples (ts ascending) linearly at t, holding the first
// and last values beyond them.
func valueAt(ts []int64, vs []float64, t int64) float64 {
	i := sort.Search(len(ts), func(i int) bool { return ts[i] >= t })
	switch {
	case i == 0:
		return vs[0]
	case i == len(ts):
		return vs[len(vs)-1]
	case ts[i] == t:
		return vs[i]
	}
	f := float64(t-ts[i-1]) / float64(ts[i]-ts[i-1])
	return vs[i-1] + f*(vs[i]-vs[i-1])
}

// integrate is ∫ power dt over [lo, hi] (Unix ns, watts → joules), the samples joined
// by straight lines and held beyond the first and last.
func integrate(ts []int64, vs []float64, lo, hi int64) float64 {
	if hi <= lo {
		return 0
	}
	knots := []int64{lo}
	for _, t := range ts {
		if t > lo && t < hi {
			knots = append(knots, t)
		}
	}
	knots = append(knots, hi)
	var e float64
	for i := 1; i < len(knots); i++ {
		a, b := knots[i-1], knots[i]
		e += (valueAt(ts, vs, a) + valueAt(ts, vs, b)) / 2 * float64(b-a) / 1e9
	}
	return e
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// SummarizeGPU reads gpu_telemetry.jsonl lines (scrapes, as [Scraper] writes them)
// from r and summarises them over w.
func SummarizeGPU(r io.Reader, w Window) (GPUSummary, error) {
	a := NewGPUAccumulator()
	err := ReadScrapes(r, a.Add)
	return a.Summary(w), err
}

// ReadScrapes calls f with each scrape of a JSON-lines file as [Scraper] writes
// them (server_metrics.jsonl, gpu_telemetry.jsonl). A last line cut short by a killed
// writer ends the input; a line that is not a scrape is an error naming it.
func ReadScrapes(r io.Reader, f func(Scrape)) error {
	d := json.NewDecoder(r)
	for line := 1; ; line++ {
		var sc Scrape
		if err := d.Decode(&sc); err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("servermetrics: scrape %d: %w", line, err)
		}
		f(sc)
	}
}

// Lines renders the summary for a console or a report: the totals, then one line per
// GPU.
func (s GPUSummary) Lines() [][2]string {
	f := func(x float64, prec int) string { return fmt.Sprintf("%.*f", prec, x) }
	out := [][2]string{
		{"GPUs", fmt.Sprintf("%d (%d scrapes, %d failed, %.1f s window)", len(s.GPUs), s.Scrapes, s.Failures, s.Seconds)},
		{"GPU energy", f(s.EnergyJ, 1) + " J"},
		{"GPU power (mean, all GPUs)", f(s.PowerMeanW, 1) + " W"},
	}
	if s.UtilMean != nil {
		out = append(out, [2]string{"GPU utilisation (mean)", f(100**s.UtilMean, 1) + "%"})
	}
	if s.MemUsedMaxMiB != nil {
		out = append(out, [2]string{"GPU memory used (peak)", f(*s.MemUsedMaxMiB, 0) + " MiB"})
	}
	for _, g := range s.GPUs {
		line := fmt.Sprintf("%s J, %s W mean, %s W max", f(g.EnergyJ, 1), f(g.PowerMeanW, 1), f(g.PowerMaxW, 1))
		if g.UtilMean != nil {
			line += fmt.Sprintf(", util %s%%", f(100**g.UtilMean, 1))
		}
		if g.MemUsedMaxMiB != nil {
			line += fmt.Sprintf(", mem %s MiB peak", f(*g.MemUsedMaxMiB, 0))
		}
		name := "GPU " + g.ID
		if g.Model != "" {
			name += " (" + g.Model + ")"
		}
		out = append(out, [2]string{name, line})
	}
	return out
}
