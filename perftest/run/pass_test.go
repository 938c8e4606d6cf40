package run

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// The post-run pass keeps no records, yet gives the checks exactly what
// check.FromClientOptions gives from the full records (less the gaps, which
// RequestsWithGaps reads back), under the scenario's OSL definition, in Run and Load.
func TestStreamingPassMatchesFullRecords(t *testing.T) {
	dir := t.TempDir()
	sc := scenario.Scenario{
		Mock: mockserver.Config{Fast: true},
		//lint:ignore SA1019 the deprecated structured objectives must still be checked, as the rules they mean
		Objectives: scenario.Objectives{TokenizerMatch: true, ISLFit: fixed(24)},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API: loadgen.EndpointChat,
			},
			Workload: loadgen.Workload{
				ISL:  fixed(24),
				OSL:  fixed(6),
				Seed: 4,
			},
			Load: loadgen.Load{
				Concurrency: 3,
			},
			Stop: loadgen.Stop{
				Requests:       25,
				WarmupRequests: 2,
			},
			Recording: loadgen.Recording{
				UsageOSL: true,
			},
		},
	}
	out, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	if out.Client != nil || out.Server != nil {
		t.Fatalf("Run kept %d client and %d server records in memory; want them on disk only", len(out.Client), len(out.Server))
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	cs, ss := records(t, out)
	opt := metric.Options{UsageOSL: true}
	wantGaps := check.FromClientOptions(cs, opt)
	mem := &Outcome{Scenario: out.Scenario, Client: cs, Server: ss}
	for _, o := range []struct {
		name string
		o    *Outcome
	}{{"Run", out}, {"Load", back}} {
		if got, want := o.o.Metrics.String(), metric.Compute(cs, opt, nil).String(); got != want {
			t.Errorf("%s: metrics =\n%s\nwant (from the records, usage OSL)\n%s", o.name, got, want)
		}
		if o.o.Metrics.OSLSource != "usage" {
			t.Errorf("%s: OSLSource = %q, want usage (the scenario's client.usage_osl)", o.name, o.o.Metrics.OSLSource)
		}
		got, err := o.o.RequestsWithGaps()
		if err != nil {
			t.Fatal(err)
		}
		want := mem.Requests() // server ISL joined by id
		for i := range want {
			want[i].Gaps = wantGaps[i].Gaps
		}
		if len(got) != 25 || !sameRequests(got, want) {
			t.Errorf("%s: RequestsWithGaps = %d requests\n%+v\nwant\n%+v", o.name, len(got), got, want)
		}
		for i := range wantGaps {
			wantGaps[i].ServerISL, got[i].ServerISL = 0, 0
		}
		if !sameRequests(got, wantGaps) {
			t.Errorf("%s: requests differ from check.FromClientOptions beyond the server join", o.name)
		}
		for _, m := range []check.Metric{check.ISL, check.OSL} {
			s1, l1 := o.o.Lengths(m)
			s2, l2 := mem.Lengths(m)
			if s1 != s2 || !reflect.DeepEqual(l1, l2) || len(l1) != 25 {
				t.Errorf("%s: Lengths(%s) = %s %v, want %s %v", o.name, m, s1, l1, s2, l2)
			}
		}
		if got, want := o.o.Context("").Requests, 25; got != want {
			t.Errorf("%s: Context().Requests = %d, want %d", o.name, got, want)
		}
	}
	var n int
	if err := out.each(func(*record.Client) error { n++; return nil }); err != nil || n != 27 {
		t.Errorf("each = %d records, %v; want 27 (2 warm-up)", n, err)
	}
}

