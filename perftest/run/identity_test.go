package run

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/record"
)

// TestProbesNotCounted: the requests Run sends besides the load (GET /v1/models before
// it, GET /version after it) are no workload: the mock's recording, its rejected
// requests and its summary hold the run's N requests exactly, numbered 1 to N. The
// mock answers /version as vLLM does, and the run's identity keeps the answer.
func TestProbesNotCounted(t *testing.T) {
	const n = 1000
	dir := t.TempDir()
	out, err := Run(context.Background(), quickScenario(1, n), dir)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := out.ServerRecords()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, r := range recs {
		if r.Endpoint != "/v1/chat/completions" || r.Seq < 1 || r.Seq > n || seen[r.Seq] {
			t.Errorf("server record %s #%d; want the load's chat requests, numbered 1 to %d", r.Endpoint, r.Seq, n)
		}
		seen[r.Seq] = true
	}
	if len(recs) != n {
		t.Errorf("the mock recorded %d requests for a run of %d", len(recs), n)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ServerFile+mockserver.RejectedSuffix)); err != nil || len(b) != 0 {
		t.Errorf("rejected requests: %q, %v; want none", b, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ServerFile+".summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum record.ServerSummary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.TotalRequests != n || sum.Answered != n || sum.Recorded != n || len(sum.Rejected) != 0 {
		t.Errorf("the mock's summary: total %d, answered %d, recorded %d, rejected %v; want %d, %d, %d and none",
			sum.TotalRequests, sum.Answered, sum.Recorded, sum.Rejected, n, n, n)
	}
	if len(out.Pins.Servers) != 1 || out.Pins.Servers[0].Version != `{"version":"perfgate-mock"}` {
		t.Errorf("server identity %+v; want the version the mock answers", out.Pins.Servers)
	}
}

// --reset-kv-cache posts to each target's /reset_prefix_cache; a reset_url wins.
func TestResetURLs(t *testing.T) {
	got := resetURLs(validity.Config{ResetKVCache: true}, []string{"http://a:8000/v1", "https://b/v1/chat/completions"})
	if strings.Join(got, " ") != "http://a:8000/reset_prefix_cache https://b/reset_prefix_cache" {
		t.Errorf("resetURLs = %v", got)
	}
	if got := resetURLs(validity.Config{ResetKVCache: true, ResetURL: "http://x/r"}, []string{"http://a"}); len(got) != 1 || got[0] != "http://x/r" {
		t.Errorf("with reset_url: %v", got)
	}
	if got := resetURLs(validity.Config{}, []string{"http://a"}); got != nil {
		t.Errorf("neither: %v", got)
	}
}
