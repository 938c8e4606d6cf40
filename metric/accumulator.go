package metric

import (
	"math"
	"time"
	"unsafe"

	"github.com/perfgate/perfgate/record"
)

// compact is one successful request's values in 64 bytes: what every per-request
// metric is derived from ([Request] without the gaps). All are exact but TTFO, kept as
// its distance from TTFT, and TTST: in ns up to ±2.1 s, in µs beyond (fTTFOMicro,
// fTTSTMicro); and the audio's duration, in ms.
type compact struct {
	latency, ttft, ttftVLLM, queue int64 // ns
	isl, osl, usage, reasoning     int32 // usage -1 = none
	ttfo                           int32 // TTFO − TTFT, ns (µs with fTTFOMicro)
	ttst                           int32 // ns (µs with fTTSTMicro)
	audioMS                        int32
	images                         uint16
	flags                          uint8
}

const compactSize = int(unsafe.Sizeof(compact{}))

const (
	fTTFT = 1 << iota
	fTTST
	fTTFTVLLM
	fTTFO
	fTTFOMicro
	fTTSTMicro
)

// packTTFO returns TTFO − TTFT (or TTST) as stored in a compact value, and whether it
// is in µs.
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
		TTST: unpackGap(c.ttst, c.flags&fTTSTMicro != 0), HasTTST: c.flags&fTTST != 0,
		TTFTVLLM: time.Duration(c.ttftVLLM), HasTTFTVLLM: c.flags&fTTFTVLLM != 0,
		TTFO: c.ttfoValue(), HasTTFO: c.flags&fTTFO != 0,
		ISL: int(c.isl), OSL: int(c.osl), UsageOSL: int(c.usage), Reasoning: int(c.reasoning),
		Audio: time.Duration(c.audioMS) * time.Millisecond, Images: int(c.images),
	}
}

// unpackGap is the inverse of packTTFO.
func unpackGap(v int32, micro bool) time.Duration {
	if micro {
		return time.Duration(v) * time.Microsecond
	}
	return time.Duration(v)
}

func (c *compact) ttfoValue() time.Duration {
	d := time.Duration(c.ttfo)
	if c.flags&fTTFOMicro != 0 {
		d *= time.Microsecond
	}
	return time.Duration(c.ttft) + d
}

// pack returns q's values in their compact form.
func pack(q *Request) compact {
	c := compact{
		latency: int64(q.Latency), ttft: int64(q.TTFT), ttftVLLM: int64(q.TTFTVLLM),
		queue: int64(q.Queue), isl: clamp32(q.ISL), osl: clamp32(q.OSL), usage: clamp32(q.UsageOSL),
		reasoning: clamp32(q.Reasoning), audioMS: clamp32(int(q.Audio.Round(time.Millisecond) / time.Millisecond)), images: uint16(min(max(q.Images, 0), math.MaxUint16)),
	}
	var micro bool
	if c.ttst, micro = packTTFO(q.TTST); micro {
		c.flags |= fTTSTMicro
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
	return c
}

// Packed is one request's values in 64 bytes, as the [Accumulator] keeps them: every
// field of [Request] but Warmup, Stream, Sent, Done and the gaps, exact but TTFO (to the
// µs past 2.1 s). It is for callers that keep many requests' values in memory.
type Packed struct{ c compact }

// Pack returns q's values packed.
func Pack(q *Request) Packed { return Packed{pack(q)} }

// Request returns the packed values; OK is true (the accumulator packs only
// successful requests; a caller packing a failed one sets it).
func (p *Packed) Request() Request { return p.c.request() }

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
	defs        []Def // the catalogue when the accumulator was made
	blocks      [][]compact
	chunks      []Sketch // one per defs entry of Kind PerChunk (others unused)
	ok, errs    int
	good, warm  int
	inexact     int
	errors      map[string]int
	first, last time.Duration
	totOSL      int
	totISL      int
	totReason   int
	totAudio    float64 // seconds
	totImages   int
	scratch     Request
	// approx: per-request values go into reqs (one sketch per defs entry of Kind
	// PerRequest) instead of blocks.
	approx bool
	reqs   []Sketch
}

