package reportgen

// The run report's "Prefix cache" section (docs/prefix-cache.md, docs/reports.md): the
// hit rate the server reported against the ideal one over the time slices, and both by
// the prefix pool's popularity rank.

import (
	"fmt"
	"html/template"
	"math"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// prefixData is what the records give the section: the successful measured requests
// that reported cached_tokens (their send times, cached and prompt tokens), and per
// pool prefix (record.Client.Prefix) the requests and, of those that reported it,
// the cached and prompt tokens.
type prefixData struct {
	sentS, cached, prompt []float64
	byPrefix              map[int]*prefixCount
}

// prefixCount is one prefix's (or one rank bin's) measured counts.
type prefixCount struct {
	requests       int
	cached, prompt int64 // over the requests that reported cached_tokens
}

// add takes one successful measured request.
func (d *prefixData) add(r *record.Client) {
	var c *prefixCount
	if r.Prefix > 0 {
		if d.byPrefix == nil {
			d.byPrefix = map[int]*prefixCount{}
		}
		if c = d.byPrefix[r.Prefix]; c == nil {
			c = &prefixCount{}
			d.byPrefix[r.Prefix] = c
		}
		c.requests++
	}
	if !r.CachedTokens.Known {
		return
	}
	p := metric.PrefixPrompt(r) // the measured rate's own denominator
	d.sentS = append(d.sentS, r.Sent.Seconds())
	d.cached = append(d.cached, float64(r.CachedTokens.N))
	d.prompt = append(d.prompt, float64(p))
	if c != nil {
		c.cached += int64(r.CachedTokens.N)
		c.prompt += int64(p)
	}
}

// prefixPage is the section as the template shows it.
type prefixPage struct {
	Note    string
	Figures []figure
	Ranks   []prefixRankRow
}

type prefixRankRow struct{ Ranks, Requests, Measured, Ideal string }

// maxRankPoints is the pool size up to which the rank chart has one point per
// prefix; a larger pool is drawn in bins of ranks [2^k, 2^(k+1)).
const maxRankPoints = 40

// prefixSection builds the section, nil when the run has no prefix data: no request
// reported cached_tokens or had a pool prefix, and no ideal rate was counted. The
// time slices are the report's: n of width seconds from start (run-clock seconds),
// at xs.
func prefixSection(d *prefixData, ideal *record.PrefixCacheIdeal, start, width float64, n int, xs []float64, bands []band) *prefixPage {
	if len(d.sentS) == 0 && len(d.byPrefix) == 0 && ideal == nil {
		return nil
	}
	p := &prefixPage{}
	var ss []series
	m, id := prefixSlices(d, ideal, start, width, n)
	if m != nil {
		ss = append(ss, series{"measured", xs, m})
	}
	if id != nil {
		ss = append(ss, series{"ideal", xs, id})
	}
	if len(ss) > 0 {
		p.Figures = append(p.Figures, figure{ID: "prefix-cache-time", Caption: "prompt tokens the prefix cache served over the prompt tokens, by send time",
			SVG: template.HTML(lineSVG("Prefix-cache hit rate per time slice", "s since first request", "hit rate", ss, bands...))})
	}
	// By popularity rank: the pool's order (rank 1 the most popular in one pool).
	pool := 0
	for k := range d.byPrefix {
		pool = max(pool, k)
	}
	if ideal != nil {
		pool = max(pool, len(ideal.ByPrefix))
	}
	if pool > 0 {
		p.rankRows(d, ideal, pool)
	}
	switch {
	case ideal == nil:
		p.Note = "No ideal hit rate was counted for this run (its prompts share no prefix by design, or it was merged from shards)."
	case len(d.sentS) == 0:
		p.Note = fmt.Sprintf("The server reported no cached_tokens: the measured rate is unknown here (the server's counters may give the run's rate in the summary). Ideal: an %s of %d-token blocks.", cacheName(ideal.Capacity), ideal.BlockSize)
	default:
		p.Note = fmt.Sprintf("Measured: Σ cached_tokens / Σ prompt tokens of the %d requests that reported cached_tokens. Ideal: an %s of %d-token blocks on the exact prompts sent.", len(d.sentS), cacheName(ideal.Capacity), ideal.BlockSize)
	}
	return p
}

func cacheName(capacity int) string {
	if capacity == 0 {
		return "unbounded cache"
	}
	return fmt.Sprintf("LRU cache of %d blocks", capacity)
}

// rankRows adds the chart and the table by rank: one row per prefix of a pool of up to
// maxRankPoints, else per bin of ranks [2^k, 2^(k+1)).
func (p *prefixPage) rankRows(d *prefixData, ideal *record.PrefixCacheIdeal, pool int) {
	type bin struct {
		lo, hi int
		m      prefixCount
		ih, ip int64
	}
	var bins []bin
	if pool <= maxRankPoints {
		for r := 1; r <= pool; r++ {
			bins = append(bins, bin{lo: r, hi: r})
		}
	} else {
		for lo := 1; lo <= pool; lo *= 2 {
			bins = append(bins, bin{lo: lo, hi: min(2*lo-1, pool)})
		}
	}
	binOf := func(r int) int {
		if pool <= maxRankPoints {
			return r - 1
		}
		return int(math.Log2(float64(r)))
	}
	for r, c := range d.byPrefix {
		b := &bins[binOf(r)]
		b.m.requests += c.requests
		b.m.cached += c.cached
		b.m.prompt += c.prompt
	}
	if ideal != nil {
		for i, c := range ideal.ByPrefix {
			b := &bins[binOf(i+1)]
			b.ih += c.HitTokens
			b.ip += c.PromptTokens
		}
	}
	var xs, mys, iys []float64
	for i, b := range bins {
		ranks := fmt.Sprint(b.lo)
		if b.hi > b.lo {
			ranks = fmt.Sprintf("%d–%d", b.lo, b.hi)
		}
		m, id := rate(float64(b.m.cached), float64(b.m.prompt)), rate(float64(b.ih), float64(b.ip))
		if b.m.requests == 0 && b.ip == 0 {
			continue // a rank no request drew
		}
		p.Ranks = append(p.Ranks, prefixRankRow{Ranks: ranks, Requests: fmt.Sprint(b.m.requests), Measured: fraction(m), Ideal: fraction(id)})
		x := float64(b.lo)
		if pool > maxRankPoints {
			x = float64(i) // the bin's number: ranks 2^x to 2^(x+1)-1
		}
		xs, mys, iys = append(xs, x), append(mys, m), append(iys, id)
	}
	var ss []series
	if !allNaN(mys) {
		ss = append(ss, series{"measured", xs, mys})
	}
	if !allNaN(iys) {
		ss = append(ss, series{"ideal", xs, iys})
	}
	if len(ss) == 0 {
		return
	}
	xl := "prefix popularity rank"
	if pool > maxRankPoints {
		xl = "rank bin k: ranks 2^k to 2^(k+1)−1"
	}
	p.Figures = append(p.Figures, figure{ID: "prefix-cache-rank", Caption: "by the pool prefix the prompt started with, in the pool's order (rank 1 the most popular)",
		SVG: template.HTML(lineSVG("Prefix-cache hit rate by prefix rank", xl, "hit rate", ss))})
}

// fraction is a hit rate for the table, "N/A" when unknown.
func fraction(v float64) string {
	if math.IsNaN(v) {
		return "N/A"
	}
	return fmt.Sprintf("%.4f", v)
}

// prefixSlices is the measured and the ideal hit rate per report slice (n slices of
// width seconds from start): each slice's Σ cached_tokens / Σ prompt tokens of the
// requests sent in it, and the ideal's hit over prompt tokens of its slices whose
// middle falls in it; NaN where a slice has none, nil for a rate the run lacks.
func prefixSlices(d *prefixData, ideal *record.PrefixCacheIdeal, start, width float64, n int) (measured, idealRate []float64) {
	ratios := func(h, q []float64) []float64 {
		out := make([]float64, n)
		for k := range out {
			out[k] = rate(h[k], q[k])
		}
		return out
	}
	if len(d.sentS) > 0 {
		h, q := make([]float64, n), make([]float64, n)
		for i, t := range d.sentS {
			if k := int((t - start) / width); k >= 0 && k < n {
				h[k] += d.cached[i]
				q[k] += d.prompt[i]
			}
		}
		measured = ratios(h, q)
	}
	if ideal != nil && len(ideal.Slices) > 0 && ideal.SliceWidth > 0 {
		h, q := make([]float64, n), make([]float64, n)
		for j, c := range ideal.Slices {
			mid := (time.Duration(j)*ideal.SliceWidth + ideal.SliceWidth/2).Seconds()
			if k := int((mid - start) / width); k >= 0 && k < n {
				h[k] += float64(c.HitTokens)
				q[k] += float64(c.PromptTokens)
			}
		}
		idealRate = ratios(h, q)
	}
	return measured, idealRate
}

// rate is hit over prompt tokens, NaN without prompt tokens.
func rate(hit, prompt float64) float64 {
	if prompt <= 0 {
		return math.NaN()
	}
	return hit / prompt
}
