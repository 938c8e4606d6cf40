package metric

import (
	"math"
	"slices"
	"time"
	"unsafe"
)

// compact is one request's built-in values in 64 bytes: what every built-in per-request
// metric is derived from ([Request] without the gaps and the raw values). All are exact
// but TTFO, kept as its distance from TTFT: in ns up to ±2.1 s, in µs beyond
// (fTTFOMicro).
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
	fFailed // the request failed: OK false
)

// packTTFO returns TTFO − TTFT as stored in a compact value, and whether it is in µs.
func packTTFO(d time.Duration) (int32, bool) {
	if d >= math.MinInt32 && d <= math.MaxInt32 {
		return int32(d), false
	}
	return clamp32(int(d / time.Microsecond)), true
}

// request sets q's built-in values from c, leaving q's raw values alone.
func (c *compact) request(q *Request) {
	cat, raw := q.cat, q.raw
	*q = Request{
		OK: c.flags&fFailed == 0, Latency: time.Duration(c.latency), Queue: time.Duration(c.queue),
		TTFT: time.Duration(c.ttft), HasTTFT: c.flags&fTTFT != 0,
		TTST: time.Duration(c.ttst), HasTTST: c.flags&fTTST != 0,
		TTFTVLLM: time.Duration(c.ttftVLLM), HasTTFTVLLM: c.flags&fTTFTVLLM != 0,
		TTFO: c.ttfoValue(), HasTTFO: c.flags&fTTFO != 0,
		ISL: int(c.isl), OSL: int(c.osl), UsageOSL: int(c.usage), Reasoning: int(c.reasoning),
		cat: cat, raw: raw,
	}
}

func (c *compact) ttfoValue() time.Duration {
	d := time.Duration(c.ttfo)
	if c.flags&fTTFOMicro != 0 {
		d *= time.Microsecond
	}
	return time.Duration(c.ttft) + d
}

// pack returns q's built-in values in their compact form.
func pack(q *Request) compact {
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
	if !q.OK {
		c.flags |= fFailed
	}
	if q.HasTTST {
		c.flags |= fTTST
	}
	if q.HasTTFTVLLM {
		c.flags |= fTTFTVLLM
	}
	return c
}

func clamp32(n int) int32 { return int32(min(max(n, math.MinInt32), math.MaxInt32)) }

const blockLen = 4096 // values per block: 256 KiB of compact values, 32 KiB of a raw column

// Store keeps many requests' values in little memory, as the [Accumulator] keeps them:
// every field of [Request] but Warmup, Stream, Sent, Done and the gaps. The built-in
// values take 64 bytes a request, exact but TTFO (to the µs past 2.1 s); each raw
// metric of the catalogue ([Def.Record]) takes 8 bytes a request, exactly, in a column
// made when a request first has a value for it, so a metric no request has costs
// nothing. The zero Store follows the catalogue of the first request added.
type Store struct {
	cat    *catalogue
	blocks [][]compact
	cols   [][][]float64 // per cat.raw entry: blocks of values (noRaw = none); nil until one is set
	n      int
}

// Add appends q's values.
func (s *Store) Add(q *Request) {
	if s.cat == nil {
		s.cat = q.cat
		if s.cat == nil {
			s.cat = current.Load()
		}
	}
	b, i := s.n/blockLen, s.n%blockLen
	if i == 0 {
		s.blocks = append(s.blocks, make([]compact, 0, blockLen))
	}
	s.blocks[b] = append(s.blocks[b], pack(q))
	if len(s.cols) < len(s.cat.raw) {
		s.cols = make([][][]float64, len(s.cat.raw))
	}
	for j := range s.cat.raw {
		v, ok := q.rawOf(s.cat, j)
		col := s.cols[j]
		if !ok {
			if col != nil {
				col = s.grow(col, b)
				col[b][i] = noRaw
				s.cols[j] = col
			}
			continue
		}
		col = s.grow(col, b)
		col[b][i] = v
		s.cols[j] = col
	}
	s.n++
}

// grow returns col with blocks up to b, new entries noRaw (no value).
func (s *Store) grow(col [][]float64, b int) [][]float64 {
	for len(col) <= b {
		blk := make([]float64, blockLen)
		for k := range blk {
			blk[k] = noRaw
		}
		col = append(col, blk)
	}
	return col
}

// Len returns the number of requests added.
func (s *Store) Len() int { return s.n }

// Get sets q to the i-th request's values, reusing q's raw storage.
func (s *Store) Get(i int, q *Request) {
	b, k := i/blockLen, i%blockLen
	s.blocks[b][k].request(q)
	q.cat, q.raw = s.cat, q.raw[:0]
	if s.cat == nil {
		return
	}
	for j := range s.cat.raw {
		v := noRaw
		if col := s.cols[j]; col != nil {
			v = col[b][k]
		}
		q.raw = append(q.raw, v)
	}
}

// Bytes returns the store's approximate size in memory.
func (s *Store) Bytes() int {
	n := len(s.blocks) * blockLen * compactSize
	for _, col := range s.cols {
		n += len(col) * blockLen * 8
	}
	return n
}

// Kept returns q's values as a [Store] keeps them (TTFO to the µs past 2.1 s, no gaps,
// no Sent or Done), with raw values of its own: a copy that outlives q's reuse.
func (q *Request) Kept() Request {
	c := pack(q)
	var v Request
	c.request(&v)
	v.cat, v.raw = q.cat, slices.Clone(q.raw)
	return v
}
