package mockserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// AudioTokensPerSecond is the mock's rule for the tokens an audio input counts as:
// Whisper's encoder, whose 30-second window is 1500 frames, 50 a second.
const AudioTokensPerSecond = 50

// AudioTokens is the token count of seconds of audio: ceil(seconds × AudioTokensPerSecond).
func AudioTokens(seconds float64) int { return int(math.Ceil(seconds * AudioTokensPerSecond)) }

// audioInfo is what an audio file's header says.
type audioInfo struct {
	format   string // "wav"
	seconds  float64
	rate     int
	channels int
}

// decodeAudio reads an audio file's header and checks that its samples are all there.
func decodeAudio(b []byte) (audioInfo, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return audioInfo{}, errors.New("not a WAV file (no RIFF/WAVE header); the mock server reads WAV")
	}
	var (
		rate, byteRate    uint32
		channels, bits    uint16
		haveFmt, haveData bool
		dataLen           uint32
	)
	for i := 12; i+8 <= len(b); {
		id, n := string(b[i:i+4]), binary.LittleEndian.Uint32(b[i+4:i+8])
		body := i + 8
		switch id {
		case "fmt ":
			if n < 16 || body+16 > len(b) {
				return audioInfo{}, errors.New("WAV fmt chunk is truncated")
			}
			if f := binary.LittleEndian.Uint16(b[body:]); f != 1 && f != 3 && f != 0xfffe {
				return audioInfo{}, fmt.Errorf("WAV sample format %d is not PCM or float", f)
			}
			channels = binary.LittleEndian.Uint16(b[body+2:])
			rate = binary.LittleEndian.Uint32(b[body+4:])
			byteRate = binary.LittleEndian.Uint32(b[body+8:])
			bits = binary.LittleEndian.Uint16(b[body+14:])
			haveFmt = true
		case "data":
			if uint64(body)+uint64(n) > uint64(len(b)) {
				return audioInfo{}, fmt.Errorf("WAV data chunk says %d bytes, the file holds %d", n, len(b)-body)
			}
			dataLen, haveData = n, true
		}
		if haveFmt && haveData {
			break
		}
		i = body + int(n) + int(n&1)
	}
	switch {
	case !haveFmt:
		return audioInfo{}, errors.New("WAV file has no fmt chunk")
	case !haveData:
		return audioInfo{}, errors.New("WAV file has no data chunk")
	case channels < 1 || channels > 8:
		return audioInfo{}, fmt.Errorf("WAV channels %d out of [1, 8]", channels)
	case rate < 1000 || rate > 384000:
		return audioInfo{}, fmt.Errorf("WAV sample rate %d Hz out of [1000, 384000]", rate)
	case bits != 8 && bits != 16 && bits != 24 && bits != 32:
		return audioInfo{}, fmt.Errorf("WAV bit depth %d is not 8, 16, 24 or 32", bits)
	case byteRate != rate*uint32(channels)*uint32(bits)/8:
		return audioInfo{}, fmt.Errorf("WAV byte rate %d is not rate × channels × bits / 8 = %d", byteRate, rate*uint32(channels)*uint32(bits)/8)
	case dataLen == 0:
		return audioInfo{}, errors.New("WAV file has no samples")
	}
	return audioInfo{format: "wav", seconds: float64(dataLen) / float64(byteRate), rate: int(rate), channels: int(channels)}, nil
}
