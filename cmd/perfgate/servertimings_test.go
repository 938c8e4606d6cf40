package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// `perfgate mock --server-timings vllm` and `perfgate profile` against it: every
// record in client.jsonl has the server's TTFT (at least the mock's --ttft 4, by its
// own clock) and its client_overhead, >= 0 at the median and a part of the TTFT; the
// run's metrics.json has both metrics and its validity.json the client-distorted verdict.
func TestProfileServerTimingsAgainstMockCommand(t *testing.T) {
	base, _, _ := startMockCmd(t, "--ttft", "4", "--itl", "1", "--server-timings", "vllm")
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--url", base, "--endpoint-type", "chat", "--isl", "32", "--osl", "4",
		"--request-count", "12", "--concurrency", "2", "--artifact-dir", art)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, lastLines(errOut, 8))
	}
	var overheads, ttfts []float64
	for _, c := range readRecords[record.Client](t, filepath.Join(art, "client.jsonl")) {
		s := c.Server
		if !c.OK() || s.Source != record.ServerVLLM || !s.TTFT.Known || s.TTFT.D < 4*time.Millisecond {
			t.Fatalf("record %s: ok %v (%s), server data %+v; want vLLM's with a TTFT >= 4ms", c.RequestID, c.OK(), c.Error, s)
		}
		q := metric.Of(&c, metric.Options{})
		o, ok := metric.ClientOverhead(&q)
		if !ok {
			t.Fatalf("record %s: no client overhead", c.RequestID)
		}
		overheads, ttfts = append(overheads, o), append(ttfts, metric.MS(q.TTFT))
	}
	if len(overheads) != 12 {
		t.Fatalf("%d records, want 12", len(overheads))
	}
	slices.Sort(overheads)
	slices.Sort(ttfts)
	if med := overheads[6]; med < 0 || med >= ttfts[6] {
		t.Errorf("client overhead median %.3f ms: want >= 0 and below the TTFT median %.3f ms", med, ttfts[6])
	}
	var m record.Metrics
	b, err := os.ReadFile(filepath.Join(art, "metrics.json"))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{record.MetricServerTTFT, record.MetricClientOverhead, record.MetricServerDecodeTime} {
		if st, ok := m.Stat(name); !ok || st.Count != 12 {
			t.Errorf("metrics.json %s: %+v (present %v), want 12 values", name, st, ok)
		}
	}
	// A passing validity verdict is not printed; validity.json has it.
	v, err := os.ReadFile(filepath.Join(art, "validity.json"))
	if err != nil || !strings.Contains(string(v), `"client-distorted"`) || !strings.Contains(string(v), "client overhead p50") {
		t.Errorf("validity.json (%v) has no client-distorted verdict:\n%s", err, v)
	}
}
