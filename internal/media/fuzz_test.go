package media

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// FuzzDecodeMedia feeds arbitrary bytes to the header readers the mock runs on every
// image and clip it receives: each returns a media:-prefixed error or a result within
// the bounds, never a panic; an accepted image's size has a token count or a clear
// refusal under every rule.
func FuzzDecodeMedia(f *testing.F) {
	var png, jpg, wav, mp3 bytes.Buffer
	EncodeImage(&png, PNG, 30, 20, 1)
	EncodeImage(&jpg, JPEG, 30, 20, 1)
	EncodeAudio(&wav, WAV, 8000, 1, 50*time.Millisecond, 1)
	EncodeAudio(&mp3, MP3, 8000, 1, 50*time.Millisecond, 1)
	for _, b := range [][]byte{png.Bytes(), jpg.Bytes(), wav.Bytes(), mp3.Bytes(), []byte("ID3\x04\x00\x00\x7f\x7f\x7f\x7f"), nil} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if info, err := DecodeImageInfo(data); err != nil {
			if !strings.HasPrefix(err.Error(), "media: ") {
				t.Errorf("image error without the package prefix: %v", err)
			}
		} else {
			if CheckImageSize(info.Width, info.Height) != nil {
				t.Errorf("accepted an image of %dx%d", info.Width, info.Height)
			}
			for _, r := range ImageRules {
				if n, err := r.Tokens(info.Width, info.Height); err == nil && n <= 0 {
					t.Errorf("%s: %dx%d → %d tokens", r.Name, info.Width, info.Height, n)
				}
			}
		}
		for _, fm := range []AudioFormat{WAV, MP3} {
			info, err := DecodeAudioInfo(data, fm)
			switch {
			case err != nil && !strings.HasPrefix(err.Error(), "media: "):
				t.Errorf("%s error without the package prefix: %v", fm, err)
			case err == nil && (info.SampleRate <= 0 || info.Channels <= 0 || info.Duration < 0 || info.Duration > MaxAudioDuration):
				t.Errorf("%s: accepted %+v", fm, info)
			}
		}
	})
}
