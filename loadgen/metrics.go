package loadgen

import (
	"math"
	"slices"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/record"
)

// MetricsOptions tunes [ComputeMetrics]. The zero value uses the client's token counts
// and no SLO.
type MetricsOptions struct {
	// UsageOSL makes OSL (and every metric derived from it: ITL, throughputs) use the
	// server's usage.completion_tokens when present, instead of the client tokenizer's
	// count of the received text (AIPerf's default is the client count).
	UsageOSL bool
	// SLO maps a per-request metric name (record.MetricTTFT, record.MetricITL or
	// record.MetricRequestLatency; any other name makes no request good) to its maximum, in the metric's unit (ms for
	// latencies). A request is "good" when it succeeded and meets every entry;
	// goodput = good requests / benchmark duration. Empty: goodput is not reported.
	SLO map[string]float64
}

const (
	unitMS         = "ms"
	unitTokens     = "tokens"
	unitTokPerUser = "tokens/sec/user"
)

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// ComputeMetrics summarises records with AIPerf's metric definitions (and vLLM's
// where they differ, under the *_vllm names; see the record.Metric… constants).
// Warmup records are left out. Errored records count toward error metrics only.
// The benchmark duration runs from the first non-warmup request sent to the last one
// done. Percentiles use numpy's linear interpolation.
func ComputeMetrics(recs []record.Client, opt MetricsOptions) record.Metrics {
	a := newAccumulator(opt)
	for i := range recs {
		a.add(&recs[i])
	}
	return a.metrics()
}

// accumulator computes metrics incrementally, keeping only the per-metric values (not
// the records), so long runs can drop records as they are written.
type accumulator struct {
	opt              MetricsOptions
	m                record.Metrics
	series           map[string]*series
	ok, errs, good   int
	first            time.Duration
	last             time.Duration
	totalOSL, totISL int
	gaps             []time.Duration
}

func newAccumulator(opt MetricsOptions) *accumulator {
	a := &accumulator{opt: opt, series: map[string]*series{}, first: -1}
	a.m = record.Metrics{
		Stats:   map[string]record.Stat{},
		Scalars: map[string]record.Scalar{},
		Errors:  map[string]int{},
		SLO:     opt.SLO,
	}
	a.m.OSLSource = "client"
	if opt.UsageOSL {
		a.m.OSLSource = "usage"
	}
	return a
}

func (a *accumulator) add1(name string, v float64) {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		s := a.series[name]
		if s == nil {
			s = &series{}
			a.series[name] = s
		}
		s.add(v)
	}
}

// series holds one metric's values in blocks, so a long run's series grows without
// copying what it holds (one value per request, at tens of thousands a second).
type series struct{ blocks [][]float64 }

const (
	minSeriesBlock = 64
	maxSeriesBlock = 8192
)

// blockCap returns the capacity of block n: 64, 128, … doubling up to maxSeriesBlock.
// The shift is bounded first, so block 57 and later do not overflow to a negative cap.
func blockCap(n int) int {
	if n >= 7 { // 64<<7 == maxSeriesBlock
		return maxSeriesBlock
	}
	return minSeriesBlock << n
}

func (s *series) add(v float64) {
	n := len(s.blocks)
	if n == 0 || len(s.blocks[n-1]) == cap(s.blocks[n-1]) {
		s.blocks = append(s.blocks, make([]float64, 0, blockCap(n)))
		n++
	}
	s.blocks[n-1] = append(s.blocks[n-1], v)
}

// values returns the values in the order added.
func (s *series) values() []float64 {
	if len(s.blocks) == 1 {
		return s.blocks[0]
	}
	var n int
	for _, b := range s.blocks {
		n += len(b)
	}
	xs := make([]float64, 0, n)
	for _, b := range s.blocks {
		xs = append(xs, b...)
	}
	return xs
}

func (a *accumulator) add(r *record.Client) {
	opt, m, add := a.opt, &a.m, a.add1
	if r.Warmup {
		m.Warmup++
		return
	}
	if a.first < 0 || r.Sent < a.first {
		a.first = r.Sent
	}
	if r.Done > a.last {
		a.last = r.Done
	}
	if !r.ISLExact && r.RequestedISL > 0 {
		m.ISLInexact++
	}
	if !r.OK() {
		a.errs++
		m.Errors[r.ErrorKind]++
		return
	}
	a.ok++
	osl := r.OSL
	if opt.UsageOSL && r.UsageCompletionTokens >= 0 {
		osl = r.UsageCompletionTokens
	}
	a.totalOSL += osl
	a.totISL += r.ISL
	lat := r.Latency()
	per := perRequest{latency: ms(lat), ttft: math.NaN(), itl: math.NaN()}
	add(record.MetricRequestLatency, ms(lat))
	add(record.MetricISL, float64(r.ISL))
	add(record.MetricOSL, float64(osl))
	if r.UsageCompletionTokens >= 0 {
		add(record.MetricUsageOSL, float64(r.UsageCompletionTokens))
	}
	add(record.MetricQueueTime, ms(r.QueueTime()))
	if !r.Stream {
		a.good += per.good(opt.SLO)
		return
	}
	ft, hasFT := r.FirstToken()
	if hasFT {
		ttft := ft - r.Sent
		per.ttft = ms(ttft)
		add(record.MetricTTFT, ms(ttft))
		if ttft > 0 {
			add(record.MetricPrefillThroughputPerUser, float64(r.ISL)/ttft.Seconds())
		}
		seen := false
		for _, ch := range r.Chunks {
			if ch.Tokens > 0 {
				if seen {
					add(record.MetricTTST, ms(ch.T-ft))
					break
				}
				seen = true
			}
		}
		if osl >= 2 {
			itl := (lat - ttft).Seconds() * 1e3 / float64(osl-1)
			per.itl = itl
			add(record.MetricITL, itl)
			if itl > 0 {
				add(record.MetricOutputTokenThroughputPerUser, 1e3/itl)
			}
		}
	}
	a.gaps = r.ContentGaps(a.gaps[:0])
	for _, g := range a.gaps {
		add(record.MetricICL, ms(g))
	}
	// vLLM: TTFT at the first chunk with choices; ITL = every later choices chunk gap.
	if fc, ok := r.FirstChoice(); ok {
		vt := fc - r.Sent
		add(record.MetricTTFTVLLM, ms(vt))
		prev := fc
		started := false
		for _, ch := range r.Chunks {
			if !(ch.Choices || ch.Tokens > 0) {
				continue
			}
			if !started {
				started = true
				continue
			}
			add(record.MetricITLVLLM, ms(ch.T-prev))
			prev = ch.T
		}
		if osl > 1 {
			add(record.MetricTPOTVLLM, (lat-vt).Seconds()*1e3/float64(osl-1))
		}
	}
	a.good += per.good(opt.SLO)
}

