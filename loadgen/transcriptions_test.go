package loadgen

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/record"
)

// Speech transcription through the mock, streamed and whole: every request sends a
// clip of the drawn duration, the transcript (3 tokens a second of audio, the mock's
// default) is the output, usage counts the audio by the shared rule, and RTFx and the
// audio duration are reported.
func TestTranscriptionAgainstMock(t *testing.T) {
	s := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:2"), ITL: spec(t, "fixed:1")})
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "whole"}[stream], func(t *testing.T) {
			out, err := Run(context.Background(), Config{
				Target:   Target{URLs: []string{s.BaseURL()}, API: EndpointTranscriptions, NoStream: !stream},
				Workload: Workload{Media: Media{AudioLength: spec(t, "fixed:4"), AudioFormat: "wav", AudioSampleRates: []int{8000, 16000}}, ExtraBody: map[string]any{"language": "en"}},
				Load:     Load{Concurrency: 2},
				Stop:     Stop{Requests: 6},
			}, gpt2(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			wantIn := media.WhisperAudio.Tokens(4 * time.Second)
			for _, r := range out.Records {
				if !r.OK() || r.Endpoint != string(EndpointTranscriptions) || r.Stream != stream {
					t.Fatalf("record %s: ok %v (%s %s), endpoint %q, stream %v", r.RequestID, r.OK(), r.ErrorKind, r.Error, r.Endpoint, r.Stream)
				}
				if r.AudioDuration != 4*time.Second || r.OSL != 12 || r.UsageCompletionTokens != 12 || r.UsagePromptTokens != wantIn || r.AudioTokens != wantIn || r.ISL != 0 || r.ISLTemplate != wantIn {
					t.Errorf("record %s: audio %v, OSL %d, usage %d/%d, audio tokens %d, ISL %d; want 4s, 12, usage %d/12, %d audio tokens, ISL 0",
						r.RequestID, r.AudioDuration, r.OSL, r.UsagePromptTokens, r.UsageCompletionTokens, r.AudioTokens, r.ISL, wantIn, wantIn)
				}
				if first, _ := r.FirstToken(); stream && (first <= r.Sent || first >= r.Done || len(r.Chunks) < 12) {
					t.Errorf("record %s: first token %v, sent %v, done %v, %d chunks; want a paced stream", r.RequestID, first, r.Sent, r.Done, len(r.Chunks))
				}
			}
			rtfx, ok := out.Metrics.Stat(record.MetricRTFx)
			if lat, _ := out.Metrics.Stat(record.MetricRequestLatency); !ok || rtfx.Count != 6 || rtfx.Max > 4000/lat.Min+1e-9 || rtfx.Min <= 0 {
				t.Errorf("rtfx %+v; want 6 values, each 4 s / latency", rtfx)
			}
			if d, ok := out.Metrics.Stat(record.MetricAudioDuration); !ok || d.Avg != 4 {
				t.Errorf("audio_duration %+v; want avg 4 s", d)
			}
			if _, ok := out.Metrics.Scalars[record.MetricAudioThroughput]; !ok {
				t.Error("no audio_throughput")
			}
		})
	}
	s.Close()
	for _, r := range s.Records() {
		if r.AudioSeconds != 4 || r.AudioTokens != media.WhisperAudio.Tokens(4*time.Second) || r.TextISL != 0 {
			t.Errorf("server record %+v; want 4 s of audio, its tokens, no text", r)
		}
	}
}

