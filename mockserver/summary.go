package mockserver

import (
	"math"
	"slices"
	"strconv"
	"unicode"

	"github.com/perfgate/perfgate/record"
)

// aggregator accumulates what the summary needs. It is used by the recorder goroutine
// under the recorder's mutex.
type aggregator struct {
	eps        map[string]*epAgg
	rejected   map[string]int
	faults     map[string]int
	modes      map[string]int
	finish     map[string]int
	clientGone int
	total      int
	vocabSize  int
}

type epAgg struct {
	isl, reqOSL, minTok, osl []int
	streamed, ignoreEOS      int
	effort, modes, finish    map[string]int
	vocab                    map[int]int
}

func newAggregator(vocabSize int) *aggregator {
	return &aggregator{eps: map[string]*epAgg{}, rejected: map[string]int{}, faults: map[string]int{},
		modes: map[string]int{}, finish: map[string]int{}, vocabSize: vocabSize}
}

func (a *aggregator) add(r *record.Server, ids []int) {
	a.total++
	if r.Fault != "" {
		a.faults[r.Fault]++
	}
	if r.ClientGone {
		a.clientGone++
	}
	if r.Rejected != "" {
		a.rejected[r.Rejected]++
		return
	}
	if r.Fault != "" && r.Status >= 400 {
		return // injected error: counted as a fault, no input statistics
	}
	e := a.eps[r.Endpoint]
	if e == nil {
		e = &epAgg{effort: map[string]int{}, modes: map[string]int{}, finish: map[string]int{}, vocab: map[int]int{}}
		a.eps[r.Endpoint] = e
	}
	e.isl = append(e.isl, r.ISL)
	if r.RequestedOSL != nil {
		e.reqOSL = append(e.reqOSL, *r.RequestedOSL)
	}
	if r.MinTokens != nil {
		e.minTok = append(e.minTok, *r.MinTokens)
	}
	if r.FinishReason != "" || r.OSL > 0 {
		e.osl = append(e.osl, r.OSL)
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
	for _, id := range ids {
		e.vocab[id]++
	}
}

func (a *aggregator) summary(decode func(int) string) record.ServerSummary {
	s := record.ServerSummary{
		TotalRequests: a.total, PerEndpoint: map[string]record.EndpointSummary{},
		Answered: a.total, Recorded: a.total,
		Rejected: maps(a.rejected), Faults: maps(a.faults), TokenizationModes: maps(a.modes),
		FinishReasons: maps(a.finish), ClientGone: a.clientGone,
	}
	for ep, e := range a.eps {
		es := record.EndpointSummary{
			Count: len(e.isl), StreamedCount: e.streamed, IgnoreEOSCount: e.ignoreEOS,
			ISL: statBlock(e.isl), RequestedOSL: statBlock(e.reqOSL), MinTokens: quantiles(e.minTok),
			OSL: statBlock(e.osl), TokenizationModes: maps(e.modes), FinishReasons: e.finish,
		}
		if len(e.effort) > 0 {
			es.ReasoningEffortCounts = e.effort
		}
		if len(e.finish) == 0 {
			es.FinishReasons = nil
		}
		es.VocabDistribution = vocabDistribution(e.vocab, a.vocabSize, decode)
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

// percentile is linear interpolation between order statistics of sorted x, p in [0,1]
// (numpy "linear"; Python statistics.quantiles(method="inclusive")).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := p * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

func quantiles(v []int) *record.Quantiles {
	if len(v) == 0 {
		return nil
	}
	x := make([]float64, len(v))
	sum := 0.0
	for i, n := range v {
		x[i] = float64(n)
		sum += x[i]
	}
	slices.Sort(x)
	mean := sum / float64(len(x))
	sd := 0.0
	if len(x) > 1 {
		ss := 0.0
		for _, f := range x {
			ss += (f - mean) * (f - mean)
		}
		sd = math.Sqrt(ss / float64(len(x)-1))
	}
	return &record.Quantiles{Min: x[0], Max: x[len(x)-1], Mean: mean, Stdev: sd,
		P50: percentile(x, 0.50), P90: percentile(x, 0.90), P95: percentile(x, 0.95), P99: percentile(x, 0.99)}
}

const (
	histMinBins     = 10
	histMaxBinWidth = 100.0
)

func statBlock(v []int) *record.StatBlock {
	q := quantiles(v)
	if q == nil {
		return nil
	}
	uniq := map[int]struct{}{}
	for _, n := range v {
		uniq[n] = struct{}{}
	}
	return &record.StatBlock{Quantiles: *q, UniqueValues: len(uniq), Histogram: histogram(v, q.Min, q.Max)}
}

// histogram follows AIPerf's rule: >= 10 equal-width bins, each <= 100 wide, the last
// closed on both ends.
func histogram(v []int, lo, hi float64) *record.Histogram {
	if lo == hi {
		return &record.Histogram{BinEdges: []float64{lo, hi}, Counts: []int{len(v)}}
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
	for _, n := range v {
		f := float64(n)
		i := bins - 1
		if f < hi {
			i = min(int((f-lo)/width), bins-1)
		}
		counts[i]++
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
	vd.Shape80Stats = quantiles(shape)
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
