package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/record"
)

// startMockCmd runs `perfgate mock` with args on a free port, recording into recFile,
// and returns its base URL and stop, which stops it (its recording is then complete;
// the test's end stops it too).
func startMockCmd(t *testing.T, args ...string) (base, recFile string, stop func()) {
	t.Helper()
	port := freePort(t)
	recFile = filepath.Join(t.TempDir(), "server.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var out, errOut bytes.Buffer
	go func() {
		done <- runWith(ctx, append([]string{"mock", "--port", fmt.Sprint(port), "--record-requests", recFile}, args...), nil, &out, &errOut)
	}()
	base = fmt.Sprintf("http://127.0.0.1:%d", port)
	for i := 0; ; i++ {
		resp, err := http.Get(base + "/v1/models")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 200 {
			cancel()
			t.Fatalf("mock never answered: %v (stderr %s)", err, errOut.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case c := <-done:
				if c != ExitOK {
					t.Errorf("mock exited %d; stderr: %s", c, errOut.String())
				}
			case <-time.After(60 * time.Second):
				t.Error("mock did not stop after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return base, recFile, stop
}

// `perfgate profile --endpoint-type audio_transcription` against `perfgate mock`,
// streamed and whole: every request's clip (from a scenario file's audio_length) is
// recorded by both sides, and RTFx and the audio duration reach metrics.json and the
// console.
func TestProfileTranscriptionAgainstMockCommand(t *testing.T) {
	base, recFile, stop := startMockCmd(t, "--ttft", "2", "--itl", "1")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sc.yaml")
	if err := os.WriteFile(cfg, []byte("audio_length: fixed:2\naudio_format: mp3\naudio_sample_rates: [16000]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, stream := range []string{"true", "false"} {
		art := filepath.Join(dir, "run-"+stream)
		code, out, errOut := cli(t, "profile", "--url", base, "--endpoint-type", "audio_transcription", "--config", cfg, "--streaming="+stream,
			"--request-count", "6", "--concurrency", "2", "--extra-inputs", "language:en", "--artifact-dir", art)
		if code != ExitOK {
			t.Fatalf("streaming=%s: exit %d\nstdout:\n%s\nstderr:\n%s", stream, code, out, lastLines(errOut, 8))
		}
		n += 6
		if !strings.Contains(out, "RTFx") {
			t.Errorf("streaming=%s: the console summary has no RTFx row:\n%s", stream, out)
		}
		client := readRecords[record.Client](t, filepath.Join(art, "client.jsonl"))
		for _, c := range client {
			// 2 s of 16 kHz MP3 is whole 576-sample frames: 2.016 s.
			if !c.OK() || c.AudioDuration != 2016*time.Millisecond || c.Stream != (stream == "true") || c.OSL != 6 {
				t.Errorf("streaming=%s: record %s: ok %v (%s), audio %v, stream %v, OSL %d; want 2.016 s, OSL 6 (3 tokens a second)",
					stream, c.RequestID, c.OK(), c.Error, c.AudioDuration, c.Stream, c.OSL)
			}
		}
		var m record.Metrics
		b, err := os.ReadFile(filepath.Join(art, "metrics.json"))
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil {
			t.Fatal(err)
		}
		if st, ok := m.Stat(record.MetricRTFx); !ok || st.Count != 6 || !(st.Min > 0) {
			t.Errorf("streaming=%s: rtfx %+v (present %v); want 6 positive values", stream, st, ok)
		}
	}
	// AIPerf's flags and --audio-dir reach the clips: a directory's one 1 s WAV file.
	clips := t.TempDir()
	var wav bytes.Buffer
	if err := media.EncodeAudio(&wav, media.WAV, 16000, 1, time.Second, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clips, "one.wav"), wav.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(dir, "run-dir")
	code, out, errOut := cli(t, "profile", "--url", base, "--endpoint-type", "audio_transcription", "--audio-dir", clips,
		"--request-count", "3", "--artifact-dir", art)
	if code != ExitOK {
		t.Fatalf("--audio-dir: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, lastLines(errOut, 8))
	}
	for _, c := range readRecords[record.Client](t, filepath.Join(art, "client.jsonl")) {
		if !c.OK() || c.AudioDuration != time.Second {
			t.Errorf("--audio-dir: record %s: ok %v (%s), audio %v; want the file's 1 s", c.RequestID, c.OK(), c.Error, c.AudioDuration)
		}
	}
	stop()
	server := readRecords[record.Server](t, recFile)
	if len(server) != n+3 {
		t.Fatalf("server recorded %d requests, want %d", len(server), n+3)
	}
	for _, s := range server[:n] {
		if s.Endpoint != "/v1/audio/transcriptions" || s.Status != 200 || s.AudioSeconds != 2.016 {
			t.Errorf("server record %+v; want a 2.016 s clip answered at /v1/audio/transcriptions", s)
		}
	}
}

// `perfgate profile --endpoint-type image_generation` against `perfgate mock
// --image-latency`: n images per answer (--extra-inputs), counted into image_throughput,
// each request at least n × the latency.
func TestProfileImagesAgainstMockCommand(t *testing.T) {
	base, recFile, stop := startMockCmd(t, "--image-latency", "10")
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--url", base, "--endpoint-type", "image_generation", "--request-count", "4", "--concurrency", "2",
		"--extra-inputs", "n:2", "--extra-inputs", "size:96x64", "--artifact-dir", art)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, lastLines(errOut, 8))
	}
	if !strings.Contains(out, "Image Throughput") {
		t.Errorf("the console summary has no Image Throughput row:\n%s", out)
	}
	for _, c := range readRecords[record.Client](t, filepath.Join(art, "client.jsonl")) {
		if !c.OK() || c.Images != 2 || c.Done-c.Sent < 20*time.Millisecond {
			t.Errorf("record %s: ok %v (%s), %d images in %v; want 2 after at least 20 ms", c.RequestID, c.OK(), c.Error, c.Images, c.Done-c.Sent)
		}
	}
	stop()
	server := readRecords[record.Server](t, recFile)
	if len(server) != 4 || server[0].ImagesGenerated != 2 || server[0].Endpoint != "/v1/images/generations" {
		t.Errorf("server records %+v; want 4 of 2 images at /v1/images/generations", server)
	}
}