// A directory of clips is sent, a file drawn per request; a directory without clips,
// or with a broken one, is refused before any request.
func TestTranscriptionAudioDir(t *testing.T) {
	dir := t.TempDir()
	for i, d := range []time.Duration{time.Second, 2 * time.Second} {
		var b bytes.Buffer
		f := []media.AudioFormat{media.WAV, media.MP3}[i]
		if err := media.EncodeAudio(&b, f, 16000, 1, d, 1); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, []string{"a.wav", "b.mp3"}[i]), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := startMock(t, mockserver.Config{Fast: true})
	cfg := Config{Target: Target{URLs: []string{s.BaseURL()}, API: EndpointTranscriptions, NoStream: true},
		Workload: Workload{Media: Media{AudioDir: dir}}, Load: Load{Concurrency: 1}, Stop: Stop{Requests: 8}}
	out, err := Run(context.Background(), cfg, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Duration]int{}
	for i, r := range out.Records {
		seen[r.AudioDuration]++
		if !r.OK() || r.AudioTokens != media.WhisperAudio.Tokens(r.AudioDuration) {
			t.Errorf("record %d: ok %v (%s), audio %v, %d tokens", i, r.OK(), r.Error, r.AudioDuration, r.AudioTokens)
		}
	}
	// MP3: whole 576-sample frames at 16 kHz.
	if len(seen) != 2 || seen[time.Second] == 0 || seen[2016*time.Millisecond] == 0 {
		t.Errorf("clip durations sent %v; want both files' (1 s, 2.016 s)", seen)
	}
	empty := t.TempDir()
	bad := t.TempDir()
	_ = os.WriteFile(filepath.Join(bad, "x.wav"), []byte("RIFF....WAVEjunk"), 0o644)
	for _, d := range []string{empty, bad, filepath.Join(empty, "missing")} {
		cfg.AudioDir = d
		if _, err := Run(context.Background(), cfg, gpt2(t), nil); err == nil || !strings.Contains(err.Error(), "audio_dir") {
			t.Errorf("dir %s: error %v; want one naming audio_dir", d, err)
		}
	}
}

// A transcription sends one clip and no image: other media settings are refused by
// Validate, naming them.
func TestTranscriptionMediaValidate(t *testing.T) {
	for _, c := range []struct {
		m    Media
		want string
	}{
		{Media{ImageWidth: spec(t, "fixed:64"), ImageHeight: spec(t, "fixed:64")}, "image inputs go in chat"},
		{Media{AudioLength: spec(t, "fixed:1"), AudioBatchSize: 2}, "one audio clip per request"},
		{Media{AudioLength: spec(t, "fixed:1"), AudioDir: "x"}, "not both"},
		{Media{AudioFormat: "flac"}, "audio_format"},
	} {
		cfg := Config{Target: Target{URLs: []string{"http://127.0.0.1:1"}, API: EndpointTranscriptions}, Workload: Workload{Media: c.m}, Stop: Stop{Requests: 1}}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Validate = %v; want an error naming %q", c.m, err, c.want)
		}
	}
}

// Image generation through the mock: n images (from extra_body) per answer, counted
// into the record, image_throughput and total_image_throughput.
func TestImagesAgainstMock(t *testing.T) {
	s := startMock(t, mockserver.Config{ImageLatency: spec(t, "fixed:5"), TTFT: spec(t, "fixed:0")})
	out, err := Run(context.Background(), Config{
		Target:   Target{URLs: []string{s.BaseURL()}, API: EndpointImages},
		Workload: Workload{ExtraBody: map[string]any{"n": 2, "size": "64x32"}},
		Load:     Load{Concurrency: 2},
		Stop:     Stop{Requests: 4},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Records {
		if !r.OK() || r.Images != 2 || r.Stream || r.Done-r.Sent < 10*time.Millisecond {
			t.Errorf("record %s: ok %v (%s), images %d, stream %v, latency %v; want 2 images after 2 × 5 ms", r.RequestID, r.OK(), r.Error, r.Images, r.Stream, r.Done-r.Sent)
		}
	}
	if st, ok := out.Metrics.Stat(record.MetricImageThroughput); !ok || st.Count != 4 {
		t.Errorf("image_throughput %+v; want 4 values", st)
	}
	if _, ok := out.Metrics.Scalars[record.MetricTotalImageThroughput]; !ok {
		t.Error("no total_image_throughput")
	}
	s.Close()
	for _, r := range s.Records() {
		if r.ImagesGenerated != 2 || r.Endpoint != "/v1/images/generations" {
			t.Errorf("server record %+v; want 2 images at /v1/images/generations", r)
		}
	}
}

// An image answer without images, and a transcription without text, are malformed.
func TestMediaAnswersMalformed(t *testing.T) {
	for _, c := range []struct {
		e    Endpoint
		body string
	}{{EndpointImages, `{"created":1,"data":[]}`}, {EndpointImages, `{"created":1}`}, {EndpointTranscriptions, `{"usage":{"input_tokens":1}}`}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(c.body))
		}))
		out, err := Run(context.Background(), Config{Target: Target{URLs: []string{srv.URL}, API: c.e, NoStream: true},
			Load: Load{Concurrency: 1}, Stop: Stop{Requests: 1}}, gpt2(t), nil)
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r := out.Records[0]; r.ErrorKind != record.ErrMalformed {
			t.Errorf("%s answered %s: error kind %q (%s); want %q", c.e, c.body, r.ErrorKind, r.Error, record.ErrMalformed)
		}
	}
}

