package metric

import (
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/record"
)

const msec = time.Millisecond

func TestQuantileMatchesNumpy(t *testing.T) {
	// np.percentile(x, 100*p) for x = [1, 2, 3, 4, 10].
	x := []float64{4, 10, 1, 3, 2}
	for _, c := range []struct{ p, want float64 }{
		{0, 1}, {0.25, 2}, {0.5, 3}, {0.9, 7.6}, {0.99, 9.76}, {1, 10},
	} {
		if got := Quantile(x, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v, %v) = %v, want %v", x, c.p, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Errorf("Quantile(nil, 0.5) is not NaN")
	}
	if !slices.Equal(x, []float64{4, 10, 1, 3, 2}) {
		t.Errorf("Quantile modified its input: %v", x)
	}
}

func TestStdIsPopulation(t *testing.T) {
	// np.std([2, 4, 4, 4, 5, 5, 7, 9]) = 2 (ddof=0); ddof=1 would give 2.138.
	if got := Std([]float64{2, 4, 4, 4, 5, 5, 7, 9}); got != 2 {
		t.Errorf("Std = %v, want 2", got)
	}
}

// exactSample draws n latency-like values (lognormal, median 20 ms, with a 1% tail
// 20x slower and some exact zeros) from a fixed seed.
func exactSample(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, seed))
	xs := make([]float64, n)
	for i := range xs {
		x := 20 * math.Exp(0.6*rng.NormFloat64())
		switch r := rng.Float64(); {
		case r < 0.01:
			x *= 20
		case r < 0.015:
			x = 0
		}
		xs[i] = x
	}
	return xs
}

