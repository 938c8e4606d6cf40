package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/record"
)

// AIPerf's image and audio flags run end to end against the mock: every request
// carries its images and clip, both sides count their tokens alike (tokenizer_match
// passes), and metrics.json reports image_tokens and audio_tokens.
func TestProfileImagesAndAudio(t *testing.T) {
	for _, stream := range []string{"true", "false"} {
		art := filepath.Join(t.TempDir(), "run")
		code, out, errOut := cli(t, "profile", "--mock", "--request-count", "12", "--concurrency", "3", "--osl", "4", "--streaming="+stream,
			"--image-width-mean", "320", "--image-width-stddev", "40", "--image-height-mean", "240", "--image-height-stddev", "30",
			"--image-format", "random", "--image-batch-size", "2",
			"--audio-length-mean", "1.5", "--audio-length-stddev", "0.3", "--audio-format", "mp3", "--audio-sample-rates", "16,44.1",
			"--audio-num-channels", "2", "--model", "Qwen/Qwen2.5-VL-7B-Instruct",
			"--artifact-dir", art, "--assert", "tokenizer_match", "--assert", "error_rate<=0")
		if code != ExitOK {
			t.Fatalf("stream=%s: exit %d\nstdout:\n%s\nstderr:\n%s", stream, code, out, errOut)
		}
		var m record.Metrics
		readJSON(t, filepath.Join(art, "metrics.json"), &m)
		img, ok1 := m.Stat("image_tokens")
		aud, ok2 := m.Stat("audio_tokens")
		// 2 images of about 320 x 240 (12 x 9 cells + 2 each); 1.5 s clips (~38 tokens).
		if !ok1 || !ok2 || img.Count != 12 || aud.Count != 12 || img.Avg < 150 || img.Avg > 300 || aud.Avg < 20 || aud.Avg > 60 {
			t.Errorf("stream=%s: image_tokens %+v (%v), audio_tokens %+v (%v)", stream, img, ok1, aud, ok2)
		}
	}
}

func TestProfileMediaFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--image-width-mean", "100"}, "give both"},
		{[]string{"--image-width-stddev", "10"}, "need --image-width-mean"},
		{[]string{"--audio-length-stddev", "1"}, "needs --audio-length-mean"},
		{[]string{"--audio-length-mean", "1", "--audio-depths", "24"}, "only 16-bit"},
		{[]string{"--audio-length-mean", "1", "--audio-sample-rates", "fast"}, `"fast" is not a sample rate`},
		{[]string{"--audio-length-mean", "1", "--audio-format", "mp3", "--audio-sample-rates", "17"}, "mp3 sample rate 17000"},
		{[]string{"--audio-length-mean", "1", "--audio-num-channels", "3"}, "want 1 or 2"},
		{[]string{"--image-width-mean", "100", "--image-height-mean", "100", "--image-format", "gif"}, `image_format "gif"`},
		{[]string{"--image-width-mean", "100", "--image-height-mean", "100", "--endpoint-type", "completions"}, "cannot carry them"},
		{[]string{"--image-format", "jpeg"}, "no images to apply them to"},
	} {
		code, _, errOut := cli(t, append([]string{"profile", "--mock", "--request-count", "1", "--artifact-dir", filepath.Join(t.TempDir(), "r")}, c.args...)...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", c.args, code, errOut, c.want)
		}
	}
}
