package metric

import (
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// rawFirstByte is a test-only raw metric: time to the first byte, for records that
// have one.
var rawFirstByte = Def{
	Name: "test_first_byte", Ident: "TestFirstByte", Header: "Test First Byte", Unit: UnitMS, Better: Lower,
	Kind: PerRequest, Origin: "test", Help: "First byte − sent.",
	Record: RecordDuration(func(r *record.Client) (time.Duration, bool) { return r.FirstByte - r.Sent, r.FirstByte > 0 }),
}

// TestStoreKeepsRawMetrics: a raw metric's values come back exactly from a Store, the
// request without one has none, and its column is made only when a request has one.
func TestStoreKeepsRawMetrics(t *testing.T) {
	t.Cleanup(Extend(rawFirstByte))
	var s Store
	var q Request
	add := func(sent, firstByte time.Duration) {
		r := record.Client{Sent: sent, FirstByte: firstByte, Done: sent + time.Second, Status: 200, ISL: 3, OSL: 4}
		q.Reset(&r, Options{})
		s.Add(&q)
	}
	for i := range blockLen + 10 {
		add(time.Duration(i)*time.Millisecond, 0)
	}
	if len(s.cols[s.cat.rawAt[rawFirstByte.Name]].blocks) != 0 {
		t.Fatalf("a column exists before any request had the metric")
	}
	before := s.Bytes()
	add(5*time.Second, 5*time.Second+1234567*time.Nanosecond) // 1.234567 ms
	add(6*time.Second, 0)
	if got := s.Bytes() - before; got < blockLen*8 || got > blockLen*8+128 {
		t.Errorf("the raw column takes %d bytes, want one block of 8-byte values (the block before it had none: no values kept)", got)
	}
	if s.Len() != blockLen+12 {
		t.Fatalf("Len = %d, want %d", s.Len(), blockLen+12)
	}
	for _, c := range []struct {
		i    int
		want float64
		ok   bool
	}{{0, 0, false}, {blockLen + 9, 0, false}, {blockLen + 10, 1.234567, true}, {blockLen + 11, 0, false}} {
		s.Get(c.i, &q)
		v, ok := q.Raw(rawFirstByte.Name)
		if ok != c.ok || v != c.want {
			t.Errorf("request %d: Raw = %v, %v, want %v, %v", c.i, v, ok, c.want, c.ok)
		}
		d, _ := LookupRule(rawFirstByte.Name)
		if v2, ok2 := d.Value(&q); ok2 != c.ok || v2 != c.want {
			t.Errorf("request %d: the catalogue's Value = %v, %v, want %v, %v", c.i, v2, ok2, c.want, c.ok)
		}
		if q.Latency != time.Second || q.OSL != 4 || !q.OK {
			t.Errorf("request %d: built-in values %+v lost", c.i, q)
		}
	}
	if _, ok := q.Raw("no_such_metric"); ok {
		t.Error("Raw of an unknown name has a value")
	}
}

// TestStoreKeepsEqualValuesOnce: a raw column whose values are equal over a block (0
// on reused connections, or none) keeps one value for the block; a block with one
// different value keeps all its values; every value reads back.
func TestStoreKeepsEqualValuesOnce(t *testing.T) {
	t.Cleanup(Extend(rawFirstByte))
	var s Store
	var q Request
	const n = 5 * blockLen
	fb := func(i int) time.Duration {
		switch {
		case i == 3*blockLen+7:
			return 2 * time.Millisecond // the one different value, in block 3
		case i >= 4*blockLen:
			return 0 // none in the last block
		}
		return time.Millisecond
	}
	for i := range n {
		r := record.Client{Sent: 0, Done: time.Second, Status: 200}
		if d := fb(i); d > 0 {
			r.FirstByte = d
		}
		q.Reset(&r, Options{})
		s.Add(&q)
	}
	var blocks, kept int
	for _, blk := range s.cols[s.cat.rawAt[rawFirstByte.Name]].blocks {
		blocks++
		if blk.vals != nil {
			kept++
		}
	}
	if blocks != 5 || kept != 1 {
		t.Errorf("%d blocks, %d with their values; want 5, 1 (only block 3 has a value that differs)", blocks, kept)
	}
	if got := s.Bytes(); got > 5*blockLen*compactSize+blockLen*8+5*64 {
		t.Errorf("Bytes = %d, want at most the built-in values, one block of raw values and the blocks' headers", got)
	}
	for i := range n {
		s.Get(i, &q)
		v, ok := q.Raw(rawFirstByte.Name)
		want, wantOK := MS(fb(i)), fb(i) > 0
		if ok != wantOK || (ok && v != want) {
			t.Fatalf("request %d: Raw = %v, %v, want %v, %v", i, v, ok, want, wantOK)
		}
	}
}

// TestKeptOwnsRawValues: Kept's copy keeps its raw values when the request it was
// made from is reset to another record.
func TestKeptOwnsRawValues(t *testing.T) {
	t.Cleanup(Extend(rawFirstByte))
	var q Request
	q.Reset(&record.Client{Status: 200, FirstByte: 2 * time.Millisecond, Done: 5 * time.Millisecond}, Options{})
	kept := q.Kept()
	q.Reset(&record.Client{Status: 200, FirstByte: 3 * time.Millisecond, Done: 5 * time.Millisecond}, Options{})
	if v, ok := kept.Raw(rawFirstByte.Name); !ok || v != 2 {
		t.Errorf("kept Raw = %v, %v, want 2 ms (its own copy)", v, ok)
	}
	if v, _ := q.Raw(rawFirstByte.Name); v != 3 {
		t.Errorf("reset Raw = %v, want 3", v)
	}
}

// TestAccumulatorRawMetric: the accumulator reports a raw metric exactly, and
// leaves it out of a run in which no request had it.
func TestAccumulatorRawMetric(t *testing.T) {
	t.Cleanup(Extend(rawFirstByte))
	recs := []record.Client{
		{Status: 200, Sent: 0, FirstByte: 3 * time.Millisecond, Done: 10 * time.Millisecond},
		{Status: 200, Sent: 0, FirstByte: 1 * time.Millisecond, Done: 10 * time.Millisecond},
		{Status: 200, Sent: 0, Done: 10 * time.Millisecond},
		{Status: 500, Sent: 0, FirstByte: 9 * time.Millisecond, Done: 10 * time.Millisecond, ErrorKind: "http"},
	}
	a := NewAccumulator(Options{})
	for i := range recs {
		a.Add(&recs[i])
	}
	m := a.Metrics()
	var q Request
	if v := a.Values(); v.Len() != 4 {
		t.Errorf("Values has %d requests, want all 4 (the failed one too)", v.Len())
	} else if v.Get(3, &q); q.OK || q.Latency != 10*time.Millisecond {
		t.Errorf("the failed request's values = %+v, want OK false and its latency", q)
	}
	want := Summarize([]float64{3, 1}, UnitMS) // not the failed request's 9
	if got := m.Stats[rawFirstByte.Name]; got != want {
		t.Errorf("test_first_byte = %+v, want %+v", got, want)
	}
	if _, ok := Compute(recs[2:3], Options{}, nil).Stats[rawFirstByte.Name]; ok {
		t.Error("a run without the measurement reports it")
	}
}

// TestCatalogueRefusesUnmeasurableDefs: a Def the accumulator could not derive, or in a
// unit no consumer maps, is refused when it is added, not when a run reads it.
func TestCatalogueRefusesUnmeasurableDefs(t *testing.T) {
	rec := RecordCount(func(r *record.Client) (int, bool) { return r.OSL, true })
	val := func(*Request) (float64, bool) { return 0, true }
	for _, c := range []struct {
		name string
		d    Def
		want string
	}{
		{"no derivation", Def{Name: "a", Kind: PerRequest}, "needs Value or Record"},
		{"both", Def{Name: "b", Kind: PerRequest, Value: val, Record: rec}, "Record is for"},
		{"raw per run", Def{Name: "c", Kind: PerRun, Record: rec}, "Record is for"},
		{"chunk without gaps", Def{Name: "d", Kind: PerChunk, Unit: UnitMS}, "no derivation"},
		{"unknown unit", Def{Name: "e", Kind: PerRequest, Value: val, Unit: "furlongs"}, `unit "furlongs" is not one of metric.Units`},
		{"no unit", Def{Name: "f", Kind: PerRequest, Value: val}, `unit "" is not one of metric.Units`},
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), c.want) {
					t.Errorf("%s: panic %v, want one with %q", c.name, p, c.want)
				}
			}()
			Extend(c.d)()
		}()
	}
}