func TestSketchQuantileErrorBound(t *testing.T) {
	xs := exactSample(200_000, 1)
	var s Sketch
	for _, x := range xs {
		s.Add(x)
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	ps := []float64{0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999}
	for i := 1; i < 1000; i++ { // and every 0.1% step in between
		ps = append(ps, float64(i)/1000)
	}
	worst := 0.0
	for _, p := range ps {
		want, got := QuantileSorted(sorted, p), s.Quantile(p)
		rel := math.Abs(got-want) / math.Abs(want)
		if want == 0 {
			rel = math.Abs(got)
		}
		worst = max(worst, rel)
		if rel > SketchRelativeError {
			t.Errorf("Sketch.Quantile(%v) = %v, exact %v: relative error %.3g > %v", p, got, want, rel, SketchRelativeError)
		}
	}
	t.Logf("worst relative error p1…p99.9: %.3g (bound %v), %d bytes for %d values", worst, SketchRelativeError, s.Bytes(), s.Count())
	st := s.Stat(UnitMS)
	if want := Summarize(xs, UnitMS); st.Count != want.Count || st.Min != want.Min || st.Max != want.Max ||
		math.Abs(st.Avg-want.Avg) > 1e-9*want.Avg || math.Abs(st.Std-want.Std) > 1e-9*want.Std {
		t.Errorf("Sketch.Stat = %v\nwant exact count/min/max/avg/std of %v", st, want)
	}
	if s.Bytes() > 100_000 {
		t.Errorf("sketch of %d values is %d bytes, want <= 100000", s.Count(), s.Bytes())
	}
}

func TestSketchMergeIsConcatenation(t *testing.T) {
	a, b := exactSample(5000, 2), exactSample(7000, 3)
	for i := range b {
		b[i] = 1e3 * b[i] // a different range, so the merge grows the buckets both ways
	}
	var sa, sb, sab Sketch
	for _, x := range a {
		sa.Add(x)
		sab.Add(x)
	}
	for _, x := range b {
		sb.Add(x)
		sab.Add(x)
	}
	sa.Merge(&sb)
	for _, p := range []float64{0, 0.01, 0.5, 0.9, 0.99, 1} {
		if got, want := sa.Quantile(p), sab.Quantile(p); got != want {
			t.Errorf("merged Quantile(%v) = %v, want %v (one sketch of both)", p, got, want)
		}
	}
	if got, want := sa.Stat(UnitMS), sab.Stat(UnitMS); got.Count != want.Count || math.Abs(got.Std-want.Std) > 1e-9*want.Std {
		t.Errorf("merged Stat = %v, want %v", got, want)
	}
}

func TestCompactIsAtMost64Bytes(t *testing.T) {
	if n := unsafe.Sizeof(compact{}); n > 64 {
		t.Errorf("per-request storage is %d bytes, want <= 64", n)
	}
}

func stream(sent time.Duration, osl, usage int, ts ...time.Duration) record.Client {
	r := record.Client{Stream: true, Sent: sent, Status: 200, ISL: 10, OSL: osl, UsageCompletionTokens: usage}
	r.Chunks = append(r.Chunks, record.Chunk{T: sent + msec, Choices: true}) // role-only
	for _, t := range ts {
		r.Chunks = append(r.Chunks, record.Chunk{T: t, Tokens: 1, Choices: true})
	}
	r.Done = ts[len(ts)-1] + msec
	return r
}

func TestRequestDefinitions(t *testing.T) {
	r := stream(0, 3, 5, 10*msec, 20*msec, 40*msec) // done 41 ms
	for _, c := range []struct {
		opt              Options
		itl, tpot, tputs float64
	}{
		{Options{}, 31.0 / 2, 40.0 / 2, 2e3 / 31},               // client OSL 3
		{Options{UsageOSL: true}, 31.0 / 4, 40.0 / 4, 4e3 / 31}, // usage OSL 5
	} {
		q := Of(&r, c.opt)
		check := func(name string, got float64, ok bool, want float64) {
			t.Helper()
			if !ok || math.Abs(got-want) > 1e-12 {
				t.Errorf("%+v: %s = %v (defined %v), want %v", c.opt, name, got, ok, want)
			}
		}
		itl, ok := q.ITL()
		check("ITL", itl, ok, c.itl)
		tp, ok := q.TPOTVLLM()
		check("TPOT_vllm", tp, ok, c.tpot)
		tu, ok := q.OutputThroughputPerUser()
		check("throughput/user", tu, ok, c.tputs)
		check("TTFT", MS(q.TTFT), q.HasTTFT, 10)
		check("TTFT_vllm", MS(q.TTFTVLLM), q.HasTTFTVLLM, 1)
		check("TTST", MS(q.TTST), q.HasTTST, 10)
		if want := []time.Duration{10 * msec, 20 * msec}; !slices.Equal(q.ICL, want) {
			t.Errorf("ICL = %v, want %v", q.ICL, want)
		}
		if want := []time.Duration{9 * msec, 10 * msec, 20 * msec}; !slices.Equal(q.ITLVLLM, want) {
			t.Errorf("ITL_vllm gaps = %v, want %v", q.ITLVLLM, want)
		}
	}
}

func TestSLOMiss(t *testing.T) {
	r := stream(0, 3, -1, 10*msec, 20*msec, 40*msec) // TTFT 10ms, ITL 15.5ms, ICL 10, 20
	q := Of(&r, Options{})
	for _, c := range []struct {
		slo  SLO
		miss []string
	}{
		{SLO{}, nil},
		{SLO{TTFT: 10 * msec}, nil},
		{SLO{TTFT: 9 * msec}, []string{"TTFT"}},
		{SLO{ITL: 15500 * time.Microsecond}, nil},
		{SLO{ITL: 15 * msec}, []string{"ITL"}},
		{SLO{ITL: 15 * msec, ITLPercentile: 0.5}, nil},              // median gap 15 ms
		{SLO{ITL: 19 * msec, ITLPercentile: 0.99}, []string{"ITL"}}, // p99 gap 19.9 ms
		{SLO{Latency: 40 * msec}, []string{"latency"}},
	} {
		if got := c.slo.Miss(&q); !slices.Equal(got, c.miss) {
			t.Errorf("%v: Miss = %v, want %v", c.slo, got, c.miss)
		}
	}
	bad := record.Client{Status: 500, ErrorKind: record.ErrHTTPStatus}
	if got := (SLO{}).Miss(new(Of(&bad, Options{}))); !slices.Equal(got, []string{"error"}) {
		t.Errorf("failed request: Miss = %v, want [error]", got)
	}
}

func TestParseAIPerfForm(t *testing.T) {
	s, err := ParseSLO("time_to_first_token:200 itl:20.5")
	if err != nil || s != (SLO{TTFT: 200 * msec, ITL: 20500 * time.Microsecond}) {
		t.Errorf("ParseAIPerfSLO = %+v, %v", s, err)
	}
	for _, bad := range []string{"", "ttft", "ttft:0", "ttft:x", "tpot:3"} {
		if _, err := ParseSLO(bad); err == nil {
			t.Errorf("ParseSLO(%q): no error", bad)
		}
	}
}

// heapInUse returns the bytes of live heap objects after a full GC.
func heapInUse() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestAccumulatorHeapBound streams 200,000 records of 64 chunks each (12.8M tokens)
// through one accumulator, reusing one record as a writer that drops records would,
// and bounds the live heap it leaves: 64 bytes per request plus 1 MiB for the sketches
// and maps, independent of the tokens.
func TestAccumulatorHeapBound(t *testing.T) {
	const n, chunks = 200_000, 64
	rng := rand.New(rand.NewPCG(7, 7))
	r := record.Client{Stream: true, Status: 200, ISL: 128, UsageCompletionTokens: chunks}
	r.Chunks = make([]record.Chunk, chunks)
	before := heapInUse()
	a := NewAccumulator(Options{})
	a.SetSLO(SLO{TTFT: 50 * msec})
	for i := range n {
		r.Index = i
		r.Sent = time.Duration(i) * msec
		t0 := r.Sent + time.Duration(rng.ExpFloat64()*float64(20*msec))
		for k := range r.Chunks {
			r.Chunks[k] = record.Chunk{T: t0, Tokens: 1, Choices: true}
			t0 += time.Duration(rng.ExpFloat64() * float64(5*msec))
		}
		r.OSL = chunks
		r.Done = t0
		a.Add(&r)
	}
	after := heapInUse()
	m := a.Metrics()
	runtime.KeepAlive(a)
	if got := m.Stats[record.MetricICL].Count; got != n*(chunks-1) {
		t.Fatalf("ICL count = %d, want %d", got, n*(chunks-1))
	}
	grew := int64(after) - int64(before)
	limit := int64(n*64 + 1<<20)
	t.Logf("heap in use grew %d bytes for %d requests, %d tokens: %.1f B/request (limit %d)", grew, n, n*chunks, float64(grew)/n, limit)
	if grew > limit {
		t.Errorf("heap in use grew %d bytes after %d records, want <= %d (64 B/request + 1 MiB)", grew, n, limit)
	}
}

func TestSummarizeNumpyLinear(t *testing.T) {
	// numpy.percentile([1,2,3,4,10], [1,25,50,90,99]) = [1.04, 2, 3, 7.6, 9.76]
	s := Summarize([]float64{4, 10, 1, 3, 2, math.NaN()}, "ms")
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p1", s.P1, 1.04}, {"p25", s.P25, 2}, {"p50", s.P50, 3}, {"p90", s.P90, 7.6}, {"p99", s.P99, 9.76},
		{"avg", s.Avg, 4}, {"std", s.Std, math.Sqrt(10)}, {"min", s.Min, 1}, {"max", s.Max, 10}, {"count", float64(s.Count), 5}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("Summarize: %s = %v; want %v", c.name, c.got, c.want)
		}
	}
	if z := Summarize(nil, "ms"); z.Count != 0 || z.Avg != 0 {
		t.Errorf("Summarize(nil) = %+v; want zero", z)
	}
}

