package media

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// AudioFormat is an audio encoding: WAV or MP3.
type AudioFormat string

// The audio formats, with the names OpenAI's input_audio.format uses.
const (
	WAV AudioFormat = "wav"
	MP3 AudioFormat = "mp3"
)

// ParseAudioFormat reads "wav" or "mp3" (any case).
func ParseAudioFormat(s string) (AudioFormat, error) {
	switch strings.ToLower(s) {
	case "wav":
		return WAV, nil
	case "mp3":
		return MP3, nil
	}
	return "", fmt.Errorf("media: unknown audio format %q; want wav or mp3", s)
}

// MaxAudioDuration bounds a clip either side accepts.
const MaxAudioDuration = time.Hour

// MaxAudioChannels bounds a WAV clip's channels (MP3 has 1 or 2).
const MaxAudioChannels = 8

// mp3Rates are the sample rates MPEG-1, -2 and -2.5 Layer III can carry, by
// version: index = the header's sampling-frequency bits.
var mp3Rates = map[int][3]int{
	3: {44100, 48000, 32000}, // MPEG-1
	2: {22050, 24000, 16000}, // MPEG-2
	0: {11025, 12000, 8000},  // MPEG-2.5
}

// MP3SampleRates lists the sample rates an MP3 clip may have.
var MP3SampleRates = []int{8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000}

// CheckAudio returns an error when a clip of this format, rate, channels and duration
// cannot be made.
func CheckAudio(f AudioFormat, sampleRate, channels int, d time.Duration) error {
	switch f {
	case WAV:
		if sampleRate < 1000 || sampleRate > 384000 {
			return fmt.Errorf("media: wav sample rate %d Hz: want 1000 to 384000", sampleRate)
		}
		if channels < 1 || channels > MaxAudioChannels {
			return fmt.Errorf("media: wav channels %d: want 1 to %d", channels, MaxAudioChannels)
		}
	case MP3:
		if _, _, ok := mp3Version(sampleRate); !ok {
			return fmt.Errorf("media: mp3 sample rate %d Hz: want one of %v", sampleRate, MP3SampleRates)
		}
		if channels < 1 || channels > 2 {
			return fmt.Errorf("media: mp3 channels %d: want 1 or 2", channels)
		}
	default:
		return fmt.Errorf("media: unknown audio format %q; want wav or mp3", f)
	}
	if d <= 0 || d > MaxAudioDuration {
		return fmt.Errorf("media: audio duration %v: want more than 0 and at most %v", d, MaxAudioDuration)
	}
	return nil
}

// EncodeAudio writes a clip of duration d to w. WAV is 16-bit PCM holding a seeded
// tone with noise, round(d × sampleRate) samples per channel. MP3 is silent Layer III
// frames at the lowest bitrate, as many whole frames as cover d (1152 samples a frame
// at 32000 Hz and above, 576 below), so its duration is d rounded up to a frame.
func EncodeAudio(w io.Writer, f AudioFormat, sampleRate, channels int, d time.Duration, seed uint64) error {
	if err := CheckAudio(f, sampleRate, channels, d); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 16<<10)
	var err error
	if f == WAV {
		err = writeWAV(bw, sampleRate, channels, d, seed)
	} else {
		err = writeMP3(bw, sampleRate, channels, d)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// AppendAudioBase64 appends a generated clip (see [EncodeAudio]) as plain base64, the
// form of OpenAI's input_audio.data.
func AppendAudioBase64(dst []byte, f AudioFormat, sampleRate, channels int, d time.Duration, seed uint64) ([]byte, error) {
	a := newBase64Appender(dst)
	if err := EncodeAudio(a, f, sampleRate, channels, d, seed); err != nil {
		return dst, err
	}
	return a.close(), nil
}

// wavSamples is round(d × rate), the number of samples per channel of a WAV clip.
func wavSamples(sampleRate int, d time.Duration) int64 {
	return int64(math.Round(d.Seconds() * float64(sampleRate)))
}

func writeWAV(w *bufio.Writer, sampleRate, channels int, d time.Duration, seed uint64) error {
	n := wavSamples(sampleRate, d)
	data := n * int64(channels) * 2
	var h [44]byte
	copy(h[0:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+data))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1) // PCM
	binary.LittleEndian.PutUint16(h[22:], uint16(channels))
	binary.LittleEndian.PutUint32(h[24:], uint32(sampleRate))
	binary.LittleEndian.PutUint32(h[28:], uint32(sampleRate*channels*2))
	binary.LittleEndian.PutUint16(h[32:], uint16(channels*2))
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(data))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	r := newRand(seed)
	freq := 110 + float64(r.next()%880)
	// The tone turns by a fixed angle a sample: rotate a phasor instead of calling Sin.
	step := 2 * math.Pi * freq / float64(sampleRate)
	cs, sn := math.Cos(step), math.Sin(step)
	re, im := 1.0, 0.0
	var s [2]byte
	for i := int64(0); i < n; i++ {
		if i&1023 == 0 { // renormalise against rounding drift
			m := math.Hypot(re, im)
			re, im = re/m, im/m
		}
		v := int16(8000*im) + int16(r.next()%1024) - 512
		for range channels {
			binary.LittleEndian.PutUint16(s[:], uint16(v))
			if _, err := w.Write(s[:]); err != nil {
				return err
			}
		}
		re, im = re*cs-im*sn, re*sn+im*cs
	}
	return nil
}

