package media

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

func TestImageRoundTrip(t *testing.T) {
	for _, f := range ImageFormats {
		for _, sz := range [][2]int{{1, 1}, {64, 48}, {333, 17}, {640, 480}} {
			uri, err := AppendImageDataURI(nil, f, sz[0], sz[1], 7)
			if err != nil {
				t.Fatal(err)
			}
			mime, data, err := ParseDataURI(string(uri))
			if err != nil {
				t.Fatalf("%s %v: %v", f, sz, err)
			}
			if mime != f.MIME() {
				t.Errorf("mime %q, want %q", mime, f.MIME())
			}
			info, err := DecodeImageInfo(data)
			if err != nil || info != (ImageInfo{f, sz[0], sz[1]}) {
				t.Errorf("%s %v: info %+v, %v", f, sz, info, err)
			}
			// The whole image decodes, not only its header.
			img, _, err := image.Decode(bytes.NewReader(data))
			if err != nil || img.Bounds().Dx() != sz[0] || img.Bounds().Dy() != sz[1] {
				t.Errorf("%s %v: decode: %v", f, sz, err)
			}
			var direct bytes.Buffer
			if err := EncodeImage(&direct, f, sz[0], sz[1], 7); err != nil || !bytes.Equal(direct.Bytes(), data) {
				t.Errorf("%s %v: the data URI does not hold EncodeImage's bytes (%v)", f, sz, err)
			}
		}
	}
}

func TestImageSeeded(t *testing.T) {
	a, _ := AppendImageDataURI(nil, PNG, 32, 32, 1)
	b, _ := AppendImageDataURI(nil, PNG, 32, 32, 1)
	c, _ := AppendImageDataURI(nil, PNG, 32, 32, 2)
	if !bytes.Equal(a, b) {
		t.Error("the same seed gave different images")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same image")
	}
}

func TestBase64AppenderSplits(t *testing.T) {
	data := []byte("the quick brown fox jumps over the lazy dog!")
	for chunk := 1; chunk <= 7; chunk++ {
		a := newBase64Appender([]byte("x:"))
		for i := 0; i < len(data); i += chunk {
			a.Write(data[i:min(i+chunk, len(data))])
		}
		if got, want := string(a.close()), "x:"+base64.StdEncoding.EncodeToString(data); got != want {
			t.Errorf("chunks of %d: %s, want %s", chunk, got, want)
		}
	}
}

