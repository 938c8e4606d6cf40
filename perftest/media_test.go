package perftest

import (
	"runtime"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/record"
)

// TestMultimodalAtSeedSize is the seed-size rule for multimodal runs: 5,000 chat
// requests, each with a synthetic image (PNG or JPEG, about 128 × 96) and a WAV clip,
// through the mock, streamed. Every request is recorded by both sides with the same
// image and audio tokens, tokenizer_match holds, and the heap after request 5,000 is
// within a bound of the heap after request 1,000: images and clips are made when a
// request is built and dropped with it (4,000 held bodies of ~50 KB would be 200 MB).
func TestMultimodalAtSeedSize(t *testing.T) {
	n := 5000
	if testutil.Short() {
		n = 1200
	}
	var heap1k, heapEnd uint64
	seen := 0
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	start := time.Now()
	res := Run(t, Scenario{
		Name: "multimodal-seed-size",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{
				ISL: distribution.MustSpec("fixed:32"), OSL: distribution.MustSpec("fixed:4"), IgnoreEOS: true, Seed: 24,
				Media: loadgen.Media{
					ImageWidth: distribution.MustSpec("normal:128,16"), ImageHeight: distribution.MustSpec("normal:96,16"), ImageFormat: "random",
					AudioLength: distribution.MustSpec("normal:0.5,0.1"), AudioSampleRates: []int{8000, 16000},
				},
			},
			Load: loadgen.Load{Concurrency: 16},
			Stop: loadgen.Stop{Requests: n},
		},
	}, run.OnRecord(func(record.Client) {
		seen++
		switch seen {
		case 1000:
			heap1k = heap()
		case n:
			heapEnd = heap()
		}
	}))
	elapsed := time.Since(start)
	res.RequireTokenizerMatch(t)
	cs, err := res.Records()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := res.ServerRecords()
	if err != nil {
		t.Fatal(err)
	}
	srv := make(map[string]record.Server, len(ss))
	for _, s := range ss {
		srv[s.RequestID] = s
	}
	if len(cs) != n || len(ss) != n {
		t.Fatalf("%d client and %d server records, want %d each", len(cs), len(ss), n)
	}
	var images, audio int
	for _, c := range cs {
		s, ok := srv[c.RequestID]
		switch {
		case !c.OK():
			t.Fatalf("%s failed: %s %s", c.RequestID, c.ErrorKind, c.Error)
		case !ok:
			t.Fatalf("%s has no server record", c.RequestID)
		case c.ImageTokens == 0 || c.AudioTokens == 0 || s.ImageTokens != c.ImageTokens || s.AudioTokens != c.AudioTokens || s.ISL != c.ISLTemplate:
			t.Fatalf("%s: client image/audio/ISL %d/%d/%d, server %d/%d/%d", c.RequestID, c.ImageTokens, c.AudioTokens, c.ISLTemplate, s.ImageTokens, s.AudioTokens, s.ISL)
		}
		images += c.ImageTokens
		audio += c.AudioTokens
	}
	growth := int64(heapEnd) - int64(heap1k)
	t.Logf("%d multimodal requests in %v; %d image and %d audio tokens; heap after request 1000: %.1f MB, after %d: %.1f MB (growth %+.1f MB)",
		n, elapsed.Round(time.Millisecond), images, audio, float64(heap1k)/1e6, n, float64(heapEnd)/1e6, float64(growth)/1e6)
	if heap1k == 0 || heapEnd == 0 {
		t.Fatal("the heap was not sampled")
	}
	if growth > 24<<20 {
		t.Errorf("the heap grew by %.1f MB from request 1000 to %d: media are held", float64(growth)/1e6, n)
	}
}
