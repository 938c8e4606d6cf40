package metric

import (
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// RTFx and the image metrics: defined only for requests with audio or images, and
// derived from request latency; the run's audio and image throughputs from the sums.
func TestMediaMetrics(t *testing.T) {
	audio := record.Client{Status: 200, Sent: 0, Done: 2 * time.Second, AudioDuration: 10 * time.Second}
	images := record.Client{Status: 200, Sent: 0, Done: 500 * time.Millisecond, Images: 2}
	text := record.Client{Status: 200, Sent: 0, Done: time.Second}
	q := Of(&audio, Options{})
	if v, ok := q.RTFx(); !ok || v != 5 {
		t.Errorf("RTFx = %v, %v; want 5 (10 s of audio in 2 s)", v, ok)
	}
	q = Of(&images, Options{})
	if v, ok := q.ImageThroughput(); !ok || v != 4 {
		t.Errorf("image throughput = %v, %v; want 4 images/s", v, ok)
	}
	if v, ok := q.ImageLatency(); !ok || v != 250 {
		t.Errorf("image latency = %v, %v; want 250 ms/image", v, ok)
	}
	q = Of(&text, Options{})
	if _, ok := q.RTFx(); ok {
		t.Error("RTFx defined for a request without audio")
	}
	if _, ok := q.ImageThroughput(); ok {
		t.Error("image throughput defined for an answer without images")
	}

	a := NewAccumulator(Options{})
	for _, r := range []record.Client{audio, audio, text} {
		a.Add(&r)
	}
	m := a.Metrics()
	if s, ok := m.Stats["rtfx"]; !ok || s.Avg != 5 || s.Count != 2 {
		t.Errorf("rtfx stat %+v (present %v); want avg 5 over 2 requests", s, ok)
	}
	if s, ok := m.Scalars["audio_throughput"]; !ok || s.Value != 10 {
		t.Errorf("audio_throughput %+v (present %v); want 20 s of audio / 2 s = 10", s, ok)
	}
	if _, ok := m.Scalars["total_image_throughput"]; ok {
		t.Error("total_image_throughput reported for a run without images")
	}
}
