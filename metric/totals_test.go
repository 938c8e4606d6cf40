package metric

import (
	"reflect"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// totalsRecords are records of every shape the run-level sums read: streams and not,
// reasoning, usage counts, audio sent and images received, failures, warm-up, an
// inexact prompt, two models.
func totalsRecords() []record.Client {
	var recs []record.Client
	for i := range 200 {
		r := record.Client{Index: i, Model: []string{"a", "b"}[i%2], Stream: i%3 != 0, Sent: time.Duration(i) * time.Millisecond,
			ISL: 10 + i%7, OSL: 3 + i%5, Status: 200, UsagePromptTokens: 40 + i%3, UsageCompletionTokens: 2 + i%4,
			ISLExact: i%11 != 0, RequestedISL: 10}
		r.Chunks = []record.Chunk{{T: r.Sent + 5*time.Millisecond, Tokens: 1}, {T: r.Sent + 7*time.Millisecond, Tokens: r.OSL - 1}}
		r.Done = r.Sent + time.Duration(8+i%13)*time.Millisecond
		switch {
		case i%17 == 0:
			r.ReasoningTokens, r.UsageReasoningTokens = 2, 1
		case i%19 == 0:
			r.AudioDuration = time.Duration(i) * time.Millisecond
		case i%23 == 0:
			r.Images = 2
		case i%29 == 0:
			r.UsagePromptTokens, r.UsageCompletionTokens = -1, -1
		}
		if i%13 == 5 {
			r.ErrorKind, r.Error, r.Status = record.ErrHTTPStatus, "503", 503
		}
		r.Warmup = i < 4
		recs = append(recs, r)
	}
	return recs
}

// TestAccumulatorTotalsOnly: a totals-only accumulator reports exactly the run-level
// metrics, error counts and model sections a full one reports, and no distribution,
// under each token-count option, with and without an SLO.
func TestAccumulatorTotalsOnly(t *testing.T) {
	recs := totalsRecords()
	slo := SLO{TTFT: 6 * time.Millisecond}
	for _, opt := range []Options{{}, {UsageOSL: true}, {UsageISL: true, UsageOSL: true}, {ByModel: true}} {
		for _, withSLO := range []bool{false, true} {
			full, tot := NewAccumulator(opt), NewAccumulator(opt)
			tot.TotalsOnly()
			if withSLO {
				full.SetSLO(slo)
				tot.SetSLO(slo)
			}
			for i := range recs {
				full.Add(&recs[i])
				tot.Add(&recs[i])
			}
			want, got := full.Metrics(), tot.Metrics()
			if len(got.Stats) != 0 {
				t.Errorf("%+v slo=%v: totals-only has %d distributions", opt, withSLO, len(got.Stats))
			}
			if len(want.Scalars) < 8 || want.Scalars[record.MetricRequestCount].Value == 0 {
				t.Fatalf("%+v: the full accumulator reports too little to compare: %v", opt, want.Scalars)
			}
			if withSLO && want.Scalars[record.MetricGoodRequestCount].Value == 0 {
				t.Fatalf("%+v: no request is good; the SLO compares nothing", opt)
			}
			want.Stats = map[string]record.Stat{}
			for m, sub := range want.Models {
				if len(got.Models[m].Stats) != 0 {
					t.Errorf("%+v: model %s has distributions", opt, m)
				}
				sub.Stats = map[string]record.Stat{}
				want.Models[m] = sub
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%+v slo=%v: totals-only\n%+v\nwant\n%+v", opt, withSLO, got, want)
			}
		}
	}
}

// TestAccumulatorByModelDerivesOnce: with ByModel a record's values are derived once,
// for the run and for its model: each raw metric's Record is called once per measured
// record.
func TestAccumulatorByModelDerivesOnce(t *testing.T) {
	calls := 0
	restore := Extend(Def{Name: "test_derivations", Header: "Derivations", Unit: UnitRequests, Kind: PerRequest, Origin: "perfgate",
		Help: "Test.", Record: func(*record.Client) (float64, bool) { calls++; return 1, true }})
	defer restore()
	recs := totalsRecords()
	measured := 0
	for _, r := range recs {
		if !r.Warmup {
			measured++
		}
	}
	a := NewAccumulator(Options{ByModel: true})
	for i := range recs {
		a.Add(&recs[i])
	}
	if calls != measured {
		t.Errorf("Record called %d times for %d measured records; want once each", calls, measured)
	}
	m := a.Metrics()
	if got := m.Models["a"].Stats["test_derivations"].Count + m.Models["b"].Stats["test_derivations"].Count; got != m.Stats["test_derivations"].Count || got == 0 {
		t.Errorf("the models' sections hold %d values, the run's %d", got, m.Stats["test_derivations"].Count)
	}
}

// TestTTFTIsTheRequests: TTFT is Request.TTFT for every record shape: streams with and
// without a text chunk, role-only first chunks, non-streaming answers, failures.
func TestTTFTIsTheRequests(t *testing.T) {
	recs := totalsRecords()
	for _, r := range benchRecords() {
		recs = append(recs, r)
	}
	noText := record.Client{Stream: true, Sent: 5, Chunks: []record.Chunk{{T: 9, Choices: true}, {T: 12}}}
	recs = append(recs, noText, record.Client{Stream: true})
	with := 0
	for i := range recs {
		q := Of(&recs[i], Options{})
		d, ok := TTFT(&recs[i])
		if d != q.TTFT || ok != q.HasTTFT {
			t.Errorf("record %d: TTFT %v, %v; Request %v, %v", i, d, ok, q.TTFT, q.HasTTFT)
		}
		if ok {
			with++
		}
	}
	if with == 0 || with == len(recs) {
		t.Errorf("%d of %d records have a TTFT: both cases are not compared", with, len(recs))
	}
}
