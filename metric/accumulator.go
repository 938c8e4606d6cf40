package metric

import (
	"math"
	"slices"
	"time"

	"github.com/perfgate/perfgate/record"
)

// Accumulator computes a run's [record.Metrics] from its records as they arrive,
// without keeping them. Per-request values are kept exact in a [Store] (TTFO to the
// µs past 2.1 s; 64 bytes a request plus 8 per raw metric the run has; KS and
// regression checks need the exact sample); per-token values (inter-chunk latency,
// vLLM's ITL) go into [Sketch]es, so memory does not grow with tokens.
//
// The zero Accumulator is not usable; call [NewAccumulator]. It is not safe for
// concurrent use.
type Accumulator struct {
	opt    Options
	slo    SLO
	hasSLO bool
	defs   []Def // the catalogue when the accumulator was made
	// perRequest and perChunk are the positions in defs of the PerRequest and
	// PerChunk metrics: Add walks only those.
	perRequest, perChunk []int
	store                Store
	chunks               []Sketch // one per defs entry of Kind PerChunk (others unused)
	ok, errs             int
	good, warm           int
	inexact              int
	errors               map[string]int
	first, last          time.Duration
	runStart             int64 // record.Client.RunStartUnixNano of the measured requests
	totOSL               int
	totISL               int
	totReason            int
	totAudio             float64 // seconds
	totImages            int
	cached, cachedPrompt int // prefix cache: Totals.Cached, Totals.CachedPrompt
	scratch              Request
	// approx: per-request values go into reqs (one sketch per defs entry of Kind
	// PerRequest) instead of blocks.
	approx bool
	reqs   []Sketch
	// totalsOnly: only the run-level sums are kept ([Accumulator.TotalsOnly]).
	totalsOnly bool
	// models are the per-model accumulators (Options.ByModel), by record.Client.Model.
	models map[string]*Accumulator
	// classes are the per-class accumulators (Options.ByClass), by record.Client.Class.
	classes map[string]*Accumulator
	// jobs tallies the agent jobs (record.Client.Job).
	jobs jobAcc
	// turns are the TTFTs (ms) of multi-turn requests by turn index, the last
	// pooling the later ones (record.Metrics.TTFTByTurn).
	turns []Sketch
}

// NewAccumulator returns an empty accumulator using opt's definitions.
func NewAccumulator(opt Options) *Accumulator {
	cat := current.Load()
	defs := cat.defs
	a := &Accumulator{opt: opt, defs: defs, store: Store{cat: cat}, chunks: make([]Sketch, len(defs)), errors: map[string]int{}, first: -1}
	for k := range defs {
		switch defs[k].Kind {
		case PerRequest:
			a.perRequest = append(a.perRequest, k)
		case PerChunk:
			a.perChunk = append(a.perChunk, k)
		}
	}
	return a
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

// TotalsOnly makes the accumulator keep only what its [PerRun] metrics need (request
// and error counts, the benchmark duration, token and media sums, goodput): no
// per-request value and no chunk gap, so [Accumulator.Metrics] has no Stats and
// [Accumulator.Requests] yields nothing, and Add costs a few additions a record. For a
// run whose records are on disk and whose caller derives the distributions from them
// after the run (perftest does), so they are not derived twice. Call it before Add.
func (a *Accumulator) TotalsOnly() { a.totalsOnly = true }

// Add accounts for one record. Warmup records are counted and otherwise left out;
// errored records count toward the error metrics only. The benchmark duration runs
// from the first non-warmup request sent to the last one done.
func (a *Accumulator) Add(r *record.Client) {
	// The record's values are derived once, for a and for its model's accumulator
	// (which has a's options but ByModel).
	q, derived := &a.scratch, false
	a.add(r, q, &derived)
	if a.opt.ByModel {
		a.model(r.Model).add(r, q, &derived)
	}
	var class *Accumulator
	if a.opt.ByClass && r.Class != "" {
		class = a.class(r.Class)
		class.add(r, q, &derived)
	}
	if r.Job != "" {
		good := r.OK()
		if good && a.hasSLO {
			if !derived {
				q.Reset(r, a.opt)
				derived = true
			}
			good = a.slo.Good(q)
		}
		a.jobs.add(r, good)
		if class != nil {
			class.jobs.add(r, good) // a class's jobs are its own: its job metrics
		}
	}
}

// add is Add for a alone, deriving r's values into q when it needs them. *derived
// reports that q already holds them (under a's options: a model's accumulator has
// its parent's, but ByModel).
func (a *Accumulator) add(r *record.Client, q *Request, derived *bool) {
	if r.Warmup {
		a.warm++
		return
	}
	if a.first < 0 || r.Sent < a.first {
		a.first = r.Sent
	}
	a.last = max(a.last, r.Done)
	a.runStart = r.RunStartUnixNano
	if !r.ISLExact && r.RequestedISL > 0 {
		a.inexact++
	}
	if !r.OK() {
		a.errs++
		a.errors[r.ErrorKind]++
		if !a.approx && !a.totalsOnly {
			if !*derived {
				q.Reset(r, a.opt)
				*derived = true
			}
			a.store.Add(q)
		}
		return
	}
	a.ok++
	a.addTurn(r)
	if r.CachedTokens.Known {
		a.cached += r.CachedTokens.N
		a.cachedPrompt += PrefixPrompt(r)
	}
	if a.totalsOnly && !a.hasSLO && !*derived {
		// The sums only: from the record, by the definitions Reset uses.
		isl, osl, _, reasoning := counts(r, a.opt)
		a.totOSL += osl
		a.totISL += isl
		a.totReason += reasoning
		cat := current.Load()
		if v := cat.rawValue(int(rawAudio), r); v != noRaw {
			a.totAudio += v
		}
		if v := cat.rawValue(int(rawImages), r); v != noRaw {
			a.totImages += int(v)
		}
		return
	}
	if !*derived {
		q.Reset(r, a.opt)
		*derived = true
	}
	a.totOSL += q.OSL
	a.totISL += q.ISL
	a.totReason += q.Reasoning
	if v, ok := q.builtinRaw(rawAudio); ok {
		a.totAudio += v
	}
	if v, ok := q.builtinRaw(rawImages); ok {
		a.totImages += int(v)
	}
	if a.hasSLO && a.slo.Good(q) {
		a.good++
	}
	if a.totalsOnly {
		return
	}
	for _, k := range a.perChunk {
		for _, g := range a.defs[k].Gaps(q) {
			a.chunks[k].Add(MS(g))
		}
	}
	if a.approx {
		for _, k := range a.perRequest {
			if v, ok := a.defs[k].Value(q); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				a.reqs[k].Add(v)
			}
		}
		return
	}
	a.store.Add(q)
}

