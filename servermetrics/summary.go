package servermetrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Summary is what the scrapes of a run came to, per URL in the order first seen.
type Summary struct {
	Endpoints []Endpoint `json:"endpoints"`
}

// Scrapes and Failures total the endpoints'.
func (s Summary) Scrapes() (scrapes, failures int) {
	for _, e := range s.Endpoints {
		scrapes += e.Scrapes
		failures += e.Failures
	}
	return scrapes, failures
}

// Endpoint summarises the scrapes of one URL.
//
// Counters (and the _sum/_count of histograms and summaries) are given as deltas
// from the first successful scrape to the last; a value that goes down is taken as
// a counter reset (the delta then adds the new value, as Prometheus's increase()
// does). Gauges are given as statistics over the scrapes taken during the run, or
// over every scrape when there was none during it (a run shorter than the interval).
type Endpoint struct {
	// URL is the scraped URL, query values redacted.
	URL string `json:"url"`
	// Scrapes counts attempts, Failures the ones that failed; Errors holds the first
	// few distinct failure messages.
	Scrapes  int      `json:"scrapes"`
	Failures int      `json:"failures"`
	Errors   []string `json:"errors,omitempty"`
	// GaugesOver is "during" or "all": which scrapes the gauge statistics cover.
	GaugesOver string `json:"gauges_over,omitempty"`

	Counters   []Counter   `json:"counters,omitempty"`
	Gauges     []Gauge     `json:"gauges,omitempty"`
	Histograms []Histogram `json:"histograms,omitempty"`
	// Derived holds the figures computed from vLLM's and SGLang's metric names.
	Derived Derived `json:"derived"`
}

// Counter is a counter's change over the run.
type Counter struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	First  float64           `json:"first"`
	Last   float64           `json:"last"`
	Delta  float64           `json:"delta"`
}

// Gauge is a gauge's statistics over the run's scrapes (an untyped series and a
// summary's quantile count as gauges).
type Gauge struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	N      int               `json:"n"`
	Mean   float64           `json:"mean"`
	Min    float64           `json:"min"`
	Max    float64           `json:"max"`
	Last   float64           `json:"last"`
}

// Histogram is a histogram's (or summary's) observations over the run: the deltas
// of its _count and _sum, and their ratio, the mean observation (NaN-free: 0 when
// Count is 0).
type Histogram struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Count  float64           `json:"count"`
	Sum    float64           `json:"sum"`
	Mean   float64           `json:"mean"`
}

// Derived figures, each nil when the server does not export what it needs. Label
// sets are added up (several models or engines behind one endpoint count together).
type Derived struct {
	// PromptTokens and GenerationTokens are the deltas of vllm:prompt_tokens_total /
	// vllm:generation_tokens_total (SGLang: sglang:…).
	PromptTokens     *float64 `json:"prompt_tokens,omitempty"`
	GenerationTokens *float64 `json:"generation_tokens,omitempty"`
	// PrefixCacheHitRate is Δhits/Δqueries of vllm:prefix_cache_{hits,queries}_total
	// (older vLLM: vllm:gpu_prefix_cache_…), or the mean of SGLang's
	// sglang:cache_hit_rate gauge; a fraction in [0, 1].
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate,omitempty"`
	// SpecDecodeAcceptanceRate is Δaccepted/Δdraft of
	// vllm:spec_decode_num_{accepted,draft}_tokens_total, or SGLang's
	// sglang:spec_accept_rate gauge averaged over the run; a fraction.
	SpecDecodeAcceptanceRate *float64 `json:"spec_decode_acceptance_rate,omitempty"`
	// MeanRunning and MeanWaiting are the mean requests running and waiting
	// (vllm:num_requests_running / _waiting, sglang:num_running_reqs /
	// sglang:num_queue_reqs); PeakRunning and PeakWaiting their maxima.
	MeanRunning *float64 `json:"mean_running,omitempty"`
	PeakRunning *float64 `json:"peak_running,omitempty"`
	MeanWaiting *float64 `json:"mean_waiting,omitempty"`
	PeakWaiting *float64 `json:"peak_waiting,omitempty"`
	// PeakKVCacheUsage is the largest KV-cache usage seen, a fraction in [0, 1]
	// (vllm:kv_cache_usage_perc, older vllm:gpu_cache_usage_perc, sglang:token_usage).
	PeakKVCacheUsage *float64 `json:"peak_kv_cache_usage,omitempty"`
	// MeanTTFTSeconds is the server's own mean time to first token over the run,
	// Δsum/Δcount of the time_to_first_token_seconds histogram.
	MeanTTFTSeconds *float64 `json:"mean_ttft_seconds,omitempty"`
}

