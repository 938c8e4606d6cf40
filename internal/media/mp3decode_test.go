package media

import (
	"bytes"
	"io"
	"testing"
	"time"

	gomp3 "github.com/hajimehoshi/go-mp3"
)

// TestMP3DecodesWithRealDecoder decodes the generated MP3 with an independent decoder
// (hajimehoshi/go-mp3, which outputs 16-bit stereo PCM), so the silent frames are shown
// to be MP3 a real decoder reads, of the length DecodeAudioInfo reports, and silent.
func TestMP3DecodesWithRealDecoder(t *testing.T) {
	for _, c := range []struct{ rate, ch int }{{44100, 2}, {48000, 1}, {32000, 2}, {22050, 1}, {16000, 2}, {24000, 1}} {
		var buf bytes.Buffer
		if err := EncodeAudio(&buf, MP3, c.rate, c.ch, 1200*time.Millisecond, 1); err != nil {
			t.Fatal(err)
		}
		info, err := DecodeAudioInfo(buf.Bytes(), MP3)
		if err != nil {
			t.Fatal(err)
		}
		d, err := gomp3.NewDecoder(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Errorf("%+v: go-mp3 refuses it: %v", c, err)
			continue
		}
		pcm, err := io.ReadAll(d)
		if err != nil {
			t.Errorf("%+v: go-mp3 decode: %v", c, err)
			continue
		}
		if d.SampleRate() != c.rate || int64(len(pcm)) != info.Samples*4 {
			t.Errorf("%+v: go-mp3 read %d Hz, %d samples; DecodeAudioInfo says %d Hz, %d", c, d.SampleRate(), len(pcm)/4, info.SampleRate, info.Samples)
		}
		if bytes.Count(pcm, []byte{0}) != len(pcm) {
			t.Errorf("%+v: decoded audio is not silent", c)
		}
	}
}