// model returns model m's accumulator, made (with a's options, SLO and approximation)
// at its first record.
func (a *Accumulator) model(m string) *Accumulator { return a.sub(&a.models, m) }

// class returns traffic class c's accumulator, as model does a model's.
func (a *Accumulator) class(c string) *Accumulator { return a.sub(&a.classes, c) }

// sub returns the accumulator of key in *subs, made at its first record with a's
// options (no further breakdown), SLO and approximation: a breakdown's parts are
// summarised as the run is.
func (a *Accumulator) sub(subs *map[string]*Accumulator, key string) *Accumulator {
	sub := (*subs)[key]
	if sub == nil {
		opt := a.opt
		opt.ByModel, opt.ByClass = false, false
		sub = NewAccumulator(opt)
		sub.slo, sub.hasSLO, sub.totalsOnly = a.slo, a.hasSLO, a.totalsOnly
		if a.approx {
			sub.Approximate()
		}
		if *subs == nil {
			*subs = map[string]*Accumulator{}
		}
		(*subs)[key] = sub
	}
	return sub
}

// Bytes returns the accumulator's approximate size in memory.
func (a *Accumulator) Bytes() int {
	n := a.store.Bytes() + 256
	for _, sub := range a.models {
		n += sub.Bytes()
	}
	for _, sub := range a.classes {
		n += sub.Bytes()
	}
	for i := range a.reqs {
		n += a.reqs[i].Bytes()
	}
	for i := range a.chunks {
		n += a.chunks[i].Bytes()
	}
	for i := range a.turns {
		n += a.turns[i].Bytes()
	}
	return n
}

// Requests calls f with each successful non-warmup request's values (without ICL and
// ITLVLLM, which the accumulator keeps only as sketches), in the order added.
func (a *Accumulator) Requests(f func(*Request)) {
	var q Request // one value for the whole walk: f gets a pointer, so a per-request one would escape
	for i := range a.store.Len() {
		a.store.Get(i, &q)
		if q.OK {
			f(&q)
		}
	}
}