// Metric names the derived figures read, by role: vLLM's first, then older vLLM's,
// then SGLang's. A counter matches with or without its "_total" suffix.
var (
	namesPromptTokens = []string{"vllm:prompt_tokens_total", "sglang:prompt_tokens_total"}
	namesGenTokens    = []string{"vllm:generation_tokens_total", "sglang:generation_tokens_total"}
	namesPrefixHits   = []string{"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"}
	namesPrefixQuery  = []string{"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"}
	namesHitRateGauge = []string{"sglang:cache_hit_rate"}
	namesSpecAccepted = []string{"vllm:spec_decode_num_accepted_tokens_total"}
	namesSpecDraft    = []string{"vllm:spec_decode_num_draft_tokens_total"}
	// SGLang reports acceptance as a gauge (accepted / draft tokens), averaged over
	// the run's scrapes as sglang:cache_hit_rate is.
	namesSpecRateGauge = []string{"sglang:spec_accept_rate"}
	namesRunning       = []string{"vllm:num_requests_running", "sglang:num_running_reqs"}
	namesWaiting       = []string{"vllm:num_requests_waiting", "sglang:num_queue_reqs"}
	namesKVUsage       = []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"}
	namesTTFT          = []string{"vllm:time_to_first_token_seconds", "sglang:time_to_first_token_seconds"}
)

// maxErrors is how many distinct failure messages an Endpoint keeps.
const maxErrors = 5

// Accumulator builds a [Summary] from scrapes, one at a time, in the order taken. It
// keeps one small state per series, not the scrapes. Not safe for concurrent use.
type Accumulator struct {
	order []string
	eps   map[string]*epAcc
}

type stat struct {
	n                   int
	sum, min, max, last float64
}

func (s *stat) add(v float64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	s.sum += v
	s.last = v
}

func (s *stat) mean() float64 {
	if s.n == 0 {
		return 0
	}
	return s.sum / float64(s.n)
}

type seriesAcc struct {
	name   string
	labels map[string]string
	typ    string
	// counters
	seen               bool
	first, last, delta float64
	// gauges
	during, all stat
}

type epAcc struct {
	url              string
	scrapes, fails   int
	errors           []string
	order            []string
	series           map[string]*seriesAcc
	duringN          int
	totalsD, totalsA map[string]*stat // per-scrape sums of a derived gauge name
}

// NewAccumulator returns an empty Accumulator.
func NewAccumulator() *Accumulator { return &Accumulator{eps: map[string]*epAcc{}} }

// Add adds one scrape.
func (a *Accumulator) Add(sc Scrape) {
	e := a.eps[sc.URL]
	if e == nil {
		e = &epAcc{url: sc.URL, series: map[string]*seriesAcc{}, totalsD: map[string]*stat{}, totalsA: map[string]*stat{}}
		a.eps[sc.URL] = e
		a.order = append(a.order, sc.URL)
	}
	e.scrapes++
	if sc.Error != "" {
		e.fails++
		if len(e.errors) < maxErrors && !slices.Contains(e.errors, sc.Error) {
			e.errors = append(e.errors, sc.Error)
		}
		return
	}
	during := sc.Phase == PhaseDuring
	if during {
		e.duringN++
	}
	totals := map[string]float64{}
	for _, s := range sc.Samples {
		key := seriesKey(s.Name, s.Labels)
		sa := e.series[key]
		if sa == nil {
			sa = &seriesAcc{name: s.Name, labels: s.Labels, typ: s.Type}
			e.series[key] = sa
			e.order = append(e.order, key)
		}
		if cumulative(s) {
			switch {
			case !sa.seen:
				sa.first, sa.seen = s.Value, true
			case s.Value >= sa.last:
				sa.delta += s.Value - sa.last
			default:
				sa.delta += s.Value // a reset: the counter restarted from 0
			}
			sa.last = s.Value
			continue
		}
		sa.all.add(s.Value)
		if during {
			sa.during.add(s.Value)
		}
		totals[s.Name] += s.Value
	}
	for name, v := range totals {
		for _, m := range []struct {
			on bool
			to map[string]*stat
		}{{true, e.totalsA}, {during, e.totalsD}} {
			if !m.on {
				continue
			}
			st := m.to[name]
			if st == nil {
				st = &stat{}
				m.to[name] = st
			}
			st.add(v)
		}
	}
}

