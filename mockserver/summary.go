package mockserver

import (
	"math"
	"slices"
	"strconv"
	"unicode"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/record"
)

// aggregator accumulates what the summary needs. It is used by the recorder goroutine
// under the recorder's mutex. Its size does not grow with the number of requests: lengths
// are kept as value → count tables (bounded by the distinct values, at most
// --max-model-len or --max-tokens-cap of them), token ids as a count per vocabulary id.
type aggregator struct {
	eps        map[string]*epAgg
	rejected   map[string]int
	faults     map[string]int
	modes      map[string]int
	finish     map[string]int
	clientGone int
	total      int // served (lines in the recording)
	answered   int // served + rejected
	vocabSize  int
}

type epAgg struct {
	isl, reqOSL, minTok, osl intCounts
	reasoning                intCounts
	streamed, ignoreEOS      int
	effort, modes, finish    map[string]int
	vocab                    map[int]int
	// dense counts the ids below the tokenizer's vocabulary size (when it is at most
	// denseVocab) by index instead of in vocab: a map update per input token was the
	// largest part of adding a record.
	dense []int
}

// denseVocab is the largest vocabulary counted in a slice (8 MiB of counts).
const denseVocab = 1 << 20

// vocabCounts returns e's token counts as one id → count map.
func (e *epAgg) vocabCounts() map[int]int {
	if e.dense == nil {
		return e.vocab
	}
	m := make(map[int]int, len(e.vocab))
	for id, c := range e.vocab {
		m[id] = c
	}
	for id, c := range e.dense {
		if c > 0 {
			m[id] += c
		}
	}
	return m
}

func newAggregator(vocabSize int) *aggregator {
	return &aggregator{eps: map[string]*epAgg{}, rejected: map[string]int{}, faults: map[string]int{},
		modes: map[string]int{}, finish: map[string]int{}, vocabSize: vocabSize}
}

func (a *aggregator) add(r *record.Server, ids []int) {
	a.answered++
	if r.Rejected != "" {
		a.rejected[r.Rejected]++
		return
	}
	a.total++
	if r.Fault != "" {
		a.faults[r.Fault]++
	}
	if r.ClientGone {
		a.clientGone++
	}
	if r.Fault != "" && r.Status >= 400 {
		return // injected error: counted as a fault, no input statistics
	}
	e := a.eps[r.Endpoint]
	if e == nil {
		e = &epAgg{effort: map[string]int{}, modes: map[string]int{}, finish: map[string]int{}, vocab: map[int]int{},
			isl: intCounts{}, reqOSL: intCounts{}, minTok: intCounts{}, osl: intCounts{}, reasoning: intCounts{}}
		a.eps[r.Endpoint] = e
	}
	e.isl[r.ISL]++
	if r.RequestedOSL != nil {
		e.reqOSL[*r.RequestedOSL]++
	}
	if r.MinTokens != nil {
		e.minTok[*r.MinTokens]++
	}
	if r.FinishReason != "" || r.OSL > 0 {
		e.osl[r.OSL]++
	}
	if r.ReasoningTokens > 0 {
		e.reasoning[r.ReasoningTokens]++
	}
	if r.Stream {
		e.streamed++
	}
	if r.IgnoreEOS != nil && *r.IgnoreEOS {
		e.ignoreEOS++
	}
	if r.ReasoningEffort != nil {
		e.effort[*r.ReasoningEffort]++
	}
	e.modes[r.TokenizationMode]++
	a.modes[r.TokenizationMode]++
	if r.FinishReason != "" {
		e.finish[r.FinishReason]++
		a.finish[r.FinishReason]++
	}
	if e.dense == nil && len(ids) > 0 && a.vocabSize > 0 && a.vocabSize <= denseVocab {
		e.dense = make([]int, a.vocabSize)
	}
	for _, id := range ids {
		if uint(id) < uint(len(e.dense)) {
			e.dense[id]++
		} else {
			e.vocab[id]++
		}
	}
}

