package mockserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"math"
	"mime/multipart"
	"path/filepath"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/internal/testutil"
)

// testWAV is a WAV clip of seconds at rate Hz and channels, as the load generator
// makes them.
func testWAV(seconds float64, rate, channels int) []byte {
	var buf bytes.Buffer
	if err := media.EncodeAudio(&buf, media.WAV, rate, channels, time.Duration(seconds*float64(time.Second)), 1); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// transcriptionForm is a multipart body with the audio and the fields given.
func transcriptionForm(audio []byte, fields ...string) (string, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.SetBoundary("test-form-boundary-4f2a9c") // the same bytes each run: the mock's text depends on them
	for i := 0; i+1 < len(fields); i += 2 {
		_ = mw.WriteField(fields[i], fields[i+1])
	}
	if audio != nil {
		fw, _ := mw.CreateFormFile(openai.FormFile, "speech.wav")
		_, _ = fw.Write(audio)
	}
	_ = mw.Close()
	return buf.String(), mw.FormDataContentType()
}

// The official SDK reads the mock's transcription, whole and streamed: the text's
// length follows the audio's duration (3 tokens a second by default), usage counts
// the audio at 50 tokens a second, and the recording holds the duration.
func TestTranscriptionSDK(t *testing.T) {
	s := start(t, Config{Fast: true, APIKey: "sk-test"})
	tok := gpt2(t)
	client := oai.NewClient(option.WithBaseURL(s.BaseURL()), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	ctx := context.Background()
	const secs = 4.0
	wav := testWAV(secs, 16000, 1)
	params := oai.AudioTranscriptionNewParams{File: bytes.NewReader(wav), Model: "mock-model", Language: oai.String("en")}
	wantOut := int(secs * DefaultTranscriptTokensPerSecond)
	wantIn := int(secs * media.WhisperAudio.TokensPerSecond)

	resp, err := client.Audio.Transcriptions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	tr := resp.AsTranscription()
	if got := tok.Count(tr.Text, false); got != wantOut || tr.Usage.OutputTokens != int64(wantOut) || tr.Usage.InputTokens != int64(wantIn) || tr.Usage.Type != "tokens" {
		t.Errorf("whole: text %q (%d tokens), usage %+v; want %d output tokens, %v input", tr.Text, got, tr.Usage, wantOut, wantIn)
	}

	params.File = bytes.NewReader(wav)
	stream := client.Audio.Transcriptions.NewStreaming(ctx, params)
	var deltas strings.Builder
	var done oai.TranscriptionTextDoneEvent
	nDelta := 0
	for stream.Next() {
		switch ev := stream.Current().AsAny().(type) {
		case oai.TranscriptionTextDeltaEvent:
			deltas.WriteString(ev.Delta)
			nDelta++
		case oai.TranscriptionTextDoneEvent:
			done = ev
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if nDelta != wantOut || done.Text != deltas.String() || done.Usage.OutputTokens != int64(wantOut) || done.Usage.InputTokens != int64(wantIn) {
		t.Errorf("stream: %d deltas %q, done %q usage %+v; want %d deltas adding up to the done text, usage %d out", nDelta, deltas.String(), done.Text, done.Usage, wantOut, wantOut)
	}
	s.Close()
	recs := s.Records()
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for i, r := range recs {
		if r.Endpoint != openai.PathTranscriptions || r.AudioSeconds != secs || r.ISL != wantIn || r.OSL != wantOut || r.Stream != (i == 1) || r.Status != 200 {
			t.Errorf("record %d: %+v; want the transcription path, %gs of audio, ISL %v, OSL %d, stream %v", i, r, secs, wantIn, wantOut, i == 1)
		}
	}
}

// With the mock's OSL set, a transcript's length is OSL's draw, not the duration's;
// an MP3 clip's duration is read from its frames.
func TestTranscriptionOSLAndMP3(t *testing.T) {
	s := start(t, Config{Fast: true, OSL: distribution.MustSpec("fixed:7")})
	var mp3 bytes.Buffer
	if err := media.EncodeAudio(&mp3, media.MP3, 16000, 1, 2*time.Second, 1); err != nil {
		t.Fatal(err)
	}
	for _, clip := range [][]byte{testWAV(1, 8000, 2), mp3.Bytes()} {
		body, ct := transcriptionForm(clip, "model", "mock-model")
		resp, b := post(t, s.URL()+openai.PathTranscriptions, body, "Content-Type", ct)
		var tr openai.Transcription
		if resp.StatusCode != 200 || json.Unmarshal(b, &tr) != nil || tr.Usage == nil || tr.Usage.OutputTokens != 7 {
			t.Fatalf("status %d, body %s; want 200 and 7 output tokens", resp.StatusCode, b)
		}
	}
	s.Close()
	recs := s.Records()
	if len(recs) != 2 || recs[0].AudioSeconds != 1 || math.Abs(recs[1].AudioSeconds-2) > 0.04 {
		t.Errorf("records %+v; want 1 s of WAV and 2 s of MP3 (to a 36 ms frame)", recs)
	}
}

// Bad transcription requests are refused with a 400 naming the field.
func TestTranscriptionBadInput(t *testing.T) {
	s := start(t, Config{Fast: true})
	wav := testWAV(1, 16000, 1)
	truncated := wav[:len(wav)-100]
	for _, c := range []struct {
		name, body, ct, param, msg string
	}{
		{"json body", `{"model":"m"}`, "application/json", "Content-Type", "multipart/form-data"},
		{"no file", formOf(nil, "model", "mock-model"), "", "file", "file part"},
		{"not audio", formOf([]byte("hello, not audio"), "model", "mock-model"), "", "file", "RIFF"},
		{"truncated", formOf(truncated, "model", "mock-model"), "", "file", "truncated"},
		{"no model", formOf(wav), "", "model", "model"},
		{"format", formOf(wav, "model", "mock-model", "response_format", "srt"), "", "response_format", "srt"},
		{"stream", formOf(wav, "model", "mock-model", "stream", "maybe"), "", "stream", "true or false"},
		{"language", formOf(wav, "model", "mock-model", "language", "English"), "", "language", "ISO-639-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, ct := c.body, c.ct
			if ct == "" {
				body, ct = splitForm(body)
			}
			resp, b := post(t, s.URL()+openai.PathTranscriptions, body, "Content-Type", ct)
			var e struct {
				Error struct{ Message, Param string }
			}
			_ = json.Unmarshal(b, &e)
			if resp.StatusCode != 400 || e.Error.Param != c.param || !strings.Contains(e.Error.Message, c.msg) {
				t.Errorf("status %d, body %s; want 400 with param %q and a message naming %q", resp.StatusCode, b, c.param, c.msg)
			}
		})
	}
}

// formOf and splitForm carry a form and its Content-Type in one string through the
// table above.
func formOf(audio []byte, fields ...string) string {
	body, ct := transcriptionForm(audio, fields...)
	return ct + "\x00" + body
}

func splitForm(s string) (body, ct string) {
	ct, body, _ = strings.Cut(s, "\x00")
	return body, ct
}

// The official SDK reads the mock's generated images: n PNGs of the requested size,
// as base64 or data URLs, after the configured latency per image.
func TestImagesSDK(t *testing.T) {
	s := start(t, Config{ImageLatency: distribution.MustSpec("fixed:30"), TTFT: distribution.MustSpec("fixed:0"), ITL: distribution.MustSpec("fixed:0")})
	client := oai.NewClient(option.WithBaseURL(s.BaseURL()), option.WithMaxRetries(0))
	ctx := context.Background()
	t0 := time.Now()
	resp, err := client.Images.Generate(ctx, oai.ImageGenerateParams{Prompt: "a red fox in the snow", Model: "mock-model", N: oai.Int(2),
		Size: "256x128", ResponseFormat: oai.ImageGenerateParamsResponseFormatB64JSON})
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Data) != 2 || took < 60*time.Millisecond {
		t.Fatalf("%d images after %v; want 2 after at least 2 × 30 ms", len(resp.Data), took)
	}
	for _, d := range resp.Data {
		b, err := base64.StdEncoding.DecodeString(d.B64JSON)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != 256 || cfg.Height != 128 {
			t.Errorf("image: %v, %dx%d; want a 256x128 PNG", err, cfg.Width, cfg.Height)
		}
	}
	resp, err = client.Images.Generate(ctx, oai.ImageGenerateParams{Prompt: "a fox", Model: "mock-model", Size: "1024x1024", ResponseFormat: oai.ImageGenerateParamsResponseFormatURL})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Data) != 1 || !strings.HasPrefix(resp.Data[0].URL, "data:image/png;base64,") {
		t.Fatalf("url format: %+v; want one data: URL", resp.Data)
	}
	s.Close()
	recs := s.Records()
	if len(recs) != 2 || recs[0].ImagesGenerated != 2 || recs[1].ImagesGenerated != 1 || recs[0].Endpoint != openai.PathImages || recs[0].ISL == 0 {
		t.Errorf("records %+v; want 2 at %s with 2 and 1 images and the prompt's ISL", recs, openai.PathImages)
	}
}

// Bad image requests are refused with a 400 naming the field.
func TestImagesBadInput(t *testing.T) {
	s := start(t, Config{Fast: true})
	for _, c := range []struct{ body, param string }{
		{`{"model":"m"}`, "prompt"},
		{`{"model":"m","prompt":"x","n":11}`, "n"},
		{`{"model":"m","prompt":"x","n":0}`, "n"},
		{`{"model":"m","prompt":"x","size":"big"}`, "size"},
		{`{"model":"m","prompt":"x","size":"5000x10"}`, "size"},
		{`{"model":"m","prompt":"x","response_format":"gif"}`, "response_format"},
		{`{"model":"m","prompt":"x","output_format":"webp"}`, "output_format"},
		{`{"model":"m","prompt":"x","stream":true}`, "stream"},
		{`{"prompt":"x"}`, "model"},
	} {
		resp, b := post(t, s.URL()+openai.PathImages, c.body)
		var e struct {
			Error struct{ Param string }
		}
		_ = json.Unmarshal(b, &e)
		if resp.StatusCode != 400 || e.Error.Param != c.param {
			t.Errorf("%s: status %d, body %s; want 400 naming %q", c.body, resp.StatusCode, b, c.param)
		}
	}
	s.Close()
	if rej := s.RejectedRecords(); len(rej) != 9 {
		t.Errorf("%d rejected records, want 9", len(rej))
	}
}

// A transcription's exact bytes, streamed (delta events, then done with usage) and
// whole, pinned.
func TestTranscriptionGolden(t *testing.T) {
	s := start(t, Config{Fast: true, TokensPerChunk: 2})
	body, ct := transcriptionForm(testWAV(2, 16000, 1), "model", "whisper-mock", "stream", "true")
	resp, b := post(t, s.URL()+openai.PathTranscriptions, body, "Content-Type", ct, "X-Request-Id", "req-1")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != sse.ContentType {
		t.Fatalf("status %d, content type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	testutil.Golden(t, "testdata/transcription_stream.golden", b, *updateGolden)
	body, ct = transcriptionForm(testWAV(2, 16000, 1), "model", "whisper-mock")
	resp, b = post(t, s.URL()+openai.PathTranscriptions, body, "Content-Type", ct, "X-Request-Id", "req-2")
	if resp.StatusCode != 200 {
		t.Fatalf("whole: status %d: %s", resp.StatusCode, b)
	}
	testutil.Golden(t, "testdata/transcription_whole.golden", append(b, '\n'), *updateGolden)
}

// TestMultipartBodyAsSent: the server reads an upload's body as the client sent it. The
// text is drawn from a seed that hashes the body, so fresh servers given the same bytes
// answer the same; when fasthttp parsed the form itself, PostBody was the form marshalled
// again from a map, its five fields in a random order, and the answers differed. The
// capture server keeps the same bytes.
func TestMultipartBodyAsSent(t *testing.T) {
	body, ct := transcriptionForm(testWAV(1, 16000, 1), "model", "m", "language", "en", "prompt", "hello there",
		"temperature", "0", "response_format", "json")
	var first string
	for i := range 8 {
		s := start(t, Config{Fast: true})
		resp, b := post(t, s.URL()+openai.PathTranscriptions, body, "Content-Type", ct)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		if i == 0 {
			first = string(b)
		} else if string(b) != first {
			t.Fatalf("server %d answered %s, server 0 %s: the same body must draw the same text", i, b, first)
		}
		s.Close()
	}
	out := filepath.Join(t.TempDir(), "cap.jsonl")
	c, err := NewCapture(CaptureConfig{Out: out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	post(t, c.URL()+openai.PathTranscriptions, body, "Content-Type", ct)
	if caps := c.Captures(); len(caps) != 1 || string(caps[0].Body) != body {
		t.Errorf("capture holds %d requests; want the multipart body byte for byte", len(caps))
	}
}