var metricUnits = map[string]string{
	record.MetricTTFT: unitMS, record.MetricTTFTVLLM: unitMS, record.MetricTTST: unitMS,
	record.MetricITL: unitMS, record.MetricICL: unitMS, record.MetricITLVLLM: unitMS,
	record.MetricTPOTVLLM: unitMS, record.MetricRequestLatency: unitMS, record.MetricQueueTime: unitMS,
	record.MetricOutputTokenThroughputPerUser: unitTokPerUser, record.MetricPrefillThroughputPerUser: unitTokPerUser,
	record.MetricOSL: unitTokens, record.MetricISL: unitTokens, record.MetricUsageOSL: unitTokens,
}

func (a *accumulator) metrics() record.Metrics {
	m := a.m
	m.Stats = map[string]record.Stat{}
	for name, s := range a.series {
		m.Stats[name] = Summarize(s.values(), metricUnits[name])
	}
	m.Scalars = map[string]record.Scalar{}
	ok, errs := a.ok, a.errs
	dur := 0.0
	if a.first >= 0 && a.last > a.first {
		dur = (a.last - a.first).Seconds()
	}
	m.Scalars[record.MetricBenchmarkDuration] = record.Scalar{Unit: "sec", Value: dur}
	m.Scalars[record.MetricRequestCount] = record.Scalar{Unit: "requests", Value: float64(ok)}
	m.Scalars[record.MetricErrorCount] = record.Scalar{Unit: "requests", Value: float64(errs)}
	m.Scalars[record.MetricTotalOSL] = record.Scalar{Unit: unitTokens, Value: float64(a.totalOSL)}
	m.Scalars[record.MetricTotalISL] = record.Scalar{Unit: unitTokens, Value: float64(a.totISL)}
	if ok+errs > 0 {
		m.Scalars[record.MetricErrorRate] = record.Scalar{Unit: "ratio", Value: float64(errs) / float64(ok+errs)}
	}
	if dur > 0 {
		m.Scalars[record.MetricRequestThroughput] = record.Scalar{Unit: "requests/sec", Value: float64(ok) / dur}
		m.Scalars[record.MetricOutputTokenThroughput] = record.Scalar{Unit: "tokens/sec", Value: float64(a.totalOSL) / dur}
		m.Scalars[record.MetricTotalTokenThroughput] = record.Scalar{Unit: "tokens/sec", Value: float64(a.totalOSL+a.totISL) / dur}
		if len(a.opt.SLO) > 0 {
			m.Scalars[record.MetricGoodput] = record.Scalar{Unit: "requests/sec", Value: float64(a.good) / dur}
		}
	}
	if len(a.opt.SLO) > 0 {
		m.Scalars[record.MetricGoodRequestCount] = record.Scalar{Unit: "requests", Value: float64(a.good)}
	}
	return m
}

// perRequest holds the per-request values an SLO can name (NaN = not measured).
type perRequest struct{ latency, ttft, itl float64 }

// good returns 1 if every SLO entry is measured for the request and within its bound.
func (p perRequest) good(slo map[string]float64) int {
	for name, max := range slo {
		var v float64
		switch name {
		case record.MetricRequestLatency:
			v = p.latency
		case record.MetricTTFT:
			v = p.ttft
		case record.MetricITL:
			v = p.itl
		default:
			return 0
		}
		if math.IsNaN(v) || v > max {
			return 0
		}
	}
	return 1
}

// Summarize returns the mean, population std, min, max and the p1…p99 percentiles of
// xs (numpy linear interpolation), labelled with unit. An empty xs gives a zero Stat.
func Summarize(xs []float64, unit string) record.Stat {
	s := record.Stat{Unit: unit, Count: len(xs)}
	if len(xs) == 0 {
		return s
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	var sum float64
	for _, x := range sorted {
		sum += x
	}
	mean := sum / float64(len(sorted))
	var ss float64
	for _, x := range sorted {
		ss += (x - mean) * (x - mean)
	}
	s.Avg, s.Std = mean, math.Sqrt(ss/float64(len(sorted)))
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	q := func(p float64) float64 { return distribution.PercentileSorted(sorted, p) }
	s.P1, s.P5, s.P10, s.P25, s.P50 = q(0.01), q(0.05), q(0.10), q(0.25), q(0.50)
	s.P75, s.P90, s.P95, s.P99 = q(0.75), q(0.90), q(0.95), q(0.99)
	return s
}
