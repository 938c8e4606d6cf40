package loadgen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/tokenizer"
)

// Audio is the audio clips requests send, AIPerf's --audio-* options: synthetic clips
// of drawn durations, made when each request is built (never held for the run), or
// the files of a directory.
type Audio struct {
	// Length is a clip's duration in seconds (AIPerf's --audio-length-mean and
	// --audio-length-stddev make normal:MEAN,STDDEV); draws are clamped to
	// [MinAudioSeconds, media.MaxAudioDuration]. Zero = fixed:DefaultAudioSeconds.
	Length distribution.Spec `json:"length,omitzero"`
	// Format is "wav" (zero) or "mp3" (AIPerf's --audio-format).
	Format string `json:"format,omitempty"`
	// SampleRates are the sample rates in Hz a clip's is drawn from, uniformly
	// (AIPerf's --audio-sample-rates, which it gives in kHz); empty = 16000.
	SampleRates []int `json:"sample_rates,omitempty"`
	// Channels is 1 (zero) or 2 (AIPerf's --audio-num-channels; up to 8 for WAV).
	Channels int `json:"channels,omitempty"`
	// Dir, when set, sends the .wav and .mp3 files of this directory, in name order
	// and round robin, instead of synthetic clips; each file's duration is read from its
	// headers before the run.
	Dir string `json:"dir,omitempty"`
}

// Audio defaults.
const (
	DefaultAudioSeconds    = 5.0
	DefaultAudioSampleRate = 16000
	// MinAudioSeconds is the shortest clip a draw gives (a normal draw can be ≤ 0).
	MinAudioSeconds = 0.1
)

// check adds Audio's problems to p.
func (a *Audio) check(p *problems) {
	if a.Format != "" {
		if _, err := media.ParseAudioFormat(a.Format); err != nil {
			p.add("audio.format %q: want wav or mp3", a.Format)
		}
	}
	if a.Channels < 0 {
		p.add("audio.channels %d < 0", a.Channels)
	}
	f := a.format()
	for _, r := range a.rates() {
		if err := media.CheckAudio(f, r, a.channels(), time.Second); err != nil {
			p.add("audio: %v", strings.TrimPrefix(err.Error(), "media: "))
		}
	}
}

func (a *Audio) format() media.AudioFormat {
	if f, err := media.ParseAudioFormat(a.Format); err == nil {
		return f
	}
	return media.WAV
}

func (a *Audio) rates() []int {
	if len(a.SampleRates) == 0 {
		return []int{DefaultAudioSampleRate}
	}
	return a.SampleRates
}

func (a *Audio) channels() int { return max(a.Channels, 1) }

// audioInput is an adapter whose input is an audio clip (audio_transcription): every
// turn gets one, and it replaces the turn's prompt.
type audioInput interface{ audioOnly() }

// newSource is the run's source of turns: the prompts ([newPromptSource]), with an
// audio clip added to each turn when the kind takes audio.
func newSource(ctx context.Context, cfg *Config, tok *tokenizer.Tokenizer) (dataset.Source, error) {
	src, err := newPromptSource(ctx, cfg, tok)
	if err != nil {
		return nil, err
	}
	if _, ok := adapterOf(cfg.endpoint()).(audioInput); !ok {
		return src, nil
	}
	return newAudioSource(src, &cfg.Audio, cfg.Seed)
}

// audioSource adds a clip to every turn of src, in place of its prompt.
type audioSource struct {
	src    dataset.Source
	a      *Audio
	length distribution.Distribution
	rng    *rand.Rand
	files  []dataset.Clip
	n      int
}

func newAudioSource(src dataset.Source, a *Audio, seed uint64) (*audioSource, error) {
	s := &audioSource{src: src, a: a, rng: rand.New(rand.NewPCG(seed, 0xa0d10))}
	if a.Dir != "" {
		files, err := audioFiles(a.Dir)
		if err != nil {
			return nil, err
		}
		s.files = files
		return s, nil
	}
	d := a.Length.Distribution
	if d == nil {
		d = distribution.Fixed{Value: DefaultAudioSeconds}
	}
	s.length = distribution.WithSrc(d, rand.NewPCG(seed, 0xa0d11))
	return s, nil
}

// audioFiles lists dir's clips with their durations, read from their headers.
func audioFiles(dir string) ([]dataset.Clip, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: audio.dir: %w", ErrInvalidConfig, err)
	}
	var out []dataset.Clip
	for _, e := range ents {
		ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(e.Name()), "."))
		f, err := media.ParseAudioFormat(ext)
		if e.IsDir() || err != nil {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%w: audio.dir: %w", ErrInvalidConfig, err)
		}
		info, err := media.DecodeAudioInfo(b, f)
		if err != nil {
			return nil, fmt.Errorf("%w: audio.dir: %s: %w", ErrInvalidConfig, path, err)
		}
		out = append(out, dataset.Clip{Format: string(f), Path: path, Duration: info.Duration, Rate: info.SampleRate, Channels: info.Channels})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: audio.dir %s: no .wav or .mp3 files", ErrInvalidConfig, dir)
	}
	slices.SortFunc(out, func(a, b dataset.Clip) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// Next implements [dataset.Source].
func (s *audioSource) Next() (dataset.Conversation, bool) {
	c, ok := s.src.Next()
	for i := range c.Turns {
		t := &c.Turns[i]
		clip := s.draw()
		t.Audio = &clip
		t.Prompt, t.ISL, t.RequestedISL, t.Exact = "", 0, 0, true
	}
	return c, ok
}

// draw returns the next clip: the next file, or a synthetic clip of a drawn duration.
func (s *audioSource) draw() dataset.Clip {
	s.n++
	if len(s.files) > 0 {
		return s.files[(s.n-1)%len(s.files)]
	}
	sec := min(max(s.length.Rand(), MinAudioSeconds), media.MaxAudioDuration.Seconds())
	rates := s.a.rates()
	return dataset.Clip{Format: string(s.a.format()), Duration: time.Duration(sec * float64(time.Second)).Round(time.Millisecond),
		Rate: rates[s.rng.IntN(len(rates))], Channels: s.a.channels(), Seed: s.rng.Uint64()}
}