// cumulative reports whether a sample only grows: a counter, or a histogram's or
// summary's buckets, _sum and _count.
func cumulative(s Sample) bool {
	switch s.Type {
	case TypeCounter:
		return true
	case TypeHistogram:
		return true
	case TypeSummary:
		return strings.HasSuffix(s.Name, "_sum") || strings.HasSuffix(s.Name, "_count")
	}
	return false
}

// Summary returns the summary of the scrapes added so far.
func (a *Accumulator) Summary() Summary {
	out := Summary{Endpoints: []Endpoint{}}
	for _, u := range a.order {
		out.Endpoints = append(out.Endpoints, a.eps[u].summary())
	}
	return out
}

func (e *epAcc) summary() Endpoint {
	ep := Endpoint{URL: e.url, Scrapes: e.scrapes, Failures: e.fails, Errors: e.errors}
	useDuring := e.duringN > 0
	ep.GaugesOver = "all"
	totals := e.totalsA
	if useDuring {
		ep.GaugesOver, totals = "during", e.totalsD
	}
	if e.scrapes == e.fails {
		ep.GaugesOver = ""
	}
	hist := map[string]*Histogram{}
	var hkeys []string
	for _, key := range e.order {
		s := e.series[key]
		if cumulative(Sample{Name: s.name, Type: s.typ}) {
			base, part, ok := histPart(s)
			if ok {
				if part == "bucket" {
					continue // buckets stay in the recording
				}
				hk := seriesKey(base, s.labels)
				h := hist[hk]
				if h == nil {
					h = &Histogram{Name: base, Labels: s.labels}
					hist[hk] = h
					hkeys = append(hkeys, hk)
				}
				if part == "sum" {
					h.Sum = s.delta
				} else {
					h.Count = s.delta
				}
				continue
			}
			ep.Counters = append(ep.Counters, Counter{Name: s.name, Labels: s.labels, First: s.first, Last: s.last, Delta: s.delta})
			continue
		}
		st := s.all
		if useDuring {
			st = s.during
		}
		if st.n == 0 {
			continue
		}
		ep.Gauges = append(ep.Gauges, Gauge{Name: s.name, Labels: s.labels, N: st.n, Mean: st.mean(), Min: st.min, Max: st.max, Last: st.last})
	}
	for _, hk := range hkeys {
		h := hist[hk]
		if h.Count > 0 {
			h.Mean = h.Sum / h.Count
		}
		ep.Histograms = append(ep.Histograms, *h)
	}
	ep.Derived = e.derived(ep, totals)
	return ep
}

// histPart splits a histogram's or summary's series name into its family and part
// ("bucket", "sum" or "count").
func histPart(s *seriesAcc) (base, part string, ok bool) {
	if s.typ != TypeHistogram && s.typ != TypeSummary {
		return "", "", false
	}
	for _, p := range []string{"bucket", "sum", "count"} {
		if b, ok := strings.CutSuffix(s.name, "_"+p); ok {
			return b, p, true
		}
	}
	return "", "", false
}

