package metric

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// sketchIndex maps every value to the bucket of its definition, sketchIndexLog: at
// and around every bucket edge of its table, across the table's bounds, and for
// many values of the kinds a run adds (log-uniform from 1e-9 to 1e300, whole numbers,
// durations in ms).
func TestSketchIndexExact(t *testing.T) {
	check := func(x float64) {
		t.Helper()
		if got, want := sketchIndex(x), sketchIndexLog(x); got != want {
			t.Fatalf("sketchIndex(%v [%#x]) = %d; math.Log gives %d", x, math.Float64bits(x), got, want)
		}
	}
	near := func(x float64) {
		t.Helper()
		b := math.Float64bits(x)
		for d := uint64(0); d <= 3; d++ {
			check(math.Float64frombits(b + d))
			check(math.Float64frombits(b - d))
		}
	}
	// Every edge of the table, and the floats next to it.
	for i := edges.lo + 1; i < edges.lo+len(edges.edges); i++ {
		e := edges.at(i)
		if sketchIndexLog(e) < i || sketchIndexLog(math.Nextafter(e, 0)) >= i {
			t.Fatalf("edge %d = %v is not the least value of bucket %d", i, e, i)
		}
		near(e)
		near(math.Exp(float64(i) * sketchLogGamma)) // the nominal edge γ^i
	}
	// The table's bounds, where sketchIndex changes method.
	for _, exp := range []int{edgeMinExp, edgeMaxExp} {
		near(math.Ldexp(1, exp))
	}
	near(sketchMinValue)
	for k := -40; k <= 100; k++ {
		near(math.Ldexp(1, k))
	}
	rng := rand.New(rand.NewPCG(23, 1))
	for range 2_000_000 {
		check(math.Exp(rng.Float64()*(math.Log(1e300)-math.Log(1e-9)) + math.Log(1e-9)))
	}
	for n := 1; n <= 1_000_000; n++ {
		check(float64(n))
	}
	for range 1_000_000 {
		check(MS(time.Duration(rng.Int64N(int64(10 * time.Second)))))
	}
}

// The test above can fail: an index off by one bucket is caught.
func TestSketchIndexExactCatchesAnOffByOne(t *testing.T) {
	e := edges.at(100)
	if sketchIndex(e) == sketchIndex(math.Nextafter(e, 0)) {
		t.Fatalf("edge %v and the float below it share a bucket", e)
	}
}

func BenchmarkSketchIndex(b *testing.B) {
	xs := make([]float64, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range xs {
		xs[i] = MS(time.Duration(rng.Int64N(int64(100 * time.Millisecond))))
	}
	for _, f := range []struct {
		name string
		f    func(float64) int
	}{{"log", sketchIndexLog}, {"table", sketchIndex}} {
		b.Run(f.name, func(b *testing.B) {
			s, i := 0, 0
			for b.Loop() {
				s += f.f(xs[i&4095])
				i++
			}
			_ = s
		})
	}
}

// The built-in raw metrics derived metrics read by position (rawSending…) are where
// their names say in every catalogue, extended ones too, so a derived value never
// reads another metric's column.
func TestBuiltinRawPositions(t *testing.T) {
	restore := Extend(Def{Name: "x_raw", Ident: "XRaw", Header: "X", Unit: UnitMS, Kind: PerRequest, Origin: "perfgate",
		Help: "a test metric", Record: func(r *record.Client) (float64, bool) { return 7, true }})
	defer restore()
	r := record.Client{Sent: 10, Written: 20, FirstByte: 50, Done: 90, Blocked: 3, DNSLookup: 4, Connecting: 5,
		AudioDuration: 2 * time.Second, Images: 3}
	q := Of(&r, Options{})
	for name, j := range map[string]rawPos{
		"http_req_blocked": rawBlocked, "http_req_dns_lookup": rawDNSLookup, "http_req_connecting": rawConnecting,
		"http_req_sending": rawSending, "http_req_waiting": rawWaiting,
		record.MetricAudioDuration: rawAudio, record.MetricGeneratedImages: rawImages,
	} {
		byName, ok1 := q.Raw(name)
		byPos, ok2 := q.builtinRaw(j)
		if !ok1 || !ok2 || byName != byPos {
			t.Errorf("%s: Raw = %v, %v; by position %d = %v, %v", name, byName, ok1, j, byPos, ok2)
		}
	}
	if v, ok := q.Raw("x_raw"); !ok || v != 7 {
		t.Errorf("extension's raw metric = %v, %v; want 7", v, ok)
	}
}