// heapInUse returns the bytes of live heap objects after a full GC.
func heapInUse() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestSummaryHeapPerRequest streams 100,000 streamed records (a 100k-stream run, one
// request in 50 failed, with HTTP phase timings) through the post-run pass, reusing
// one record as record.EachClient does, and bounds the live heap the pass holds at its
// peak (the summary and the accumulator, before Metrics): 120 bytes a measured
// request (the 64-byte built-in values, the 20-byte record-level fields, and the raw
// phase metrics that differ from request to request, 8 bytes each: sending, waiting,
// receiving, duration; a connection's set-up times, equal on reused connections, cost
// next to nothing) plus 1 MiB for the sketches and maps.
func TestSummaryHeapPerRequest(t *testing.T) {
	const n, chunks = 100_000, 32
	r := record.Client{Stream: true, Status: 200, ISL: 128, Endpoint: "chat", UsageCompletionTokens: chunks, UsagePromptTokens: -1}
	r.Chunks = make([]record.Chunk, chunks)
	before := heapInUse()
	s, a := newSummary(metric.Options{}, metric.SLO{})
	var q metric.Request
	for i := range n {
		r.Index, r.RequestID = i, "req-"+strconv.Itoa(i)
		r.Sent = time.Duration(i) * time.Millisecond
		t0 := r.Sent + 20*time.Millisecond + time.Duration(i%7)*time.Millisecond
		for k := range r.Chunks {
			r.Chunks[k] = record.Chunk{T: t0, Tokens: 1, Choices: true}
			t0 += time.Duration(3+i%5) * time.Millisecond
		}
		r.OSL, r.Done = chunks, t0
		// HTTP phases as the client records them: 64 connections opened by the first
		// requests (their set-up times) and kept alive, one reopened half-way; each
		// request written 20–40 µs after its send.
		r.Written, r.FirstByte, r.ConnReused = r.Sent+time.Duration(20+i%21)*time.Microsecond, r.Chunks[0].T-time.Millisecond, i >= 64 && i != n/2
		r.Connecting, r.Blocked = 0, 0
		if !r.ConnReused {
			r.Connecting, r.Blocked = time.Duration(80+i%40)*time.Microsecond, 3*time.Microsecond
		}
		r.Status, r.ErrorKind = 200, ""
		if i%50 == 0 {
			r.Status, r.ErrorKind = 500, record.ErrHTTPStatus
		}
		s.addClient(a, &r, &q)
	}
	after := heapInUse()
	s.metrics = a.Metrics()
	runtime.KeepAlive(s)
	runtime.KeepAlive(a)
	if got := s.metrics.Stats[record.MetricTTFT].Count; got != n-n/50 {
		t.Fatalf("TTFT count = %d, want %d", got, n-n/50)
	}
	if got, want := s.request(n-1).TTFT, (20*time.Millisecond + (n-1)%7*time.Millisecond).Seconds(); got != want {
		t.Fatalf("request %d TTFT = %v, want %v", n-1, got, want)
	}
	if got := s.request(50); got.Err == "" || got.Values.OK {
		t.Fatalf("request 50 (failed) = %+v, want an error and OK false", got)
	}
	if got, ok := s.metrics.Stats[record.MetricHTTPConnecting]; !ok || got.Count != n-n/50 {
		t.Fatalf("http_req_connecting = %+v (present %v), want one value a successful request", got, ok)
	}
	grew := int64(after) - int64(before)
	limit := int64(n*120 + 1<<20)
	t.Logf("post-run pass heap: %d bytes for %d requests: %.1f B/request (limit %d)", grew, n, float64(grew)/n, limit)
	if grew > limit {
		t.Errorf("the post-run pass holds %d bytes for %d requests, want <= %d (120 B/request + 1 MiB)", grew, n, limit)
	}
}

// sameRequests is reflect.DeepEqual for check requests whose metric values may hold
// raw metrics a request lacks, which are NaN (metric.Request.Raw): equal when the
// exported fields are and every raw metric is equal or absent on both sides.
func sameRequests(a, b []check.Request) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if (x.Values == nil) != (y.Values == nil) {
			return false
		}
		if x.Values != nil {
			for _, d := range metric.Catalogue() {
				if d.Record == nil {
					continue
				}
				v, ok := x.Values.Raw(d.Name)
				w, ok2 := y.Values.Raw(d.Name)
				if ok != ok2 || (ok && v != w) {
					return false
				}
			}
		}
		jx, err1 := json.Marshal(x)
		jy, err2 := json.Marshal(y)
		if err1 != nil || err2 != nil || !bytes.Equal(jx, jy) {
			return false
		}
	}
	return true
}
