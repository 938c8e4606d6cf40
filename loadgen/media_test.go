package loadgen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/record"
)

// Images and audio through the mock, whole and streamed: every request succeeds, the
// server counts the same image and audio tokens as the client, and its usage
// prompt_tokens (text + media) equals the client's templated count plus media.
func TestMediaAgainstMock(t *testing.T) {
	s := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:1"), ITL: spec(t, "fixed:1")})
	for _, c := range []struct {
		name string
		m    Media
	}{
		{"png", Media{ImageWidth: spec(t, "normal:300,80"), ImageHeight: spec(t, "normal:200,50")}},
		{"jpeg batch", Media{ImageWidth: spec(t, "fixed:640"), ImageHeight: spec(t, "fixed:480"), ImageFormat: "jpeg", ImageBatchSize: 2}},
		{"random", Media{ImageWidth: spec(t, "uniform:10,900"), ImageHeight: spec(t, "uniform:10,900"), ImageFormat: "random"}},
		{"wav", Media{AudioLength: spec(t, "normal:2,0.5"), AudioSampleRates: []int{16000, 44100}, AudioChannels: 2}},
		{"mp3 and image", Media{AudioLength: spec(t, "fixed:1.3"), AudioFormat: "mp3", AudioSampleRates: []int{22050}, AudioBatchSize: 2,
			ImageWidth: spec(t, "fixed:56"), ImageHeight: spec(t, "fixed:56")}},
	} {
		for _, stream := range []bool{true, false} {
			t.Run(c.name+map[bool]string{true: " stream", false: " whole"}[stream], func(t *testing.T) {
				before := len(s.Records())
				out, err := Run(context.Background(), Config{
					Target:   Target{URLs: []string{s.BaseURL()}, NoStream: !stream},
					Workload: Workload{ISL: spec(t, "fixed:20"), OSL: spec(t, "fixed:4"), IgnoreEOS: true, Media: c.m, Seed: 5},
					Load:     Load{Concurrency: 2},
					Stop:     Stop{Requests: 6},
				}, gpt2(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 500 && len(s.Records()) < before+6; i++ {
					time.Sleep(2 * time.Millisecond) // a record is written just after its response
				}
				srv := map[string]int{}
				for _, r := range s.Records()[before:] {
					srv[r.RequestID] = r.ImageTokens*1000000 + r.AudioTokens
					if r.ISL != r.TextISL+r.ImageTokens+r.AudioTokens {
						t.Errorf("server ISL %d != text %d + image %d + audio %d", r.ISL, r.TextISL, r.ImageTokens, r.AudioTokens)
					}
				}
				for _, r := range out.Records {
					if !r.OK() {
						t.Fatalf("request failed: %s %s", r.ErrorKind, r.Error)
					}
					if r.ImageTokens+r.AudioTokens == 0 {
						t.Errorf("%s: no media tokens counted", r.RequestID)
					}
					if r.UsagePromptTokens != r.ISLTemplate {
						t.Errorf("%s: usage prompt_tokens %d, client's count %d (image %d, audio %d)", r.RequestID, r.UsagePromptTokens, r.ISLTemplate, r.ImageTokens, r.AudioTokens)
					}
					if got, ok := srv[r.RequestID]; !ok || got != r.ImageTokens*1000000+r.AudioTokens {
						t.Errorf("%s: server image/audio tokens %d/%d, client %d/%d", r.RequestID, got/1000000, got%1000000, r.ImageTokens, r.AudioTokens)
					}
				}
			})
		}
	}
}

// Images from a directory are read, inlined and counted from their headers; a file
// that is not an image is refused before the run.
func TestMediaImageDir(t *testing.T) {
	dir := t.TempDir()
	for i, sz := range [][2]int{{100, 50}, {700, 900}} {
		f, _ := os.Create(filepath.Join(dir, []string{"a.png", "b.jpg"}[i]))
		media.EncodeImage(f, []media.ImageFormat{media.PNG, media.JPEG}[i], sz[0], sz[1], 1)
		f.Close()
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("skipped"), 0o644)
	s := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:1"), ITL: spec(t, "fixed:1")})
	cfg := Config{
		Target:   Target{URLs: []string{s.BaseURL()}},
		Workload: Workload{ISL: spec(t, "fixed:10"), OSL: spec(t, "fixed:2"), Media: Media{ImageDir: dir, ImageBatchSize: 3}},
		Stop:     Stop{Requests: 5},
	}
	out, err := Run(context.Background(), cfg, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := media.Qwen2VL.Tokens(100, 50)
	b, _ := media.Qwen2VL.Tokens(700, 900)
	for _, r := range out.Records {
		if !r.OK() || r.UsagePromptTokens != r.ISLTemplate || (r.ImageTokens-3*a)%(b-a) != 0 {
			t.Errorf("%s: ok %v, usage %d, client %d, image tokens %d (of 3 images of %d or %d)", r.RequestID, r.OK(), r.UsagePromptTokens, r.ISLTemplate, r.ImageTokens, a, b)
		}
	}
	os.WriteFile(filepath.Join(dir, "c.png"), []byte("not a png"), 0o644)
	if _, err := Run(context.Background(), cfg, gpt2(t), nil); err == nil || !strings.Contains(err.Error(), "c.png") {
		t.Errorf("a corrupt image in image_dir: %v, want an error naming c.png", err)
	}
}

func TestMediaConfigRefusals(t *testing.T) {
	for _, c := range []struct {
		m    Media
		api  Endpoint
		want string
	}{
		{Media{ImageWidth: spec(t, "fixed:10")}, "", "set both or neither"},
		{Media{ImageWidth: spec(t, "fixed:10"), ImageHeight: spec(t, "fixed:10"), ImageFormat: "gif"}, "", `image_format "gif"`},
		{Media{ImageWidth: spec(t, "fixed:20000"), ImageHeight: spec(t, "fixed:10")}, "", "image_width fixed:20000: mean 20000 pixels exceeds 16384"},
		{Media{AudioLength: spec(t, "fixed:1"), AudioFormat: "mp3", AudioSampleRates: []int{16001}}, "", "mp3 sample rate 16001"},
		{Media{AudioLength: spec(t, "fixed:1"), AudioFormat: "ogg"}, "", `audio_format "ogg"`},
		{Media{AudioLength: spec(t, "fixed:1"), AudioBatchSize: 100}, "", "audio_batch_size 100"},
		{Media{AudioLength: spec(t, "fixed:1")}, EndpointCompletions, `endpoint "completions" cannot carry them`},
		{Media{ImageDir: "/nonexistent-dir"}, "", "image_dir"},
	} {
		cfg := Config{Target: Target{URLs: []string{"http://127.0.0.1:1/v1"}, API: c.api}, Workload: Workload{Media: c.m}, Stop: Stop{Requests: 1}}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.m, err, c.want)
		}
	}
}

// Images named by input files are sent: a ShareGPT (LLaVA) conversation's "image"
// paths, relative to the file, read and inlined, with the "<image>" marker taken out
// of the text; a payload's image_url file path, inlined; a data URI, passed through.
// Both sides count the same tokens. A payload whose image file is missing is
// recorded as failed (invalid_body) and not sent.
func TestMediaFromInputFiles(t *testing.T) {
	dir := t.TempDir()
	writeImage := func(name string, f media.ImageFormat, w, h int) {
		fh, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		media.EncodeImage(fh, f, w, h, 3)
		fh.Close()
	}
	os.Mkdir(filepath.Join(dir, "img"), 0o755)
	writeImage("img/cat.png", media.PNG, 300, 200)
	writeImage("dog.jpg", media.JPEG, 640, 480)
	uri, _ := media.AppendImageDataURI(nil, media.PNG, 56, 56, 1)
	sharegpt := filepath.Join(dir, "llava.jsonl")
	os.WriteFile(sharegpt, []byte(`{"id":"a","image":"img/cat.png","conversations":[{"from":"human","value":"<image>\nWhat is this?"},{"from":"gpt","value":"A cat."}]}
{"id":"b","images":["dog.jpg","`+string(uri)+`"],"conversations":[{"from":"human","value":"Compare <image> and <image>."},{"from":"gpt","value":"Two animals."}]}
`), 0o644)
	payloads := filepath.Join(dir, "payloads.jsonl")
	os.WriteFile(payloads, []byte(`{"model":"m","max_tokens":3,"messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"img/cat.png"}}]}]}
{"model":"m","max_tokens":3,"messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":"file://`+filepath.Join(dir, "dog.jpg")+`"}]}]}
{"model":"m","max_tokens":3,"messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"missing.png"}}]}]}
`), 0o644)
	cat, _ := media.Qwen2VL.Tokens(300, 200)
	dog, _ := media.Qwen2VL.Tokens(640, 480)
	small, _ := media.Qwen2VL.Tokens(56, 56)
	s := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:1"), ITL: spec(t, "fixed:1")})
	for _, c := range []struct {
		file, format string
		want         map[int]int // request index → image tokens; -1 = failed, not sent
	}{
		{sharegpt, FormatShareGPT, map[int]int{0: cat, 1: dog + small}},
		{payloads, FormatPayloads, map[int]int{0: cat, 1: dog, 2: -1}},
	} {
		before := len(s.Records())
		out, err := Run(context.Background(), Config{
			Target:   Target{URLs: []string{s.BaseURL()}},
			Workload: Workload{InputFile: c.file, InputFormat: c.format, OSL: spec(t, "fixed:3")},
		}, gpt2(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Records) != len(c.want) {
			t.Fatalf("%s: %d records, want %d", c.format, len(out.Records), len(c.want))
		}
		sent := 0
		for _, r := range out.Records {
			want := c.want[r.Index]
			switch {
			case want < 0:
				if r.ErrorKind != record.ErrInvalidBody || !strings.Contains(r.Error, "missing.png") {
					t.Errorf("%s %s: %s %q, want invalid_body naming missing.png", c.format, r.RequestID, r.ErrorKind, r.Error)
				}
			case !r.OK() || r.ImageTokens != want || r.UsagePromptTokens != r.ISLTemplate:
				t.Errorf("%s %s: ok %v (%s), image tokens %d (want %d), usage %d, client %d", c.format, r.RequestID, r.OK(), r.Error, r.ImageTokens, want, r.UsagePromptTokens, r.ISLTemplate)
			default:
				sent++
			}
		}
		for i := 0; i < 500 && len(s.Records()) < before+sent; i++ {
			time.Sleep(2 * time.Millisecond)
		}
		if got := len(s.Records()) - before; got != sent {
			t.Errorf("%s: the server received %d requests, want %d (a request whose body could not be built is not sent)", c.format, got, sent)
		}
	}
}

// A payload whose image_url names a file is inlined once and the same body reused when
// the payload is sent again (a cycled input file): the image is read once. Past the
// cache's budget, each send inlines again, with the same result, and nothing is kept.
func TestInlinePayloadCached(t *testing.T) {
	dir := t.TempDir()
	fh, err := os.Create(filepath.Join(dir, "cat.png"))
	if err != nil {
		t.Fatal(err)
	}
	media.EncodeImage(fh, media.PNG, 64, 48, 3)
	fh.Close()
	reads := 0
	saved := readInlineImage
	readInlineImage = func(p string) ([]byte, error) { reads++; return saved(p) }
	t.Cleanup(func() { readInlineImage = saved })
	body := []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"cat.png"}}]}]}`)
	for _, budget := range []int{inlineCacheBytes, 16} {
		reads = 0
		d := &mediaDrawer{base: dir}
		d.inlined.budget = budget
		var outs [][]byte
		for range 3 {
			out, ok, err := d.inline(append([]byte(nil), body...)) // read anew each time, as a streamed file is
			if !ok || err != nil || !bytes.Contains(out, []byte(`"url":"data:image/png;base64,`)) {
				t.Fatalf("budget %d: inline = %.60q, %v, %v; want the image as a data URI", budget, out, ok, err)
			}
			outs = append(outs, out)
		}
		if !bytes.Equal(outs[0], outs[2]) {
			t.Errorf("budget %d: the body inlined again differs", budget)
		}
		switch want := map[bool]int{true: 1, false: 3}[budget == inlineCacheBytes]; {
		case reads != want:
			t.Errorf("budget %d: the image was read %d times for 3 sends; want %d", budget, reads, want)
		case d.inlined.size > budget:
			t.Errorf("budget %d: the cache holds %d bytes", budget, d.inlined.size)
		}
	}
}
