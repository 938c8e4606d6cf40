package run

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/record"
)

// TestServerTimingsEndToEnd: a run against the mock with --server-timings vllm
// records, in client.jsonl, the server's TTFT the mock measured and splits each
// stream's TTFT into it and the client's overhead. Sane means: the server TTFT is at
// least the mock's configured 5 ms (it sleeps until then before the first token), is
// its queue plus prefill, and the last token comes at least 7 ITLs after; the client's
// overhead is >= 0 at the median and below the client's TTFT (it is a part of it);
// and the run has its client-distorted verdict. The short suite runs vLLM's format
// (mockserver's TestServerTimings covers the others' writing); make test-long all three.
func TestServerTimingsEndToEnd(t *testing.T) {
	for _, src := range []string{record.ServerVLLM, record.ServerLlamaCpp, record.ServerSGLang} {
		t.Run(src, func(t *testing.T) {
			if src != record.ServerVLLM {
				testutil.Long(t)
			}
			dir := t.TempDir()
			sc := scenario.Scenario{
				Mock: mockserver.Config{TTFT: distribution.MustSpec("fixed:5"), ITL: distribution.MustSpec("fixed:1"), ServerTimings: src},
				Config: loadgen.Config{
					Workload: loadgen.Workload{Seed: 1, ISL: fixed(32), OSL: fixed(8)},
					Load:     loadgen.Load{Concurrency: 4},
					Stop:     loadgen.Stop{Requests: 24},
				},
			}
			out, err := Run(context.Background(), sc, dir)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(dir, ClientFile))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			recs, err := record.ReadClient(f)
			if err != nil || len(recs) != 24 {
				t.Fatalf("client.jsonl: %d records, %v", len(recs), err)
			}
			var overheads, ttfts []float64
			for i := range recs {
				r := &recs[i]
				s := r.Server
				if !r.OK() || s.Source != src || !s.TTFT.Known || !s.Decode.Known {
					t.Fatalf("record %d: ok %v, server data %+v; want %s's with a TTFT and a decode", r.Index, r.OK(), s, src)
				}
				// SGLang's stamps are float64 Unix seconds, good to about 0.25 µs.
				if s.TTFT.D < 5*time.Millisecond-time.Microsecond {
					t.Errorf("record %d: server TTFT %v < the mock's 5ms", r.Index, s.TTFT.D)
				}
				if s.Prefill.Known && s.Queue.Known && (s.Queue.D+s.Prefill.D-s.TTFT.D).Abs() > time.Microsecond {
					t.Errorf("record %d: queue %v + prefill %v != TTFT %v", r.Index, s.Queue.D, s.Prefill.D, s.TTFT.D)
				}
				// The last of 8 tokens is due 7 ITLs after the first's deadline.
				if !s.E2E.Known || s.E2E.D < 12*time.Millisecond-time.Microsecond {
					t.Errorf("record %d: server request latency %v < 5ms + 7 ITLs of 1ms", r.Index, s.E2E)
				}
				q := metric.Of(r, metric.Options{})
				o, ok := metric.ClientOverhead(&q)
				if !ok {
					t.Fatalf("record %d: no client overhead (TTFT %v, phases %v)", r.Index, q.HasTTFT, r.Written > 0)
				}
				overheads, ttfts = append(overheads, o), append(ttfts, metric.MS(q.TTFT))
			}
			slices.Sort(overheads)
			slices.Sort(ttfts)
			if med := overheads[len(overheads)/2]; med < 0 || med >= ttfts[len(ttfts)/2] {
				t.Errorf("client overhead median %.3f ms; want >= 0 and below the TTFT median %.3f ms", med, ttfts[len(ttfts)/2])
			}
			st, ok := out.Metrics.Stats[record.MetricClientOverhead]
			if !ok || st.Count != 24 {
				t.Errorf("metrics' client_overhead %+v (%v); want 24 values", st, ok)
			}
			var v *check.Verdict
			for _, x := range out.Validity() {
				if x.Check == validity.CheckClientDistorted {
					v = &x
				}
			}
			if v == nil || !v.Pass || !strings.Contains(v.Summary, "client overhead p50") {
				t.Errorf("validity: client-distorted verdict %+v; want one that passes (or warns), naming the p50", v)
			}
		})
	}
}

// TestClientDistortedVerdict: the run lists the client-distorted verdict at its mode:
// a warning by default, failing under fail, absent under off (the verdict's own
// thresholds: package validity's TestClientDistorted).
func TestClientDistortedVerdict(t *testing.T) {
	outcome := func(p50 float64) *Outcome {
		o := &Outcome{}
		o.Metrics = record.Metrics{Stats: map[string]record.Stat{
			record.MetricClientOverhead: {Unit: metric.UnitMS, Count: 100, P50: p50, P90: 2 * p50, P99: 3 * p50},
			record.MetricServerTTFT:     {Unit: metric.UnitMS, Count: 100, P50: 20},
		}}
		return o
	}
	def := float64(validity.DefaultMaxClientOverhead) / float64(time.Millisecond)
	// Default warn: in the run's verdicts the invalid one passes, shown as a warning.
	o := outcome(def * 3)
	for _, x := range o.Validity() {
		if x.Check == validity.CheckClientDistorted && (!x.Pass || x.Status != check.Invalid) {
			t.Errorf("default mode: %+v, want a warning", x)
		}
	}
	o.Scenario.Validity.ClientDistorted = validity.ModeFail
	found := false
	for _, x := range o.Validity() {
		if x.Check == validity.CheckClientDistorted {
			found = true
			if x.Pass {
				t.Errorf("fail mode: %+v passes", x)
			}
		}
	}
	if !found {
		t.Error("fail mode: no client-distorted verdict")
	}
	o.Scenario.Validity.ClientDistorted = validity.ModeOff
	for _, x := range o.Validity() {
		if x.Check == validity.CheckClientDistorted {
			t.Errorf("off: %+v reported", x)
		}
	}
}
