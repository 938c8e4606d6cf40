package main

// AIPerf's image and audio input flags (--image-*, --audio-*), mapped onto the
// scenario's loadgen.Media settings; docs/multimodal.md describes them.

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// mediaFlags are the raw image and audio flag values.
type mediaFlags struct {
	widthMean, widthStd, heightMean, heightStd float64
	imageFormat, imageDir, audioDir            string
	imageBatch, audioBatch, channels           int
	lengthMean, lengthStd                      float64
	audioFormat                                string
	rates, depths                              stringList
}

func registerMediaFlags(fs *flag.FlagSet, m *mediaFlags) {
	fs.Float64Var(&m.widthMean, "image-width-mean", 0, "[workload] mean width of synthetic images, pixels (chat; needs --image-height-mean)")
	fs.Float64Var(&m.widthStd, "image-width-stddev", 0, "[workload] stddev of the image width, pixels")
	fs.Float64Var(&m.heightMean, "image-height-mean", 0, "[workload] mean height of synthetic images, pixels")
	fs.Float64Var(&m.heightStd, "image-height-stddev", 0, "[workload] stddev of the image height, pixels")
	fs.StringVar(&m.imageFormat, "image-format", "", "[workload] synthetic image format: png, jpeg or random (default png)")
	fs.StringVar(&m.imageDir, "image-dir", "", "[workload] send images from this directory's .png/.jpg files instead of synthetic ones")
	for _, n := range []string{"image-batch-size", "batch-size-image"} {
		fs.IntVar(&m.imageBatch, n, 0, "[workload] images per request (default 1 when images are on)")
	}
	fs.Float64Var(&m.lengthMean, "audio-length-mean", 0, "[workload] mean duration of synthetic audio clips, seconds (chat input_audio)")
	fs.Float64Var(&m.lengthStd, "audio-length-stddev", 0, "[workload] stddev of the clip duration, seconds")
	fs.StringVar(&m.audioFormat, "audio-format", "", "[workload] synthetic audio format: wav or mp3 (default wav)")
	fs.StringVar(&m.audioDir, "audio-dir", "", "[workload] send clips from this directory's .wav/.mp3 files instead of synthetic ones (chat input_audio, audio_transcription)")
	fs.Var(&m.rates, "audio-sample-rates", "[workload] sample rates to draw from, kHz as AIPerf writes them (16,44.1; values above 96 are Hz); comma-separated or repeated (default 16)")
	fs.Var(&m.depths, "audio-depths", "[workload] audio bit depths to draw from: only 16 is made")
	fs.IntVar(&m.channels, "audio-num-channels", 0, "[workload] audio channels: 1 or 2 (default 1)")
	for _, n := range []string{"audio-batch-size", "batch-size-audio"} {
		fs.IntVar(&m.audioBatch, n, 0, "[workload] audio clips per request (default 1 when audio is on)")
	}
}

// normalSpec is fixed:MEAN, or normal:MEAN,STD when std > 0.
func normalSpec(name string, mean, std float64) (distribution.Spec, error) {
	text := fmt.Sprintf("fixed:%g", mean)
	if std > 0 {
		text = fmt.Sprintf("normal:%g,%g", mean, std)
	}
	d, err := distribution.Parse(text)
	if err != nil {
		return distribution.Spec{}, invalidf("--%s-mean: %v", name, err)
	}
	return distribution.Spec{Distribution: d}, nil
}

// isListSep separates the values of a list flag's item: commas or spaces.
func isListSep(r rune) bool { return r == ',' || r == ' ' }

// applyMedia maps the image and audio flags onto the scenario (checked further by
// loadgen.Config.Validate: formats, sizes, the endpoint).
func applyMedia(sc *scenario.Scenario, m *mediaFlags, has func(...string) bool) error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"image-width-mean", m.widthMean}, {"image-width-stddev", m.widthStd}, {"image-height-mean", m.heightMean}, {"image-height-stddev", m.heightStd},
		{"audio-length-mean", m.lengthMean}, {"audio-length-stddev", m.lengthStd}} {
		if c.v < 0 || math.IsNaN(c.v) || math.IsInf(c.v, 0) {
			return invalidf("--%s: want a value >= 0, got %v", c.name, c.v)
		}
	}
	var err error
	switch {
	case (m.widthMean > 0) != (m.heightMean > 0):
		return invalidf("--image-width-mean and --image-height-mean: give both (the image size has two sides)")
	case m.widthMean > 0:
		if sc.ImageWidth, err = normalSpec("image-width", m.widthMean, m.widthStd); err != nil {
			return err
		}
		if sc.ImageHeight, err = normalSpec("image-height", m.heightMean, m.heightStd); err != nil {
			return err
		}
	case m.widthStd > 0 || m.heightStd > 0:
		return invalidf("--image-width-stddev/--image-height-stddev need --image-width-mean and --image-height-mean")
	}
	if m.imageFormat != "" {
		sc.ImageFormat = strings.ToLower(m.imageFormat)
	}
	if m.imageDir != "" {
		sc.ImageDir = m.imageDir
	}
	if m.audioDir != "" {
		sc.AudioDir = m.audioDir
	}
	switch {
	case m.lengthMean > 0:
		if sc.AudioLength, err = normalSpec("audio-length", m.lengthMean, m.lengthStd); err != nil {
			return err
		}
	case m.lengthStd > 0:
		return invalidf("--audio-length-stddev %g needs --audio-length-mean", m.lengthStd)
	}
	if m.audioFormat != "" {
		sc.AudioFormat = strings.ToLower(m.audioFormat)
	}
	if len(m.rates) > 0 {
		sc.AudioSampleRates = nil
		for _, item := range m.rates {
			for _, s := range strings.FieldsFunc(item, isListSep) {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || !(v > 0) || math.IsInf(v, 0) {
					return invalidf("--audio-sample-rates %q: %q is not a sample rate (kHz, e.g. 16 or 44.1)", item, s)
				}
				if v <= 96 { // AIPerf's kHz; larger values are taken as Hz, as AIPerf does
					v *= 1000
				}
				sc.AudioSampleRates = append(sc.AudioSampleRates, int(math.Round(v)))
			}
		}
	}
	if len(m.depths) > 0 && sc.AudioLength.IsZero() {
		return invalidf("--audio-depths needs audio clips: --audio-length-mean")
	}
	for _, item := range m.depths {
		for _, s := range strings.FieldsFunc(item, isListSep) {
			if s != "16" {
				return invalidf("--audio-depths %s: only 16-bit audio is generated (WAV PCM16; MP3 has no bit depth)", s)
			}
		}
	}
	if has("audio-num-channels") {
		if m.channels != 1 && m.channels != 2 {
			return invalidf("--audio-num-channels %d: want 1 or 2", m.channels)
		}
		sc.AudioChannels = m.channels
	}
	for _, c := range []struct {
		name string
		v    int
		dst  *int
	}{{"image-batch-size", m.imageBatch, &sc.ImageBatchSize}, {"audio-batch-size", m.audioBatch, &sc.AudioBatchSize}} {
		if c.v < 0 {
			return invalidf("--%s %d: want a count >= 1", c.name, c.v)
		}
		if c.v > 0 {
			*c.dst = c.v
		}
	}
	return nil
}
