package examples_test

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest"
)

// transcription is a speech-to-text gate against the in-process mock: clips of 4 ± 1 s,
// a transcript of 3 tokens a second of audio paced at 2 ms a token after 20 ms, so a
// request takes about 45 ms for 4 s of audio: RTFx near 90.
func transcription(itlMs string) perftest.Scenario {
	return perftest.Scenario{
		Name: "transcription",
		Mock: mockserver.Config{TTFT: distribution.MustSpec("fixed:20"), ITL: distribution.MustSpec("fixed:" + itlMs)},
		Config: loadgen.Config{
			Target:   loadgen.Target{API: loadgen.EndpointTranscriptions},
			Workload: loadgen.Workload{Media: loadgen.Media{AudioLength: distribution.MustSpec("normal:4,1")}, Seed: 5},
			Load:     loadgen.Load{Concurrency: 4},
			Stop:     loadgen.Stop{Requests: 60},
		},
	}
}

// TestTranscriptionGate gates a speech-to-text server on RTFx, AIPerf's audio seconds
// per second of processing: the fast server passes rtfx_p50>=20; one whose tokens take
// 40 ms (a request about 0.5 s for 4 s of audio, RTFx near 8) fails it, with the rule in
// the message. The server's audio token counts match the client's.
func TestTranscriptionGate(t *testing.T) {
	testutil.Long(t) // 7–16 s: make test stays under 10 minutes on a fresh 2-core machine
	t.Run("fast server passes", func(t *testing.T) {
		res := perftest.Run(t, transcription("2"))
		res.AssertErrorRate(t, 0)
		res.Assert(t, "rtfx_p50>=20", "audio_duration_p50>=3s")
		res.AssertTokenizerMatch(t)
	})
	t.Run("slow server fails", func(t *testing.T) {
		c := perftest.Capture(t, func(t testing.TB) {
			res := perftest.Run(t, transcription("40"))
			res.Assert(t, "rtfx_p50>=20")
		})
		if !c.Failed() || !strings.Contains(c.Text(), "rtfx") {
			t.Fatalf("the RTFx gate did not fail for a slow server (failed %v):\n%s", c.Failed(), c.Text())
		}
	})
}

// TestImageGenerationGate gates an image generation server on images per second: two
// 256×256 PNGs an answer after the mock's 20 ms per image (about 50 images/s per
// request) pass image_throughput_p50>=20 and fail image_throughput_p50>=200.
func TestImageGenerationGate(t *testing.T) {
	sc := perftest.Scenario{
		Name: "images",
		Mock: mockserver.Config{ImageLatency: distribution.MustSpec("fixed:20"), TTFT: distribution.MustSpec("fixed:0")},
		Config: loadgen.Config{
			Target:   loadgen.Target{API: loadgen.EndpointImages},
			Workload: loadgen.Workload{ExtraBody: map[string]any{"n": 2, "size": "256x256"}, Seed: 5},
			Load:     loadgen.Load{Concurrency: 2},
			Stop:     loadgen.Stop{Requests: 20},
		},
	}
	res := perftest.Run(t, sc)
	res.AssertErrorRate(t, 0)
	res.Assert(t, "image_throughput_p50>=20", "image_latency_p99<=1s")
	c := perftest.Capture(t, func(t testing.TB) { res.Assert(t, "image_throughput_p50>=200") })
	if !c.Failed() {
		t.Error("image_throughput_p50>=200 passed against a server making 50 images/s per request")
	}
}