func (a *aggregator) summary(decode func(int) string) record.ServerSummary {
	s := record.ServerSummary{
		TotalRequests: a.total, PerEndpoint: map[string]record.EndpointSummary{},
		Answered: a.answered, Recorded: a.answered,
		Rejected: maps(a.rejected), Faults: maps(a.faults), TokenizationModes: maps(a.modes),
		FinishReasons: maps(a.finish), ClientGone: a.clientGone,
	}
	for ep, e := range a.eps {
		es := record.EndpointSummary{
			Count: e.isl.n(), StreamedCount: e.streamed, IgnoreEOSCount: e.ignoreEOS,
			ISL: statBlock(e.isl), RequestedOSL: statBlock(e.reqOSL), MinTokens: quantiles(e.minTok),
			OSL: statBlock(e.osl), TokenizationModes: maps(e.modes), FinishReasons: e.finish,
		}
		if len(e.effort) > 0 {
			es.ReasoningEffortCounts = e.effort
		}
		if len(e.reasoning) > 0 {
			es.ReasoningTokens = quantiles(e.reasoning)
		}
		if len(e.finish) == 0 {
			es.FinishReasons = nil
		}
		es.VocabDistribution = vocabDistribution(e.vocabCounts(), a.vocabSize, decode)
		s.PerEndpoint[ep] = es
	}
	return s
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// intCounts is a sample of integers as value → number of occurrences: the summary's
// statistics are exact, and its size is the number of distinct values, not of requests.
type intCounts map[int]int

// countsOf tallies v.
func countsOf(v []int) intCounts {
	c := intCounts{}
	for _, x := range v {
		c[x]++
	}
	return c
}

func (c intCounts) n() int {
	n := 0
	for _, k := range c {
		n += k
	}
	return n
}

// sortedValues returns the distinct values, ascending.
func (c intCounts) sortedValues() []int {
	vs := make([]int, 0, len(c))
	for v := range c {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// quantiles summarises c: min, max, mean, population standard deviation (ddof=0, as
// everywhere in perfgate) and percentiles by [distribution.PercentileSorted]. The sorted
// sample is expanded only for the duration of the call (8 bytes per value).
func quantiles(c intCounts) *record.Quantiles {
	n := c.n()
	if n == 0 {
		return nil
	}
	vs := c.sortedValues()
	x := make([]float64, 0, n)
	sum := 0.0
	for _, v := range vs {
		k := c[v]
		sum += float64(v) * float64(k)
		for range k {
			x = append(x, float64(v))
		}
	}
	mean := sum / float64(n)
	ss := 0.0
	for _, v := range vs {
		d := float64(v) - mean
		ss += d * d * float64(c[v])
	}
	p := func(q float64) float64 { return distribution.PercentileSorted(x, q) }
	return &record.Quantiles{Min: x[0], Max: x[n-1], Mean: mean, Stdev: math.Sqrt(ss / float64(n)),
		P50: p(0.50), P90: p(0.90), P95: p(0.95), P99: p(0.99)}
}

const (
	histMinBins     = 10
	histMaxBinWidth = 100.0
)

func statBlock(c intCounts) *record.StatBlock {
	q := quantiles(c)
	if q == nil {
		return nil
	}
	return &record.StatBlock{Quantiles: *q, UniqueValues: len(c), Histogram: histogram(c, q.Min, q.Max)}
}

// histogram follows AIPerf's rule: >= 10 equal-width bins, each <= 100 wide, the last
// closed on both ends.
func histogram(c intCounts, lo, hi float64) *record.Histogram {
	if lo == hi {
		return &record.Histogram{BinEdges: []float64{lo, hi}, Counts: []int{c.n()}}
	}
	span := hi - lo
	bins := max(histMinBins, int(math.Ceil(span/histMaxBinWidth)))
	width := span / float64(bins)
	edges := make([]float64, bins+1)
	for i := range edges {
		edges[i] = lo + float64(i)*width
	}
	edges[bins] = hi
	counts := make([]int, bins)
	for v, k := range c {
		f := float64(v)
		i := bins - 1
		if f < hi {
			i = min(int((f-lo)/width), bins-1)
		}
		counts[i] += k
	}
	return &record.Histogram{BinEdges: edges, Counts: counts}
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func vocabDistribution(counts map[int]int, vocabSize int, decode func(int) string) *record.VocabDistribution {
	total := 0
	maxID := -1
	for id, c := range counts {
		total += c
		maxID = max(maxID, id)
	}
	if total == 0 {
		return nil
	}
	source := "tokenizer"
	if vocabSize <= 0 {
		vocabSize, source = maxID+1, "observed"
	}
	type kv struct{ id, n int }
	all := make([]kv, 0, len(counts))
	for id, c := range counts {
		all = append(all, kv{id, c})
	}
	slices.SortFunc(all, func(a, b kv) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return a.id - b.id
	})
	top := all[:min(10, len(all))]
	vd := &record.VocabDistribution{VocabSize: vocabSize, VocabSizeSource: source, UniqueIDs: len(counts), TotalTokens: total,
		CoveragePct: round4(float64(len(counts)) / float64(vocabSize) * 100), Frequencies: make(map[string]int, len(counts))}
	topN := 0
	for _, t := range top {
		text := decode(t.id)
		if !printable(text) {
			text = "<id=" + strconv.Itoa(t.id) + ">"
		}
		vd.TopTokens = append(vd.TopTokens, record.TopToken{ID: t.id, Text: text, Count: t.n})
		topN += t.n
	}
	vd.Top10ConcentrationPct = round4(float64(topN) / float64(total) * 100)
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(total)
		h -= p * math.Log2(p)
	}
	vd.EntropyBits = round4(h)
	if vocabSize > 1 {
		vd.MaxEntropyBits = round4(math.Log2(float64(vocabSize)))
	}
	shape := make([]int, 80)
	width := float64(vocabSize) / 80
	for id, c := range counts {
		if id < 0 || id >= vocabSize {
			continue
		}
		shape[min(int(float64(id)/width), 79)] += c
	}
	vd.Shape80 = shape
	vd.Shape80Stats = quantiles(countsOf(shape))
	for id, c := range counts {
		vd.Frequencies[strconv.Itoa(id)] = c
	}
	return vd
}

func printable(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