// Values returns the values of every non-warmup request added, failed ones too (OK
// false), in the order added: the store the accumulator derives its per-request
// metrics from, for a caller that needs the requests one by one after the run without
// keeping a second copy. It is empty for an [Accumulator.Approximate] accumulator. It
// grows with further Adds.
func (a *Accumulator) Values() *Store { return &a.store }

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
		ISL: a.totISL, OSL: a.totOSL, Reasoning: a.totReason, Audio: a.totAudio, Images: a.totImages,
		Cached: a.cached, CachedPrompt: a.cachedPrompt, Jobs: a.jobs.totals()}
	if a.first >= 0 && a.last > a.first {
		t.Duration = (a.last - a.first).Seconds()
	}
	for k := range a.defs {
		d := &a.defs[k]
		if a.totReason == 0 && d.ReasoningOnly {
			continue
		}
		if a.totalsOnly && d.Kind != PerRun {
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
	m.TTFTByTurn = a.ttftByTurn()
	if len(a.models) > 0 {
		m.Models = make(map[string]record.Metrics, len(a.models))
		for name, sub := range a.models {
			m.Models[name] = sub.Metrics()
		}
	}
	if len(a.classes) > 0 {
		m.Classes = make(map[string]record.Metrics, len(a.classes))
		for name, sub := range a.classes {
			m.Classes[name] = sub.Metrics()
		}
	}
	return m
}

// CompletePrefixCache completes m's prefix-cache metrics with what is not in the
// records: the ideal hit rate the load generator counted and the server's prefix-cache
// counters' rate over the run (either nil when unknown), read after m was summarised.
// A measured rate m already has (from the requests' cached_tokens) stands; without one
// the server's is the measured rate; the gap follows from the two. A model's
// breakdown (m.Models) is left as it is.
func CompletePrefixCache(m *record.Metrics, ideal, server *float64) {
	if m.Scalars == nil {
		m.Scalars = map[string]record.Scalar{}
	}
	t := Totals{IdealRate: ideal, ServerRate: server}
	if v, ok := m.Scalars[record.MetricPrefixCacheHitRate]; ok {
		// The records' rate, which Totals would take from Cached/CachedPrompt: given
		// as the only rate there is, so prefixHitRate returns it.
		t.ServerRate = &v.Value
	}
	if v, ok := m.Scalars[record.MetricPrefixCacheIdealHitRate]; ok && ideal == nil {
		t.IdealRate = &v.Value
	}
	for _, d := range Catalogue() {
		switch d.Name {
		case record.MetricPrefixCacheHitRate, record.MetricPrefixCacheIdealHitRate, record.MetricPrefixCacheGap:
			if v, ok := d.Total(&t); ok {
				m.Scalars[d.Name] = record.Scalar{Unit: d.Unit, Value: v}
			}
		}
	}
}

// Window returns the measured window on the wall clock: the first measured request
// sent → the last one done, the span benchmark_duration measures; false before any
// measured request, or for records without their run's start time.
func (a *Accumulator) Window() (start, end time.Time, ok bool) {
	if a.first < 0 || a.last <= a.first || a.runStart == 0 {
		return time.Time{}, time.Time{}, false
	}
	return time.Unix(0, a.runStart+int64(a.first)), time.Unix(0, a.runStart+int64(a.last)), true
}

// GPUMetrics lists the metrics [CompleteGPU] adds, in catalogue order.
var GPUMetrics = []string{record.MetricGPUEnergy, record.MetricGPUPower, record.MetricGPUUtilization,
	record.MetricGPUMemoryUsed, record.MetricTokensPerJoule, record.MetricOutputTPSPerGPU, record.MetricEnergyPerRequest}

// CompleteGPU adds the GPU metrics ([GPUMetrics]) to m from g, the GPU telemetry over
// the run's measured window, read after m was summarised: the run's totals they derive
// from are m's own (total_osl, request_count, benchmark_duration). A model's breakdown
// (m.Models) is left as it is: the GPUs serve every model at once.
func CompleteGPU(m *record.Metrics, g GPU) {
	if m.Scalars == nil {
		m.Scalars = map[string]record.Scalar{}
	}
	t := Totals{GPU: &g}
	t.OSL = int(m.Scalars[record.MetricTotalOSL].Value)
	t.OK = int(m.Scalars[record.MetricRequestCount].Value)
	t.Duration = m.Scalars[record.MetricBenchmarkDuration].Value
	for _, d := range Catalogue() {
		if !slices.Contains(GPUMetrics, d.Name) {
			continue
		}
		if v, ok := d.Total(&t); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			m.Scalars[d.Name] = record.Scalar{Unit: d.Unit, Value: v}
		}
	}
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

// addTurn adds a successful request's TTFT to its turn index's sketch when it is one
// turn of a session (a multi-turn conversation's or an agent job's).
func (a *Accumulator) addTurn(r *record.Client) {
	if r.Conversation == "" && r.Job == "" {
		return
	}
	ft, ok := TTFT(r)
	if !ok || r.Turn < 0 {
		return
	}
	k := min(r.Turn, record.TTFTTurns-1)
	if len(a.turns) <= k {
		a.turns = append(a.turns, make([]Sketch, k+1-len(a.turns))...)
	}
	a.turns[k].Add(MS(ft))
}

// ttftByTurn summarises the sketches of addTurn; nil without any.
func (a *Accumulator) ttftByTurn() []record.TurnTTFT {
	var out []record.TurnTTFT
	for k := range a.turns {
		s := &a.turns[k]
		if s.Count() == 0 {
			continue
		}
		out = append(out, record.TurnTTFT{Turn: k, AndLater: k == record.TTFTTurns-1, Count: s.Count(), P50: s.Quantile(0.5), P99: s.Quantile(0.99)})
	}
	return out
}