// At the seed's size, 5,000 transcriptions are each recorded by both sides, with the
// clip the client drew: the server's duration is the client's, request by request.
func TestTranscriptionAtScale(t *testing.T) {
	s := startMock(t, mockserver.Config{Fast: true})
	out, err := Run(context.Background(), Config{
		Target:   Target{URLs: []string{s.BaseURL()}, API: EndpointTranscriptions},
		Workload: Workload{Media: Media{AudioLength: spec(t, "normal:0.5,0.2"), AudioSampleRates: []int{8000, 16000}}, Seed: 9},
		Load:     Load{Concurrency: 16},
		Stop:     Stop{Requests: 5000},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	server := map[string]float64{}
	for _, r := range s.Records() {
		server[r.RequestID] = r.AudioSeconds
	}
	if len(out.Records) != 5000 || len(server) != 5000 {
		t.Fatalf("client recorded %d requests, server %d; want 5000 each", len(out.Records), len(server))
	}
	for _, r := range out.Records {
		sec, ok := server[r.RequestID]
		if !r.OK() || !ok || math.Abs(sec-r.AudioDuration.Seconds()) > 1e-9 {
			t.Fatalf("request %s: ok %v (%s), client audio %v, server %v s", r.RequestID, r.OK(), r.Error, r.AudioDuration, sec)
		}
	}
}

// A whole answer is parsed in one pass of openai.ChunkParser, which allocates nothing
// once warm: a second decode with encoding/json (as transcriptions once did for their
// text, and Responses and Anthropic messages for their output blocks) shows as
// allocations. The answers are the kinds' samples; the parsed text, images and usage
// are checked so that a pass that skips them fails too.
func TestWholeAnswerParsedOnce(t *testing.T) {
	for _, k := range kindSamples() {
		a := adapterOf(k.e)
		var p openai.ChunkParser
		var ch openai.StreamChunk
		res := &result{}
		body := []byte(k.whole)
		parse := func() {
			res.text, res.images = res.text[:0], 0
			if _, _, err := a.parseWhole(&p, body, &ch, res); err != nil {
				t.Fatalf("%s: %v", k.e, err)
			}
		}
		if allocs := testing.AllocsPerRun(50, parse); allocs != 0 {
			t.Errorf("%s: parsing a whole answer allocates %v times; want 0 (one pass, no encoding/json)", k.e, allocs)
		}
		switch k.e {
		case EndpointChat, EndpointCompletions, EndpointResponses, EndpointMessages:
			if string(res.text) != "hello world" {
				t.Errorf("%s: text %q; want \"hello world\"", k.e, res.text)
			}
		case EndpointTranscriptions:
			if string(res.text) != "hello world" || ch.Usage.PromptTokens != 20 || ch.Usage.CompletionTokens != 2 {
				t.Errorf("transcription: text %q, usage %+v; want \"hello world\", 20 in, 2 out", res.text, ch.Usage)
			}
		case EndpointImages:
			if res.images != 1 || ch.Usage.PromptTokens != 20 {
				t.Errorf("images: %d images, usage %+v; want 1, 20 in", res.images, ch.Usage)
			}
		}
	}
}

// An audio_dir's clips are read once for Validate and the run's start together, and
// again only when a clip changes.
func TestAudioDirReadOnce(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, d time.Duration) {
		var b bytes.Buffer
		if err := media.EncodeAudio(&b, media.WAV, 16000, 1, d, 1); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.wav", time.Second)
	write("b.wav", 2*time.Second)
	reads := 0
	saved := readAudioFile
	readAudioFile = func(p string) ([]byte, error) { reads++; return saved(p) }
	t.Cleanup(func() { readAudioFile = saved })

	cfg := Config{Target: Target{URLs: []string{"http://127.0.0.1:1"}, API: EndpointTranscriptions}, Workload: Workload{Media: Media{AudioDir: dir}}, Stop: Stop{Requests: 1}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := newMediaDrawer(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if reads != 2 || len(d.audioFiles) != 2 {
		t.Errorf("Validate and the drawer read %d clips for %d files; want each read once", reads, len(d.audioFiles))
	}
	write("b.wav", 3*time.Second) // another size: read again
	files, err := audioFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if reads != 4 || files[1].dur != 3*time.Second {
		t.Errorf("after b.wav changed: %d reads, its duration %v; want the directory read again (4 reads, 3s)", reads, files[1].dur)
	}
}
