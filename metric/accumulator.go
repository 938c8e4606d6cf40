package metric

import (
	"math"
	"time"
	"unsafe"

	"github.com/perfgate/perfgate/record"
)

// Units of the reported metrics.
const (
	UnitMS         = "ms"
	UnitTokens     = "tokens"
	UnitTokPerUser = "tokens/sec/user"
)

// Units maps each per-request and per-token metric name to its unit.
var Units = map[string]string{
	record.MetricTTFT: UnitMS, record.MetricTTFTVLLM: UnitMS, record.MetricTTST: UnitMS,
	record.MetricITL: UnitMS, record.MetricICL: UnitMS, record.MetricITLVLLM: UnitMS,
	record.MetricTPOTVLLM: UnitMS, record.MetricRequestLatency: UnitMS, record.MetricQueueTime: UnitMS,
	record.MetricOutputTokenThroughputPerUser: UnitTokPerUser, record.MetricPrefillThroughputPerUser: UnitTokPerUser,
	record.MetricOSL: UnitTokens, record.MetricISL: UnitTokens, record.MetricUsageOSL: UnitTokens,
	record.MetricTTFO: UnitMS, record.MetricReasoningTokens: UnitTokens, record.MetricOutputTokens: UnitTokens,
}

// compact is one successful request's values in 64 bytes: what every per-request
// metric is derived from ([Request] without the gaps). All are exact but TTFO, kept as
// its distance from TTFT: in ns up to ±2.1 s, in µs beyond (fTTFOMicro).
type compact struct {
	latency, ttft, ttst, ttftVLLM, queue int64 // ns
	isl, osl, usage, reasoning           int32 // usage -1 = none
	ttfo                                 int32 // TTFO − TTFT, ns (µs with fTTFOMicro)
	flags                                uint8
}

const compactSize = int(unsafe.Sizeof(compact{}))

const (
	fTTFT = 1 << iota
	fTTST
	fTTFTVLLM
	fTTFO
	fTTFOMicro
)

// packTTFO returns TTFO − TTFT as stored in a compact value, and whether it is in µs.
func packTTFO(d time.Duration) (int32, bool) {
	if d >= math.MinInt32 && d <= math.MaxInt32 {
		return int32(d), false
	}
	return clamp32(int(d / time.Microsecond)), true
}

func (c *compact) request() Request {
	return Request{
		OK: true, Latency: time.Duration(c.latency), Queue: time.Duration(c.queue),
		TTFT: time.Duration(c.ttft), HasTTFT: c.flags&fTTFT != 0,
		TTST: time.Duration(c.ttst), HasTTST: c.flags&fTTST != 0,
		TTFTVLLM: time.Duration(c.ttftVLLM), HasTTFTVLLM: c.flags&fTTFTVLLM != 0,
		TTFO: c.ttfoValue(), HasTTFO: c.flags&fTTFO != 0,
		ISL: int(c.isl), OSL: int(c.osl), UsageOSL: int(c.usage), Reasoning: int(c.reasoning),
	}
}

func (c *compact) ttfoValue() time.Duration {
	d := time.Duration(c.ttfo)
	if c.flags&fTTFOMicro != 0 {
		d *= time.Microsecond
	}
	return time.Duration(c.ttft) + d
}

func clamp32(n int) int32 { return int32(min(max(n, math.MinInt32), math.MaxInt32)) }

const blockLen = 4096 // compact values per block: 256 KiB

// Accumulator computes a run's [record.Metrics] from its records as they arrive,
// without keeping them. Per-request values are kept exact (TTFO to the µs past 2 s), 64 bytes a request (KS and
// regression checks need the exact sample); per-token values (inter-chunk latency,
// vLLM's ITL) go into [Sketch]es, so memory does not grow with tokens.
//
// The zero Accumulator is not usable; call [NewAccumulator]. It is not safe for
// concurrent use.
type Accumulator struct {
	opt         Options
	slo         SLO
	hasSLO      bool
	blocks      [][]compact
	icl, itlv   Sketch
	ok, errs    int
	good, warm  int
	inexact     int
	errors      map[string]int
	first, last time.Duration
	totOSL      int
	totISL      int
	totReason   int
	scratch     Request
	// approx: per-request values go into reqs (one sketch per [PerRequest] entry)
	// instead of blocks.
	approx bool
	reqs   []Sketch
}

// NewAccumulator returns an empty accumulator using opt's definitions.
func NewAccumulator(opt Options) *Accumulator {
	return &Accumulator{opt: opt, errors: map[string]int{}, first: -1}
}

// SetSLO makes the accumulator count goodput against slo (record.MetricGoodput and
// record.MetricGoodRequestCount); without it they are not reported.
func (a *Accumulator) SetSLO(slo SLO) { a.slo, a.hasSLO = slo, true }