// NewAccumulator returns an empty accumulator using opt's definitions.
func NewAccumulator(opt Options) *Accumulator {
	defs := Catalogue()
	return &Accumulator{opt: opt, defs: defs, chunks: make([]Sketch, len(defs)), errors: map[string]int{}, first: -1}
}

// SetSLO makes the accumulator count goodput against slo (record.MetricGoodput and
// record.MetricGoodRequestCount); without it they are not reported.
func (a *Accumulator) SetSLO(slo SLO) { a.slo, a.hasSLO = slo, true }

// Approximate makes the accumulator keep per-request values in [Sketch]es as well,
// one per [PerRequest] metric of the [Catalogue], instead of exactly: memory stays constant however many
// requests are added, and every per-request percentile is within
// [SketchRelativeError] of the exact one (count, mean, std, min and max stay exact).
// [Accumulator.Requests] then yields nothing. For a run whose records are on disk,
// where the exact values are derived again after the run. Call it before Add.
func (a *Accumulator) Approximate() {
	a.approx = true
	a.reqs = make([]Sketch, len(a.defs))
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
	a.totAudio += q.Audio.Seconds()
	a.totImages += q.Images
	if a.hasSLO && a.slo.Good(q) {
		a.good++
	}
	for k := range a.defs {
		if d := &a.defs[k]; d.Kind == PerChunk {
			for _, g := range d.Gaps(q) {
				a.chunks[k].Add(MS(g))
			}
		}
	}
	if a.approx {
		for k := range a.defs {
			if d := &a.defs[k]; d.Kind == PerRequest {
				if v, ok := d.Value(q); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
					a.reqs[k].Add(v)
				}
			}
		}
		return
	}
	c := pack(q)
	n := len(a.blocks)
	if n == 0 || len(a.blocks[n-1]) == blockLen {
		a.blocks = append(a.blocks, make([]compact, 0, blockLen))
		n++
	}
	a.blocks[n-1] = append(a.blocks[n-1], c)
}

// Bytes returns the accumulator's approximate size in memory.
func (a *Accumulator) Bytes() int {
	n := len(a.blocks)*blockLen*compactSize + 256
	for i := range a.reqs {
		n += a.reqs[i].Bytes()
	}
	for i := range a.chunks {
		n += a.chunks[i].Bytes()
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
	t := Totals{OK: a.ok, Errors: a.errs, Good: a.good, HasSLO: a.hasSLO,
		ISL: a.totISL, OSL: a.totOSL, Reasoning: a.totReason, Audio: a.totAudio, Images: a.totImages}
	if a.first >= 0 && a.last > a.first {
		t.Duration = (a.last - a.first).Seconds()
	}
	for k := range a.defs {
		d := &a.defs[k]
		if a.totReason == 0 && d.ReasoningOnly {
			continue
		}
		switch d.Kind {
		case PerRun:
			if v, ok := d.Total(&t); ok {
				m.Scalars[d.Name] = record.Scalar{Unit: d.Unit, Value: v}
			}
		case PerChunk:
			if a.chunks[k].Count() > 0 {
				m.Stats[d.Name] = a.chunks[k].Stat(d.Unit)
			}
		case PerRequest:
			if a.approx {
				if a.reqs[k].Count() > 0 {
					m.Stats[d.Name] = a.reqs[k].Stat(d.Unit)
				}
				continue
			}
			xs = xs[:0]
			a.Requests(func(q *Request) {
				if v, ok := d.Value(q); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
					xs = append(xs, v)
				}
			})
			if len(xs) > 0 {
				m.Stats[d.Name] = summarizeOwned(xs, d.Unit)
			}
		}
	}
	if a.hasSLO {
		m.SLO = a.slo.AIPerf()
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