func (e *epAcc) derived(ep Endpoint, totals map[string]*stat) Derived {
	// counter deltas by name, label sets added up; a name matches with or without _total
	deltas := map[string]float64{}
	for _, c := range ep.Counters {
		deltas[c.Name] += c.Delta
		if b, ok := strings.CutSuffix(c.Name, "_total"); ok {
			deltas[b] += c.Delta
		} else {
			deltas[c.Name+"_total"] += c.Delta
		}
	}
	has := func(name string) bool {
		for _, c := range ep.Counters {
			if c.Name == name || c.Name+"_total" == name || c.Name == name+"_total" {
				return true
			}
		}
		return false
	}
	counter := func(names []string) (float64, bool) {
		for _, n := range names {
			if has(n) {
				return deltas[n], true
			}
		}
		return 0, false
	}
	gauge := func(names []string) *stat {
		for _, n := range names {
			if st := totals[n]; st != nil && st.n > 0 {
				return st
			}
		}
		return nil
	}
	ptr := func(v float64) *float64 { return &v }
	var d Derived
	if v, ok := counter(namesPromptTokens); ok {
		d.PromptTokens = ptr(v)
	}
	if v, ok := counter(namesGenTokens); ok {
		d.GenerationTokens = ptr(v)
	}
	if q, ok := counter(namesPrefixQuery); ok && q > 0 {
		if h, ok := counter(namesPrefixHits); ok {
			d.PrefixCacheHitRate = ptr(h / q)
		}
	} else if st := gauge(namesHitRateGauge); st != nil {
		d.PrefixCacheHitRate = ptr(st.mean())
	}
	if dr, ok := counter(namesSpecDraft); ok && dr > 0 {
		if ac, ok := counter(namesSpecAccepted); ok {
			d.SpecDecodeAcceptanceRate = ptr(ac / dr)
		}
	} else if st := gauge(namesSpecRateGauge); st != nil {
		d.SpecDecodeAcceptanceRate = ptr(st.mean())
	}
	if st := gauge(namesRunning); st != nil {
		d.MeanRunning, d.PeakRunning = ptr(st.mean()), ptr(st.max)
	}
	if st := gauge(namesWaiting); st != nil {
		d.MeanWaiting, d.PeakWaiting = ptr(st.mean()), ptr(st.max)
	}
	// The peak KV-cache usage is over every scrape: a peak is a peak.
	for _, n := range namesKVUsage {
		if st := e.totalsA[n]; st != nil && st.n > 0 {
			d.PeakKVCacheUsage = ptr(st.max)
			break
		}
	}
	for _, n := range namesTTFT {
		var cnt, sum float64
		found := false
		for _, h := range ep.Histograms {
			if h.Name == n {
				cnt, sum, found = cnt+h.Count, sum+h.Sum, true
			}
		}
		if found && cnt > 0 {
			d.MeanTTFTSeconds = ptr(sum / cnt)
			break
		}
	}
	return d
}

// seriesKey is name{k="v",…} with the labels sorted.
func seriesKey(name string, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(labels[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// Summarize reads server_metrics.jsonl lines from r and returns their summary.
func Summarize(r io.Reader) (Summary, error) {
	a := NewAccumulator()
	d := json.NewDecoder(r)
	for line := 1; ; line++ {
		var sc Scrape
		if err := d.Decode(&sc); err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			break // the end, or a last line cut short by a killed writer
		} else if err != nil {
			return a.Summary(), fmt.Errorf("servermetrics: scrape %d: %w", line, err)
		}
		a.Add(sc)
	}
	return a.Summary(), nil
}

// Lines renders the derived figures and the scrape counts as short "name: value"
// lines, for a console or a report. Absent figures are left out.
func (e Endpoint) Lines() [][2]string {
	var out [][2]string
	add := func(k string, v *float64, format func(float64) string) {
		if v != nil && !math.IsNaN(*v) {
			out = append(out, [2]string{k, format(*v)})
		}
	}
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	two := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
	out = append(out, [2]string{"scrapes", fmt.Sprintf("%d (%d failed)", e.Scrapes, e.Failures)})
	d := e.Derived
	add("prompt tokens (server)", d.PromptTokens, num)
	add("generation tokens (server)", d.GenerationTokens, num)
	add("prefix-cache hit rate", d.PrefixCacheHitRate, pct)
	add("spec-decode acceptance rate", d.SpecDecodeAcceptanceRate, pct)
	add("mean running requests", d.MeanRunning, two)
	add("peak running requests", d.PeakRunning, num)
	add("mean waiting requests", d.MeanWaiting, two)
	add("peak waiting requests", d.PeakWaiting, num)
	add("peak KV-cache usage", d.PeakKVCacheUsage, pct)
	add("server mean TTFT (ms)", d.MeanTTFTSeconds, func(x float64) string { return strconv.FormatFloat(1000*x, 'f', 2, 64) })
	return out
}
