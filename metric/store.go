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
// metric of the catalogue ([Def.Record]) takes at most 8 bytes a request, exactly, in
// a column of blocks where a block whose values are all equal (none, or 0 as a
// connection's set-up times on a reused connection) is kept as that one value: a
// metric no request has, or that few requests' values differ in, costs next to
// nothing. The zero Store follows the catalogue of the first request added.
type Store struct {
	cat    *catalogue
	blocks [][]compact
	cols   []column // per cat.raw entry
	n      int
}

// column is one raw metric's values, blockLen to a block.
type column struct{ blocks []colBlock }

// colBlock is one block of a column: its values, or nil when each value so far is
// fill.
type colBlock struct {
	vals []float64
	fill float64
}

// set sets value i of block b to v; blocks and values before it not set are noRaw.
func (c *column) set(b, i int, v float64) {
	for len(c.blocks) <= b {
		c.blocks = append(c.blocks, colBlock{fill: noRaw})
	}
	blk := &c.blocks[b]
	if blk.vals == nil {
		if i == 0 {
			blk.fill = v // the block's first value: the others follow it until one differs
			return
		}
		if v == blk.fill || v != v && blk.fill != blk.fill {
			return
		}
		blk.vals = make([]float64, blockLen)
		for k := range i {
			blk.vals[k] = blk.fill
		}
	}
	blk.vals[i] = v
}

// get returns value i of block b (noRaw when never set).
func (c *column) get(b, i int) float64 {
	if b >= len(c.blocks) {
		return noRaw
	}
	blk := &c.blocks[b]
	if blk.vals == nil {
		return blk.fill
	}
	return blk.vals[i]
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
		s.cols = make([]column, len(s.cat.raw))
	}
	for j := range s.cat.raw {
		v, ok := q.rawOf(s.cat, j)
		if !ok {
			v = noRaw
		}
		if c := &s.cols[j]; ok || len(c.blocks) > 0 {
			c.set(b, i, v)
		}
	}
	s.n++
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
		if j < len(s.cols) {
			v = s.cols[j].get(b, k)
		}
		q.raw = append(q.raw, v)
	}
}

// Bytes returns the store's approximate size in memory.
func (s *Store) Bytes() int {
	n := len(s.blocks) * blockLen * compactSize
	for _, c := range s.cols {
		n += len(c.blocks) * int(unsafe.Sizeof(colBlock{}))
		for _, blk := range c.blocks {
			if blk.vals != nil {
				n += blockLen * 8
			}
		}
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