// mp3Version returns the header's version bits (3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5)
// and sampling-frequency index for a rate.
func mp3Version(rate int) (version, index int, ok bool) {
	for v, rates := range mp3Rates {
		for i, r := range rates {
			if r == rate {
				return v, i, true
			}
		}
	}
	return 0, 0, false
}

// Layer III bitrates in kbit/s by bitrate index: MPEG-1, then MPEG-2 and 2.5.
var (
	mp3Bitrates1 = [15]int{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}
	mp3Bitrates2 = [15]int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160}
)

// mp3Frame describes one Layer III frame header.
type mp3Frame struct {
	rate, channels, samples, length, sideInfo int
}

// parseMP3Header reads a 4-byte Layer III frame header.
func parseMP3Header(h []byte) (mp3Frame, error) {
	if h[0] != 0xff || h[1]&0xe0 != 0xe0 {
		return mp3Frame{}, errors.New("no frame sync")
	}
	version := int(h[1]>>3) & 3
	layer := int(h[1]>>1) & 3
	bri := int(h[2] >> 4)
	sri := int(h[2]>>2) & 3
	pad := int(h[2]>>1) & 1
	mode := int(h[3] >> 6)
	switch {
	case version == 1:
		return mp3Frame{}, errors.New("reserved MPEG version")
	case layer != 1:
		return mp3Frame{}, fmt.Errorf("layer %d, not MPEG audio layer III", 4-layer)
	case bri == 0:
		return mp3Frame{}, errors.New("free-format bitrate is not supported")
	case bri == 15:
		return mp3Frame{}, errors.New("invalid bitrate index")
	case sri == 3:
		return mp3Frame{}, errors.New("reserved sampling frequency")
	}
	f := mp3Frame{rate: mp3Rates[version][sri], channels: 2}
	if mode == 3 {
		f.channels = 1
	}
	if version == 3 {
		f.samples = 1152
		f.length = 144000*mp3Bitrates1[bri]/f.rate + pad
		f.sideInfo = map[int]int{1: 17, 2: 32}[f.channels]
	} else {
		f.samples = 576
		f.length = 72000*mp3Bitrates2[bri]/f.rate + pad
		f.sideInfo = map[int]int{1: 9, 2: 17}[f.channels]
	}
	return f, nil
}

func writeMP3(w *bufio.Writer, sampleRate, channels int, d time.Duration) error {
	version, sri, _ := mp3Version(sampleRate)
	h := [4]byte{0xff, 0xe0 | byte(version)<<3 | 1<<1 | 1, 1<<4 | byte(sri)<<2, 0}
	if channels == 1 {
		h[3] = 3 << 6
	}
	f, err := parseMP3Header(h[:])
	if err != nil {
		return err
	}
	frames := int64(math.Ceil(d.Seconds() * float64(sampleRate) / float64(f.samples)))
	frame := make([]byte, f.length)
	copy(frame, h[:]) // zero side information: no coded bits, every sample is 0
	for range frames {
		if _, err := w.Write(frame); err != nil {
			return err
		}
	}
	return nil
}

// AudioInfo is what a clip's headers say about it.
type AudioInfo struct {
	Format     AudioFormat
	SampleRate int
	Channels   int
	// Samples is the number of samples per channel.
	Samples  int64
	Duration time.Duration
}

// DecodeAudioInfo reads a clip's sample rate, channels and duration from its headers
// (every frame header, for MP3) without decoding samples. Malformed or truncated data
// is an error that says where.
func DecodeAudioInfo(data []byte, f AudioFormat) (AudioInfo, error) {
	var info AudioInfo
	var err error
	switch f {
	case WAV:
		info, err = wavInfo(data)
	case MP3:
		info, err = mp3Info(data)
	default:
		return AudioInfo{}, fmt.Errorf("media: unknown audio format %q; want wav or mp3", f)
	}
	if err != nil {
		return AudioInfo{}, err
	}
	info.Format = f
	info.Duration = samplesDuration(info.Samples, info.SampleRate)
	if info.Duration > MaxAudioDuration {
		return AudioInfo{}, fmt.Errorf("media: %s clip lasts %v, more than %v", f, info.Duration.Round(time.Millisecond), MaxAudioDuration)
	}
	return info, nil
}