// The accumulator's per-request storage once died at 417,728 values (loadgen's series
// overflowed its block size); it must hold well past a million requests.
func TestAccumulatorMillionRequests(t *testing.T) {
	testutil.Long(t) // make test-long
	const n = 1_100_000
	a := NewAccumulator(Options{})
	r := record.Client{Status: 200, ISL: 1, OSL: 1, UsageCompletionTokens: -1}
	for i := range n {
		r.Sent, r.Done = time.Duration(i), time.Duration(i)+time.Duration(i%1000)*time.Microsecond
		a.Add(&r)
	}
	st := a.Metrics().Stats[record.MetricRequestLatency]
	if st.Count != n || st.Max != 0.999 || st.Min != 0 {
		t.Errorf("request latency over %d requests = %v, want count %d, min 0, max 0.999 ms", n, st, n)
	}
}

// An approximate accumulator holds constant memory and reports every per-request
// percentile within the sketch's bound of the exact accumulator's, with the same
// counts, means and extremes.
func TestAccumulatorApproximate(t *testing.T) {
	const n, chunks = 100_000, 8
	rng := rand.New(rand.NewPCG(3, 3))
	exact, approx := NewAccumulator(Options{}), NewAccumulator(Options{})
	approx.Approximate()
	r := record.Client{Stream: true, Status: 200, Chunks: make([]record.Chunk, chunks), UsageCompletionTokens: -1}
	before := heapInUse()
	for i := range n {
		r.Sent = time.Duration(i) * msec
		r.Scheduled = r.Sent - time.Duration(rng.ExpFloat64()*float64(msec))
		r.ISL = 1 + rng.IntN(4000)
		t0 := r.Sent + time.Duration(rng.ExpFloat64()*float64(20*msec))
		for k := range r.Chunks {
			r.Chunks[k] = record.Chunk{T: t0, Tokens: 1 + rng.IntN(3), Choices: true}
			t0 += time.Duration(rng.ExpFloat64() * float64(5*msec))
		}
		r.OSL, r.Done = 2*chunks, t0
		exact.Add(&r)
		approx.Add(&r)
	}
	grew := int64(heapInUse()) - int64(before)
	want, got := exact.Metrics(), approx.Metrics()
	runtime.KeepAlive(exact)
	for _, d := range Catalogue() {
		if d.Kind != PerRequest {
			continue
		}
		w, g := want.Stats[d.Name], got.Stats[d.Name]
		if w.Count != g.Count || w.Min != g.Min || w.Max != g.Max || math.Abs(w.Avg-g.Avg) > 1e-9*math.Abs(w.Avg) {
			t.Errorf("%s: approximate count/min/max/avg = %d/%g/%g/%g, want exact %d/%g/%g/%g", d.Name, g.Count, g.Min, g.Max, g.Avg, w.Count, w.Min, w.Max, w.Avg)
		}
		for _, p := range [][2]float64{{w.P1, g.P1}, {w.P50, g.P50}, {w.P90, g.P90}, {w.P99, g.P99}} {
			if math.Abs(p[1]-p[0]) > SketchRelativeError*math.Abs(p[0]) {
				t.Errorf("%s: approximate percentile %g, exact %g: relative error above %g", d.Name, p[1], p[0], SketchRelativeError)
			}
		}
	}
	var seen int
	approx.Requests(func(*Request) { seen++ })
	if seen != 0 {
		t.Errorf("approximate Requests yielded %d values, want none", seen)
	}
	// The exact accumulator holds 56 B a request; the approximate one only sketches.
	if limit := int64(4 << 20); grew-int64(n*56) > limit {
		t.Errorf("heap grew %d bytes for both accumulators, want the approximate one under %d beyond the exact one's %d", grew, limit, n*56)
	}
}
