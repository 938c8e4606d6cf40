package check

import (
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

func TestFromClient(t *testing.T) {
	ms := time.Millisecond
	cs := []record.Client{
		{Index: 0, RequestID: "w", Warmup: true},
		{Index: 1, RequestID: "a", Stream: true, Sent: 10 * ms, Done: 60 * ms, ISL: 100, OSL: 3, UsagePromptTokens: 107, Turn: 1,
			Chunks: []record.Chunk{{T: 15 * ms, Choices: true}, {T: 20 * ms, Tokens: 1}, {T: 30 * ms, Tokens: 1}, {T: 60 * ms, Tokens: 1}}},
		{Index: 2, Sent: 10 * ms, Done: 11 * ms, UsagePromptTokens: -1, ErrorKind: record.ErrHTTPStatus, Error: "503"},
	}
	rs := FromClient(cs)
	if len(rs) != 2 {
		t.Fatalf("FromClient kept %d requests, want 2 (warm-up left out)", len(rs))
	}
	a, b := rs[0], rs[1]
	if a.ID != "a" || a.ISL != 100 || a.ServerISL != 107 || a.OSL != 3 || a.Turn != 1 || a.Err != "" {
		t.Errorf("request a = %+v", a)
	}
	if a.TTFT != 0.010 || a.Latency != 0.050 || len(a.Gaps) != 2 || a.Gaps[0] != 0.010 || a.Gaps[1] != 0.030 {
		t.Errorf("request a timing: TTFT=%v latency=%v gaps=%v, want 0.01 0.05 [0.01 0.03]", a.TTFT, a.Latency, a.Gaps)
	}
	if got := a.ITL(0); got != 0.020 {
		t.Errorf("ITL(mean) = %v, want 0.02", got)
	}
	if b.ID != "2" || b.ServerISL != -1 || b.Err != "http_status: 503" {
		t.Errorf("request b = %+v, want id from the index, no server count, the error kind and text", b)
	}
	if s := TTFT.Sample(rs); len(s.Values) != 1 || s.IDs[0] != "a" {
		t.Errorf("TTFT sample = %+v, want only the successful request", s)
	}
	if s := OutputTPS.Sample(rs); len(s.Values) != 1 || s.Values[0] != 50 {
		t.Errorf("OutputTPS sample = %v, want [50] (1/20ms)", s.Values)
	}
}

// TestFromClientOverhead: the chat-template overhead comes from the record, and a
// request whose client could not render its template is marked unknown whatever its
// API kind; one that is not templated is not.
func TestFromClientOverhead(t *testing.T) {
	rs := FromClient([]record.Client{
		{Endpoint: "chat", ISL: 10, ISLTemplate: 17},
		{Endpoint: "messages", ISL: 10, ISLTemplate: record.ISLTemplateUnknown},
		{Endpoint: "chat", ISL: 10, ISLTemplate: record.ISLTemplateUnknown},
		{Endpoint: "completions", ISL: 10},
		{Endpoint: "chat", ISL: 0, ISLTemplate: record.ISLTemplateUnknown}, // nothing counted: nothing to be unknown about
	})
	for i, want := range []struct {
		overhead int
		unknown  bool
	}{{7, false}, {0, true}, {0, true}, {0, false}, {0, false}} {
		if r := rs[i]; r.Overhead != want.overhead || r.OverheadUnknown != want.unknown {
			t.Errorf("record %d: overhead %d unknown %v, want %d %v", i, r.Overhead, r.OverheadUnknown, want.overhead, want.unknown)
		}
	}
}

func TestBoundCheck(t *testing.T) {
	rs := []Request{{ID: "1", TTFT: 0.1}, {ID: "2", TTFT: 0.3}}
	if vs := (Bound{Metric: TTFT, P: 1, MaxTime: 200 * time.Millisecond, MinTime: 50 * time.Millisecond}).Check(rs); len(vs) != 2 || vs[0].Pass || !vs[1].Pass {
		t.Errorf("Bound{max 0.2, min 0.05}.Check = %v, want the max to fail and the min to pass", vs)
	}
	if vs := (Bound{Metric: TTFT, P: 0.5}).Check(rs); len(vs) != 1 || vs[0].Pass {
		t.Errorf("Bound without limits passed: %v", vs)
	}
}