func wavInfo(data []byte) (AudioInfo, error) {
	if len(data) < 12 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		return AudioInfo{}, errors.New("media: wav: no RIFF/WAVE header")
	}
	var info AudioInfo
	block := 0
	for off := 12; ; {
		if off+8 > len(data) {
			return AudioInfo{}, errors.New("media: wav: no data chunk")
		}
		id, size := string(data[off:off+4]), int64(binary.LittleEndian.Uint32(data[off+4:]))
		body := data[off+8:]
		if size > int64(len(body)) {
			return AudioInfo{}, fmt.Errorf("media: wav: %q chunk at byte %d is truncated (%d bytes declared, %d present)", id, off, size, len(body))
		}
		body = body[:size]
		switch id {
		case "fmt ":
			if size < 16 {
				return AudioInfo{}, fmt.Errorf("media: wav: fmt chunk of %d bytes, want at least 16", size)
			}
			tag := binary.LittleEndian.Uint16(body)
			info.Channels = int(binary.LittleEndian.Uint16(body[2:]))
			info.SampleRate = int(binary.LittleEndian.Uint32(body[4:]))
			block = int(binary.LittleEndian.Uint16(body[12:]))
			bits := binary.LittleEndian.Uint16(body[14:])
			switch {
			case tag != 1 && tag != 3 && tag != 0xfffe:
				return AudioInfo{}, fmt.Errorf("media: wav: format tag %#x, want PCM (1), float (3) or extensible", tag)
			case info.Channels < 1 || info.Channels > MaxAudioChannels:
				return AudioInfo{}, fmt.Errorf("media: wav: %d channels, want 1 to %d", info.Channels, MaxAudioChannels)
			case info.SampleRate < 1000 || info.SampleRate > 384000:
				return AudioInfo{}, fmt.Errorf("media: wav: sample rate %d Hz, want 1000 to 384000", info.SampleRate)
			case bits == 0 || bits%8 != 0 || block != info.Channels*int(bits)/8:
				return AudioInfo{}, fmt.Errorf("media: wav: %d bits a sample with block align %d does not fit %d channels", bits, block, info.Channels)
			}
		case "data":
			if block == 0 {
				return AudioInfo{}, errors.New("media: wav: data chunk before fmt chunk")
			}
			info.Samples = size / int64(block)
			return info, nil
		}
		off += 8 + int(size) + int(size&1) // chunks are padded to even sizes
	}
}

func mp3Info(data []byte) (AudioInfo, error) {
	off := 0
	if len(data) >= 10 && string(data[:3]) == "ID3" { // ID3v2 tag: 10-byte header, syncsafe size
		size := int(data[6]&0x7f)<<21 | int(data[7]&0x7f)<<14 | int(data[8]&0x7f)<<7 | int(data[9]&0x7f)
		off = 10 + size
		if data[5]&0x10 != 0 {
			off += 10 // footer
		}
	}
	var info AudioInfo
	for n := 0; off < len(data); n++ {
		if len(data)-off == 128 && string(data[off:off+3]) == "TAG" { // ID3v1 trailer
			break
		}
		if off+4 > len(data) {
			return AudioInfo{}, fmt.Errorf("media: mp3: %d stray bytes at byte %d", len(data)-off, off)
		}
		f, err := parseMP3Header(data[off : off+4])
		if err != nil {
			return AudioInfo{}, fmt.Errorf("media: mp3: frame %d at byte %d: %v", n+1, off, err)
		}
		if off+f.length > len(data) {
			return AudioInfo{}, fmt.Errorf("media: mp3: frame %d at byte %d is truncated (%d of %d bytes)", n+1, off, len(data)-off, f.length)
		}
		if n == 0 {
			info.SampleRate, info.Channels = f.rate, f.channels
			tag := data[off+4+f.sideInfo : min(off+8+f.sideInfo, len(data))]
			if string(tag) == "Xing" || string(tag) == "Info" {
				off += f.length // a VBR/info header frame carries no audio
				continue
			}
		} else if f.rate != info.SampleRate || f.channels != info.Channels {
			return AudioInfo{}, fmt.Errorf("media: mp3: frame %d at byte %d is %d Hz × %d channels, the first was %d Hz × %d", n+1, off, f.rate, f.channels, info.SampleRate, info.Channels)
		}
		info.Samples += int64(f.samples)
		off += f.length
	}
	if info.Samples == 0 {
		return AudioInfo{}, errors.New("media: mp3: no audio frames")
	}
	return info, nil
}

func samplesDuration(samples int64, rate int) time.Duration {
	return time.Duration(float64(samples) / float64(rate) * float64(time.Second))
}

// EncodedDuration is the duration [DecodeAudioInfo] reads back from a clip that
// [EncodeAudio] made for d: d to the sample (WAV) or rounded up to whole frames (MP3).
func EncodedDuration(f AudioFormat, sampleRate int, d time.Duration) time.Duration {
	if f == MP3 {
		spf := int64(576)
		if sampleRate >= 32000 {
			spf = 1152
		}
		frames := int64(math.Ceil(d.Seconds() * float64(sampleRate) / float64(spf)))
		return samplesDuration(frames*spf, sampleRate)
	}
	return samplesDuration(wavSamples(sampleRate, d), sampleRate)
}
