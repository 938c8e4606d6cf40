package liveout

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// Bounds are the latency histograms' bucket upper bounds, in seconds: 1 ms to 60 s.
// A value above the last falls in the +Inf bucket.
var Bounds = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// event is what Record keeps of a finished request: a few words, so the buffer stays
// small and Record cheap.
type event struct {
	latency, ttft time.Duration
	hasTTFT, ok   bool
	warmup        bool
	isl, osl      int
	key
}

func eventOf(r *record.Client) event {
	ttft, has := metric.TTFT(r)
	return event{latency: r.Latency(), ttft: ttft, hasTTFT: has, ok: r.OK(), warmup: r.Warmup,
		isl: r.ISL, osl: r.OSL, key: key{model: r.Model, endpoint: r.Endpoint, class: r.Class}}
}

// hist is a cumulative histogram over Bounds: per-bucket counts (not cumulative),
// the last being +Inf.
type hist struct {
	counts []uint64
	count  uint64
	sum    float64
}

func (h *hist) add(v float64) {
	if h.counts == nil {
		h.counts = make([]uint64, len(Bounds)+1)
	}
	h.counts[sort.SearchFloat64s(Bounds, v)]++
	h.count++
	h.sum += v
}

func (h hist) clone() hist {
	c := h
	if h.counts == nil {
		c.counts = make([]uint64, len(Bounds)+1)
	} else {
		c.counts = append([]uint64(nil), h.counts...)
	}
	return c
}

// key is a series' model, endpoint kind and traffic class ("" in a run without
// classes).
type key struct{ model, endpoint, class string }

// labels are k's label pairs, name then value, as every output writes them: model and
// endpoint always, class only in a run of traffic classes.
func (k key) labels() []string {
	ls := []string{"model", k.model, "endpoint", k.endpoint}
	if k.class != "" {
		ls = append(ls, "class", k.class)
	}
	return ls
}

// series is the run so far for one model and class: measured requests only.
type series struct {
	key
	ok, errors          uint64
	inTokens, outTokens uint64
	ttft, itl, latency  hist
}

// state is the aggregate the pushes read, written by the aggregator goroutine.
type state struct {
	mu     sync.Mutex
	by     map[key]*series
	order  []key
	warmup uint64
	events uint64
}

func newState() *state { return &state{by: map[key]*series{}} }

// add aggregates one request. Its ITL is metric's definition (metric.Request.ITL).
func (s *state) add(e event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events++
	if e.warmup {
		s.warmup++
		return
	}
	k := e.key
	se := s.by[k]
	if se == nil {
		se = &series{key: k}
		s.by[k] = se
		s.order = append(s.order, k)
	}
	if !e.ok {
		se.errors++
		return
	}
	se.ok++
	se.inTokens += uint64(max(e.isl, 0))
	se.outTokens += uint64(max(e.osl, 0))
	se.latency.add(e.latency.Seconds())
	if e.hasTTFT {
		se.ttft.add(e.ttft.Seconds())
	}
	q := metric.Request{Latency: e.latency, TTFT: e.ttft, HasTTFT: e.hasTTFT, OSL: e.osl}
	if ms, ok := q.ITL(); ok && !math.IsNaN(ms) && !math.IsInf(ms, 0) {
		se.itl.add(ms / 1000)
	}
}

// snapshot is the run so far at one instant, as every output pushes it.
type snapshot struct {
	start, at time.Time
	series    []series // deep copies, in order of first appearance
	warmup    uint64
	dropped   uint64
	// reqRate and outRate are the measured requests and output tokens a second over
	// the interval since the snapshot before (the whole run for the first).
	reqRate, outRate float64
}

// snap copies the state at now; prev is the snapshot before (nil for the first).
func (s *state) snap(start, now time.Time, dropped uint64, prev *snapshot) *snapshot {
	s.mu.Lock()
	out := &snapshot{start: start, at: now, warmup: s.warmup, dropped: dropped, series: make([]series, 0, len(s.order))}
	for _, k := range s.order {
		se := *s.by[k]
		se.ttft, se.itl, se.latency = se.ttft.clone(), se.itl.clone(), se.latency.clone()
		out.series = append(out.series, se)
	}
	s.mu.Unlock()
	reqs, toks := out.totals()
	since := start
	if prev != nil {
		pr, pt := prev.totals()
		reqs, toks, since = reqs-pr, toks-pt, prev.at
	}
	if secs := now.Sub(since).Seconds(); secs > 0 {
		out.reqRate, out.outRate = float64(reqs)/secs, float64(toks)/secs
	}
	return out
}

// totals are the measured requests (ok and failed) and output tokens so far.
func (s *snapshot) totals() (reqs, out uint64) {
	for _, se := range s.series {
		reqs += se.ok + se.errors
		out += se.outTokens
	}
	return reqs, out
}