// Approximate makes the accumulator keep per-request values in [Sketch]es as well,
// one per [PerRequest] metric, instead of exactly: memory stays constant however many
// requests are added, and every per-request percentile is within
// [SketchRelativeError] of the exact one (count, mean, std, min and max stay exact).
// [Accumulator.Requests] then yields nothing. For a run whose records are on disk,
// where the exact values are derived again after the run. Call it before Add.
func (a *Accumulator) Approximate() {
	a.approx = true
	a.reqs = make([]Sketch, len(PerRequest))
}

// Add accounts for one record. Warmup records are counted and otherwise left out;
// errored records count toward the error metrics only. The benchmark duration runs
// from the first non-warmup request sent to the last one done.
func (a *Accumulator) Add(r *record.Client) {
	if r.Warmup {
		a.warm++
		return
	}
	if a.first < 0 || r.Sent < a.first {
		a.first = r.Sent
	}
	a.last = max(a.last, r.Done)
	if !r.ISLExact && r.RequestedISL > 0 {
		a.inexact++
	}
	if !r.OK() {
		a.errs++
		a.errors[r.ErrorKind]++
		return
	}
	a.ok++
	q := &a.scratch
	q.Reset(r, a.opt)
	a.totOSL += q.OSL
	a.totISL += q.ISL
	a.totReason += q.Reasoning
	if a.hasSLO && a.slo.Good(q) {
		a.good++
	}
	for _, g := range q.ICL {
		a.icl.Add(MS(g))
	}
	for _, g := range q.ITLVLLM {
		a.itlv.Add(MS(g))
	}
	if a.approx {
		for k, d := range PerRequest {
			if v, ok := d.F(q); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				a.reqs[k].Add(v)
			}
		}
		return
	}
	c := compact{
		latency: int64(q.Latency), ttft: int64(q.TTFT), ttst: int64(q.TTST), ttftVLLM: int64(q.TTFTVLLM),
		queue: int64(q.Queue), isl: clamp32(q.ISL), osl: clamp32(q.OSL), usage: clamp32(q.UsageOSL),
		reasoning: clamp32(q.Reasoning),
	}
	if q.HasTTFO {
		var micro bool
		c.ttfo, micro = packTTFO(q.TTFO - q.TTFT)
		c.flags |= fTTFO
		if micro {
			c.flags |= fTTFOMicro
		}
	}
	if q.HasTTFT {
		c.flags |= fTTFT
	}
	if q.HasTTST {
		c.flags |= fTTST
	}
	if q.HasTTFTVLLM {
		c.flags |= fTTFTVLLM
	}
	n := len(a.blocks)
	if n == 0 || len(a.blocks[n-1]) == blockLen {
		a.blocks = append(a.blocks, make([]compact, 0, blockLen))
		n++
	}
	a.blocks[n-1] = append(a.blocks[n-1], c)
}

// Bytes returns the accumulator's approximate size in memory.
func (a *Accumulator) Bytes() int {
	n := len(a.blocks)*blockLen*compactSize + a.icl.Bytes() + a.itlv.Bytes() + 256
	for i := range a.reqs {
		n += a.reqs[i].Bytes()
	}
	return n
}

// Requests calls f with each successful non-warmup request's values (without ICL and
// ITLVLLM, which the accumulator keeps only as sketches), in the order added.
func (a *Accumulator) Requests(f func(*Request)) {
	var q Request // one value for the whole walk: f gets a pointer, so a per-request one would escape
	for _, b := range a.blocks {
		for i := range b {
			q = b[i].request()
			f(&q)
		}
	}
}

// PerRequest is the list of per-request metrics and how each is derived from a
// [Request]: f returns the value and whether the request has one. Every report of a
// per-request metric goes through this table.
var PerRequest = []struct {
	Name string
	F    func(*Request) (float64, bool)
}{
	{record.MetricRequestLatency, func(q *Request) (float64, bool) { return MS(q.Latency), true }},
	{record.MetricISL, func(q *Request) (float64, bool) { return float64(q.ISL), true }},
	{record.MetricOSL, func(q *Request) (float64, bool) { return float64(q.OSL), true }},
	{record.MetricUsageOSL, func(q *Request) (float64, bool) { return float64(q.UsageOSL), q.UsageOSL >= 0 }},
	{record.MetricOutputTokens, func(q *Request) (float64, bool) { return float64(q.Output()), true }},
	{record.MetricReasoningTokens, func(q *Request) (float64, bool) { return float64(q.Reasoning), true }},
	{record.MetricQueueTime, func(q *Request) (float64, bool) { return MS(q.Queue), true }},
	{record.MetricTTFT, func(q *Request) (float64, bool) { return MS(q.TTFT), q.HasTTFT }},
	{record.MetricPrefillThroughputPerUser, (*Request).PrefillThroughputPerUser},
	{record.MetricTTFO, func(q *Request) (float64, bool) { return MS(q.TTFO), q.HasTTFO }},
	{record.MetricTTST, func(q *Request) (float64, bool) { return MS(q.TTST), q.HasTTST }},
	{record.MetricITL, (*Request).ITL},
	{record.MetricOutputTokenThroughputPerUser, (*Request).OutputThroughputPerUser},
	{record.MetricTTFTVLLM, func(q *Request) (float64, bool) { return MS(q.TTFTVLLM), q.HasTTFTVLLM }},
	{record.MetricTPOTVLLM, (*Request).TPOTVLLM},
}