func TestImageRefusals(t *testing.T) {
	for _, c := range []struct {
		w, h int
		want string
	}{{0, 10, "at least 1"}, {20000, 10, "exceeds 16384"}, {16000, 16000, "pixels exceed"}} {
		if err := EncodeImage(&bytes.Buffer{}, PNG, c.w, c.h, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%dx%d: %v, want %q", c.w, c.h, err, c.want)
		}
	}
	if _, err := ParseImageFormat("gif"); err == nil || !strings.Contains(err.Error(), `"gif"`) {
		t.Errorf("gif: %v", err)
	}
	var good bytes.Buffer
	EncodeImage(&good, PNG, 10, 10, 1)
	huge := bytes.Clone(good.Bytes())
	binary.BigEndian.PutUint32(huge[16:], 100000) // IHDR width, then the chunk's CRC
	binary.BigEndian.PutUint32(huge[29:], crc32.ChecksumIEEE(huge[12:29]))
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"text":      {[]byte("hello"), "neither PNG nor JPEG"},
		"truncated": {good.Bytes()[:12], "png header"},
		"jpeg":      {[]byte{0xff, 0xd8, 0xff, 0x00}, "jpeg header"},
		"huge":      {huge, "exceeds 16384"},
	} {
		if _, err := DecodeImageInfo(c.data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	for _, bad := range []string{"http://x/y.png", "data:image/png,abc", "data:image/png;base64", "data:image/png;base64,***"} {
		if _, _, err := ParseDataURI(bad); err == nil {
			t.Errorf("ParseDataURI(%q) accepted it", bad)
		}
	}
}

func TestWAVRoundTrip(t *testing.T) {
	for _, c := range []struct {
		rate, ch int
		d        time.Duration
	}{{16000, 1, time.Second}, {44100, 2, 1500 * time.Millisecond}, {8000, 1, 10 * time.Millisecond}, {22050, 6, 333 * time.Millisecond}} {
		b64, err := AppendAudioBase64(nil, WAV, c.rate, c.ch, c.d, 3)
		if err != nil {
			t.Fatal(err)
		}
		data, err := DecodeBase64(string(b64))
		if err != nil {
			t.Fatal(err)
		}
		info, err := DecodeAudioInfo(data, WAV)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		want := int64(float64(c.rate)*c.d.Seconds() + 0.5)
		if info.SampleRate != c.rate || info.Channels != c.ch || info.Samples != want || len(data) != 44+int(want)*2*c.ch {
			t.Errorf("%+v: %+v, %d bytes; want %d samples", c, info, len(data), want)
		}
		if d := info.Duration - c.d; d > time.Second/time.Duration(c.rate) || d < -time.Second/time.Duration(c.rate) {
			t.Errorf("%+v: duration %v", c, info.Duration)
		}
	}
}

func TestMP3RoundTrip(t *testing.T) {
	for _, rate := range MP3SampleRates {
		for ch := 1; ch <= 2; ch++ {
			var buf bytes.Buffer
			d := 2300 * time.Millisecond
			if err := EncodeAudio(&buf, MP3, rate, ch, d, 1); err != nil {
				t.Fatal(err)
			}
			info, err := DecodeAudioInfo(buf.Bytes(), MP3)
			if err != nil {
				t.Fatalf("%d Hz × %d: %v", rate, ch, err)
			}
			spf := int64(576)
			if rate >= 32000 {
				spf = 1152
			}
			frames := (int64(float64(rate)*d.Seconds()) + spf - 1) / spf
			if info.SampleRate != rate || info.Channels != ch || info.Samples != frames*spf {
				t.Errorf("%d Hz × %d: %+v, want %d frames", rate, ch, info, frames)
			}
			if info.Duration < d || info.Duration > d+time.Duration(spf)*time.Second/time.Duration(rate) {
				t.Errorf("%d Hz × %d: duration %v, want %v up to a frame more", rate, ch, info.Duration, d)
			}
		}
	}
}

func TestMP3Parsing(t *testing.T) {
	var clip bytes.Buffer
	EncodeAudio(&clip, MP3, 44100, 2, time.Second, 1)
	want, _ := DecodeAudioInfo(clip.Bytes(), MP3)
	// An ID3v2 tag in front, an ID3v1 tag behind, and an Info frame first: same audio.
	tagged := append([]byte("ID3\x04\x00\x00\x00\x00\x00\x05hello"), clip.Bytes()[:104]...)
	copy(tagged[15+4+32:], "Info")
	tagged = append(tagged, clip.Bytes()...)
	tagged = append(tagged, append([]byte("TAG"), make([]byte, 125)...)...)
	if got, err := DecodeAudioInfo(tagged, MP3); err != nil || got != want {
		t.Errorf("tagged: %+v, %v; want %+v", got, err, want)
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"empty":     {nil, "no audio frames"},
		"noise":     {[]byte("not an mp3 file at all"), "frame 1 at byte 0: no frame sync"},
		"truncated": {clip.Bytes()[:clip.Len()-10], "is truncated"},
		"layer2":    {[]byte{0xff, 0xfd, 0x10, 0x00}, "layer 2"},
		"free":      {[]byte{0xff, 0xfb, 0x00, 0x00}, "free-format"},
		"wav":       {[]byte("RIFF....WAVE"), "no frame sync"},
	} {
		if _, err := DecodeAudioInfo(c.data, MP3); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestWAVRefusals(t *testing.T) {
	var good bytes.Buffer
	EncodeAudio(&good, WAV, 16000, 1, 100*time.Millisecond, 1)
	g := good.Bytes()
	badTag := bytes.Clone(g)
	badTag[20] = 2 // ADPCM
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"riff":      {[]byte("RIFX"), "no RIFF/WAVE"},
		"truncated": {g[:len(g)-2], `"data" chunk at byte 36 is truncated`},
		"no data":   {g[:36], "no data chunk"},
		"adpcm":     {badTag, "format tag 0x2"},
		"mp3":       {[]byte{0xff, 0xfb, 0x10, 0x00}, "no RIFF/WAVE"},
	} {
		if _, err := DecodeAudioInfo(c.data, WAV); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	for _, c := range []struct {
		f        AudioFormat
		rate, ch int
		d        time.Duration
		want     string
	}{
		{MP3, 16001, 1, time.Second, "mp3 sample rate 16001"},
		{MP3, 16000, 3, time.Second, "want 1 or 2"},
		{WAV, 16000, 1, 0, "audio duration 0s"},
		{WAV, 16000, 1, 2 * time.Hour, "at most 1h"},
		{WAV, 100, 1, time.Second, "wav sample rate 100"},
		{"ogg", 16000, 1, time.Second, `"ogg"`},
	} {
		if err := EncodeAudio(&bytes.Buffer{}, c.f, c.rate, c.ch, c.d, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c, err, c.want)
		}
	}
}

// TestImageTokensOracle checks both image rules against the published processor
// formulas, implemented independently in Python (testdata/token_oracle.py), on
// held-out sizes: seeded random sizes plus the edge cases of each formula.
func TestImageTokensOracle(t *testing.T) {
	py := testutil.Python(t)
	sizes := [][2]int{{1, 1}, {28, 28}, {14, 42}, {42, 14}, {56, 56}, {55, 57}, {70, 70}, {98, 126}, {3000, 15}, {201, 1}, {200, 1},
		{560, 560}, {561, 560}, {1120, 560}, {559, 1121}, {2240, 560}, {4000, 4000}, {16384, 3000}, {3584, 3584}, {3585, 3585}}
	r := newRand(2026)
	for range 400 {
		sizes = append(sizes, [2]int{1 + int(r.next()%4096), 1 + int(r.next()%4096)})
	}
	for range 100 { // odd multiples of 14 land exactly on round()'s halves
		sizes = append(sizes, [2]int{14 * (1 + 2*int(r.next()%100)), 14 * (1 + 2*int(r.next()%100))})
	}
	var in strings.Builder
	type job struct {
		rule ImageRule
		w, h int
	}
	var jobs []job
	for _, rule := range ImageRules {
		for _, s := range sizes {
			fmt.Fprintf(&in, "%s %d %d\n", rule.Name, s[0], s[1])
			jobs = append(jobs, job{rule, s[0], s[1]})
		}
	}
	cmd := exec.Command(py, filepath.Join("testdata", "token_oracle.py"))
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(jobs) {
		t.Fatalf("oracle printed %d lines for %d sizes", len(lines), len(jobs))
	}
	bad := 0
	for i, j := range jobs {
		got, err := j.rule.Tokens(j.w, j.h)
		want := lines[i]
		if want == "error" {
			if err == nil {
				t.Errorf("%s %dx%d: %d tokens, the processor refuses it", j.rule.Name, j.w, j.h, got)
				bad++
			}
			continue
		}
		if err != nil || strconv.Itoa(got) != want {
			t.Errorf("%s %dx%d: %d tokens (%v), the published formula says %s", j.rule.Name, j.w, j.h, got, err, want)
			bad++
		}
		if bad > 10 {
			t.Fatal("too many mismatches")
		}
	}
	t.Logf("%d sizes × %d rules agree with the published formulas", len(sizes), len(ImageRules))
}

func TestImageTokensKnown(t *testing.T) {
	// Worked examples from the formulas, by hand: 640x480 → smart_resize 644x476 →
	// 23 × 17 = 391 cells + 2; 1000x1000 → 1008 × 1008 → 36² + 2; mllama 1000x600 →
	// no 2-tile canvas upscales it, 1120x1120 does (by 1.12) → 4 tiles → 6404.
	for _, c := range []struct {
		r    ImageRule
		w, h int
		want int
	}{{Qwen2VL, 640, 480, 393}, {Qwen2VL, 1000, 1000, 1298}, {Llama32Vision, 1000, 600, 6404}, {Llama32Vision, 1000, 500, 3202}, {Llama32Vision, 100, 100, 1601}, {Llama32Vision, 4000, 4000, 4 * 1601}} {
		if got, err := c.r.Tokens(c.w, c.h); err != nil || got != c.want {
			t.Errorf("%s %dx%d: %d (%v), want %d", c.r.Name, c.w, c.h, got, err, c.want)
		}
	}
	if _, err := Qwen2VL.Tokens(1000, 4); err == nil || !strings.Contains(err.Error(), "aspect ratio 250 exceeds 200") {
		t.Errorf("1000x4: %v", err)
	}
}

func TestImageRuleFor(t *testing.T) {
	for name, want := range map[string]string{
		"meta-llama/Llama-3.2-11B-Vision-Instruct": "mllama", "mllama": "mllama", "Qwen/Qwen2.5-VL-7B-Instruct": "qwen2-vl",
		"gpt2": "qwen2-vl", "meta-llama/Llama-3.2-1B": "qwen2-vl",
	} {
		if got := ImageRuleFor(name).Name; got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if got := ImageRuleFor("", "llama-3.2-90b-vision").Name; got != "mllama" {
		t.Errorf("second name: %s", got)
	}
}

func TestAudioTokens(t *testing.T) {
	for d, want := range map[time.Duration]int{time.Second: 25, 30 * time.Second: 750, 10 * time.Millisecond: 1, 1001 * time.Millisecond: 26} {
		if got := WhisperAudio.Tokens(d); got != want {
			t.Errorf("%v: %d, want %d", d, got, want)
		}
	}
}
