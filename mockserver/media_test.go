package mockserver

import (
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/record"
)

func imagePart(t *testing.T, f media.ImageFormat, w, h int) string {
	uri, err := media.AppendImageDataURI(nil, f, w, h, 1)
	if err != nil {
		t.Fatal(err)
	}
	return `{"type":"image_url","image_url":{"url":"` + string(uri) + `"}}`
}

func audioPart(t *testing.T, f media.AudioFormat, d time.Duration) string {
	b, err := media.AppendAudioBase64(nil, f, 16000, 1, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	return `{"type":"input_audio","input_audio":{"data":"` + string(b) + `","format":"` + string(f) + `"}}`
}

func chatWith(model string, parts ...string) string {
	return `{"model":"` + model + `","max_tokens":3,"messages":[{"role":"user","content":[{"type":"text","text":"describe"},` + strings.Join(parts, ",") + `]}]}`
}

// The mock counts image tokens by the model's rule and audio by the second, adds them
// to ISL and usage.prompt_tokens, and records them.
func TestChatMediaCounted(t *testing.T) {
	s := start(t, Config{})
	for i, c := range []struct {
		model       string
		parts       []string
		image, aud  int
		description string
	}{
		{"Qwen/Qwen2-VL-7B-Instruct", []string{imagePart(t, media.PNG, 640, 480)}, 393, 0, "qwen 640x480"},
		{"meta-llama/Llama-3.2-11B-Vision-Instruct", []string{imagePart(t, media.JPEG, 1000, 500)}, 3202, 0, "mllama 2 tiles"},
		{"m", []string{imagePart(t, media.PNG, 56, 56), imagePart(t, media.JPEG, 28, 28)}, 6 + 6, 0, "two images, default rule"},
		{"m", []string{audioPart(t, media.WAV, 2*time.Second), audioPart(t, media.MP3, time.Second)}, 0, 50 + 26, "wav 2 s + mp3 1 s (1.008 s of frames)"},
	} {
		resp, body := post(t, s.URL()+"/v1/chat/completions", chatWith(c.model, c.parts...))
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.description, resp.StatusCode, body)
		}
		r := waitRecord(t, s, i)
		if r.ImageTokens != c.image || r.AudioTokens != c.aud || r.ISL != r.TextISL+c.image+c.aud || r.TextISL == 0 {
			t.Errorf("%s: image %d audio %d ISL %d text %d; want image %d audio %d", c.description, r.ImageTokens, r.AudioTokens, r.ISL, r.TextISL, c.image, c.aud)
		}
		if !strings.Contains(string(body), fmt.Sprintf(`"prompt_tokens":%d`, r.ISL)) {
			t.Errorf("%s: usage does not carry prompt_tokens %d: %s", c.description, r.ISL, body)
		}
	}
}

func dataURI(t *testing.T) string {
	u, _ := media.AppendImageDataURI(nil, media.PNG, 10, 10, 1)
	return string(u)
}

// Bad media get a 400 that names the part and says what is wrong.
func TestChatMediaRefused(t *testing.T) {
	s := start(t, Config{})
	png := dataURI(t)
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(png, "data:image/png;base64,"))
	huge := append([]byte(nil), raw...)
	huge[16], huge[17] = 0x01, 0x00 // width 65536+: the header's size is checked, not trusted
	for _, c := range []struct {
		part, param, want string
	}{
		{`{"type":"image_url","image_url":{"url":"data:image/png;base64,aGVsbG8="}}`, "messages[0].content[1].image_url.url", "neither PNG nor JPEG"},
		{`{"type":"image_url","image_url":{"url":"` + strings.Replace(png, "image/png", "image/jpeg", 1) + `"}}`, "messages[0].content[1].image_url.url", "says image/jpeg but the data is image/png"},
		{`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(huge) + `"}}`, "messages[0].content[1].image_url.url", "png header"},
		{`{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}`, "messages[0].content[1].image_url.url", "only data URIs"},
		{`{"type":"image_url"}`, "messages[0].content[1].image_url.url", "needs image_url.url"},
		{`{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}`, "messages[0].content[1].input_audio", "no RIFF/WAVE"},
		{`{"type":"input_audio","input_audio":{"data":"` + base64.StdEncoding.EncodeToString([]byte("RIFF0000WAVE")) + `","format":"mp3"}}`, "messages[0].content[1].input_audio", "no frame sync"},
		{`{"type":"input_audio","input_audio":{"data":"AAAA","format":"flac"}}`, "messages[0].content[1].input_audio", "unknown audio format"},
	} {
		resp, body := post(t, s.URL()+"/v1/chat/completions", chatWith("m", c.part))
		if resp.StatusCode != 400 || !strings.Contains(string(body), c.want) || !strings.Contains(string(body), `"param":"`+c.param+`"`) {
			t.Errorf("%.60s: %d %s; want 400 naming %s with %q", c.part, resp.StatusCode, body, c.param, c.want)
		}
	}
	// An image larger than any model takes: refused from its header, by size.
	w := `{"type":"image_url","image_url":{"url":"` + imageOfSize(t, 20000, 1) + `"}}`
	if resp, body := post(t, s.URL()+"/v1/chat/completions", chatWith("m", w)); resp.StatusCode != 400 || !strings.Contains(string(body), "exceeds 16384") {
		t.Errorf("20000x1 image: %d %s", resp.StatusCode, body)
	}
}

// imageOfSize is a PNG whose header says w × h (its pixel data is a 1 × 1 image's:
// the server reads only the header).
func imageOfSize(t *testing.T, w, h int) string {
	var b strings.Builder
	media.EncodeImage(&b, media.PNG, 1, 1, 1)
	data := []byte(b.String())
	data[16], data[17], data[18], data[19] = byte(w>>24), byte(w>>16), byte(w>>8), byte(w)
	data[20], data[21], data[22], data[23] = byte(h>>24), byte(h>>16), byte(h>>8), byte(h)
	crc := crc32IEEE(data[12:29])
	data[29], data[30], data[31], data[32] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// waitRecord returns the i-th served request's record, which is written just after
// its response.
func waitRecord(t *testing.T, s *Server, i int) record.Server {
	t.Helper()
	for range 500 {
		if r := s.Records(); len(r) > i {
			return r[i]
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no record %d", i)
	return record.Server{}
}