// reasoningOnly are the metrics reported only for runs with reasoning: without it
// TTFO is TTFT, output_token_count is OSL and reasoning_token_count is 0.
var reasoningOnly = map[string]bool{record.MetricTTFO: true, record.MetricOutputTokens: true, record.MetricReasoningTokens: true}

// Metrics returns the summary of what was added so far. It does not change the
// accumulator, which can keep accumulating.
func (a *Accumulator) Metrics() record.Metrics {
	m := record.Metrics{
		Stats: map[string]record.Stat{}, Scalars: map[string]record.Scalar{}, Errors: map[string]int{},
		Warmup: a.warm, ISLInexact: a.inexact, OSLSource: "client",
	}
	if a.opt.UsageOSL {
		m.OSLSource = "usage"
	}
	if a.opt.UsageISL {
		m.ISLSource = "usage"
	}
	for k, v := range a.errors {
		m.Errors[k] = v
	}
	var xs []float64
	if !a.approx {
		xs = make([]float64, 0, a.ok)
	}
	for k, d := range PerRequest {
		if a.totReason == 0 && reasoningOnly[d.Name] {
			continue
		}
		if a.approx {
			if a.reqs[k].Count() > 0 {
				m.Stats[d.Name] = a.reqs[k].Stat(Units[d.Name])
			}
			continue
		}
		xs = xs[:0]
		a.Requests(func(q *Request) {
			if v, ok := d.F(q); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				xs = append(xs, v)
			}
		})
		if len(xs) > 0 {
			m.Stats[d.Name] = summarizeOwned(xs, Units[d.Name])
		}
	}
	if a.icl.Count() > 0 {
		m.Stats[record.MetricICL] = a.icl.Stat(UnitMS)
	}
	if a.itlv.Count() > 0 {
		m.Stats[record.MetricITLVLLM] = a.itlv.Stat(UnitMS)
	}
	ok, errs := a.ok, a.errs
	dur := 0.0
	if a.first >= 0 && a.last > a.first {
		dur = (a.last - a.first).Seconds()
	}
	m.Scalars[record.MetricBenchmarkDuration] = record.Scalar{Unit: "sec", Value: dur}
	m.Scalars[record.MetricRequestCount] = record.Scalar{Unit: "requests", Value: float64(ok)}
	m.Scalars[record.MetricErrorCount] = record.Scalar{Unit: "requests", Value: float64(errs)}
	m.Scalars[record.MetricTotalOSL] = record.Scalar{Unit: UnitTokens, Value: float64(a.totOSL)}
	m.Scalars[record.MetricTotalISL] = record.Scalar{Unit: UnitTokens, Value: float64(a.totISL)}
	if a.totReason > 0 {
		m.Scalars[record.MetricTotalReasoning] = record.Scalar{Unit: UnitTokens, Value: float64(a.totReason)}
		m.Scalars[record.MetricTotalOutputTokens] = record.Scalar{Unit: UnitTokens, Value: float64(a.totOSL - a.totReason)}
	}
	if ok+errs > 0 {
		m.Scalars[record.MetricErrorRate] = record.Scalar{Unit: "ratio", Value: float64(errs) / float64(ok+errs)}
	}
	if dur > 0 {
		m.Scalars[record.MetricRequestThroughput] = record.Scalar{Unit: "requests/sec", Value: float64(ok) / dur}
		m.Scalars[record.MetricOutputTokenThroughput] = record.Scalar{Unit: "tokens/sec", Value: float64(a.totOSL) / dur}
		m.Scalars[record.MetricTotalTokenThroughput] = record.Scalar{Unit: "tokens/sec", Value: float64(a.totOSL+a.totISL) / dur}
		if a.hasSLO {
			m.Scalars[record.MetricGoodput] = record.Scalar{Unit: "requests/sec", Value: float64(a.good) / dur}
		}
	}
	if a.hasSLO {
		m.SLO = a.slo.AIPerf()
		m.Scalars[record.MetricGoodRequestCount] = record.Scalar{Unit: "requests", Value: float64(a.good)}
	}
	return m
}

// Compute summarises recs with one [Accumulator].
func Compute(recs []record.Client, opt Options, slo *SLO) record.Metrics {
	a := NewAccumulator(opt)
	if slo != nil {
		a.SetSLO(*slo)
	}
	for i := range recs {
		a.Add(&recs[i])
	}
	return a.Metrics()
}
