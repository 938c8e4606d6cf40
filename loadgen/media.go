package loadgen

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// Media is what a chat request carries besides its text: synthetic images and audio
// clips (AIPerf's --image-* and --audio-* options) or images from a directory, sent
// in the user message as image_url data URIs and input_audio parts after the text.
// Each request's media are drawn from the seed and its index, and made while its body
// is built (never held for the run). Only chat requests carry media; see
// docs/multimodal.md.
type Media struct {
	// ImageWidth and ImageHeight are the image size distributions in pixels (AIPerf's
	// --image-width-mean/--image-width-stddev: normal:MEAN,STDDEV), rounded, at least 1.
	// Both zero = no synthetic images; one set without the other is invalid.
	ImageWidth  distribution.Spec `json:"image_width,omitzero"`
	ImageHeight distribution.Spec `json:"image_height,omitzero"`
	// ImageFormat is "png" (zero), "jpeg" or "random" (each image one of the two).
	ImageFormat string `json:"image_format,omitempty"`
	// ImageDir sends images from this directory (its .png, .jpg and .jpeg files, one
	// drawn per image) instead of synthetic ones; read when a request is built.
	ImageDir string `json:"image_dir,omitempty"`
	// ImageBatchSize is the number of images per request; zero = 1 when images are on.
	ImageBatchSize int `json:"image_batch_size,omitempty"`
	// AudioLength is the clip duration distribution in seconds (AIPerf's
	// --audio-length-mean/--audio-length-stddev); zero = no audio. Draws below 10 ms
	// are raised to 10 ms.
	AudioLength distribution.Spec `json:"audio_length,omitzero"`
	// AudioFormat is "wav" (zero) or "mp3".
	AudioFormat string `json:"audio_format,omitempty"`
	// AudioSampleRates lists sample rates in Hz, one drawn per clip; zero = [16000].
	AudioSampleRates []int `json:"audio_sample_rates,omitempty"`
	// AudioChannels is 1 (zero) or 2.
	AudioChannels int `json:"audio_num_channels,omitempty"`
	// AudioBatchSize is the number of clips per request; zero = 1 when audio is on.
	AudioBatchSize int `json:"audio_batch_size,omitempty"`
	// AudioDir sends clips from this directory (its .wav and .mp3 files, one drawn per
	// clip, each checked and its duration read before the run) instead of synthetic
	// ones; read when a request is built.
	AudioDir string `json:"audio_dir,omitempty"`
}

// Media format choices.
var (
	ImageFormats = []string{string(media.PNG), string(media.JPEG), "random"}
	AudioFormats = []string{string(media.WAV), string(media.MP3)}
)

// MaxMediaBatch bounds images or clips per request.
const MaxMediaBatch = 64

func (m *Media) images() bool { return !m.ImageWidth.IsZero() || m.ImageDir != "" }
func (m *Media) audio() bool  { return !m.AudioLength.IsZero() || m.AudioDir != "" }

// On reports whether requests carry media.
func (m *Media) On() bool { return m.images() || m.audio() }

// checkMedia checks the media settings.
func (c *Config) checkMedia(p *problems) {
	m := &c.Media
	if m.ImageWidth.IsZero() != m.ImageHeight.IsZero() {
		p.add("image_width and image_height: set both or neither")
	}
	if !m.ImageWidth.IsZero() && m.ImageDir != "" {
		p.add("image_dir and image_width/image_height: synthetic images or a directory, not both")
	}
	for _, d := range []struct {
		name string
		s    distribution.Spec
	}{{"image_width", m.ImageWidth}, {"image_height", m.ImageHeight}} {
		if !d.s.IsZero() && d.s.Mean() > media.MaxImageSide {
			p.add("%s %s: mean %.0f pixels exceeds %d", d.name, d.s, d.s.Mean(), media.MaxImageSide)
		}
	}
	p.checkEnum("image_format", m.ImageFormat, ImageFormats)
	p.checkEnum("audio_format", m.AudioFormat, AudioFormats)
	if m.ImageDir != "" {
		if _, err := imageFiles(m.ImageDir); err != nil {
			p.add("image_dir: %v", err)
		}
	}
	if m.ImageBatchSize < 0 || m.ImageBatchSize > MaxMediaBatch || m.AudioBatchSize < 0 || m.AudioBatchSize > MaxMediaBatch {
		p.add("image_batch_size %d, audio_batch_size %d: want 0 to %d", m.ImageBatchSize, m.AudioBatchSize, MaxMediaBatch)
	}
	if !m.AudioLength.IsZero() && m.AudioLength.Mean() > media.MaxAudioDuration.Seconds() {
		p.add("audio_length %s: mean %.0f s exceeds %v", m.AudioLength, m.AudioLength.Mean(), media.MaxAudioDuration)
	}
	f := media.AudioFormat(orStr(m.AudioFormat, string(media.WAV)))
	for _, r := range m.audioRates() {
		if err := media.CheckAudio(f, r, m.audioChannels(), time.Second); err != nil && slices.Contains(AudioFormats, string(f)) {
			p.add("audio_sample_rates, audio_num_channels: %v", strings.TrimPrefix(err.Error(), "media: "))
		}
	}
	if !m.images() && (m.ImageFormat != "" || m.ImageBatchSize != 0) {
		p.add("image_format, image_batch_size: no images to apply them to (set image_width and image_height, or image_dir)")
	}
	if !m.audio() && (m.AudioFormat != "" || len(m.AudioSampleRates) > 0 || m.AudioChannels != 0 || m.AudioBatchSize != 0) {
		p.add("audio_format, audio_sample_rates, audio_num_channels, audio_batch_size: no audio to apply them to (set audio_length)")
	}
	if !m.AudioLength.IsZero() && m.AudioDir != "" {
		p.add("audio_dir and audio_length: synthetic clips or a directory, not both")
	}
	if m.AudioDir != "" {
		if _, err := audioFiles(m.AudioDir); err != nil {
			p.add("audio_dir: %v", err)
		}
	}
	a := adapterOf(c.endpoint())
	_, audioKind := a.(audioInput)
	switch {
	case audioKind && m.images():
		p.add("endpoint %q sends one audio clip: image inputs go in chat messages", c.endpoint())
	case audioKind && m.AudioBatchSize > 1:
		p.add("audio_batch_size %d: endpoint %q sends one audio clip per request", m.AudioBatchSize, c.endpoint())
	case m.On() && a != nil && !a.media():
		p.add("image and audio inputs go in chat messages: endpoint %q cannot carry them", c.endpoint())
	}
}

func orStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (m *Media) audioRates() []int {
	if len(m.AudioSampleRates) == 0 {
		return []int{16000}
	}
	return m.AudioSampleRates
}

func (m *Media) audioChannels() int { return max(m.AudioChannels, 1) }

// imageFiles lists dir's PNG and JPEG files, sorted.
func imageFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".png", ".jpg", ".jpeg":
			if !e.IsDir() {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no .png, .jpg or .jpeg file", dir)
	}
	return out, nil
}

// audioFile is one clip of Media.AudioDir, checked before the run.
type audioFile struct {
	path           string
	format         media.AudioFormat
	rate, channels int
	dur            time.Duration
}

// audioFiles lists dir's WAV and MP3 files, sorted, each read and checked. Validate
// and the run's start both ask (and the CLI validates its scenario first): a listing
// whose files have the same names, sizes and modification times as the last one read
// is returned without reading the clips again (audioDirMemo).
func audioFiles(dir string) ([]audioFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var key strings.Builder
	abs, _ := filepath.Abs(dir)
	key.WriteString(abs)
	type clip struct {
		name string
		f    media.AudioFormat
	}
	var clips []clip
	for _, e := range ents {
		f, err := media.ParseAudioFormat(strings.TrimPrefix(filepath.Ext(e.Name()), "."))
		if e.IsDir() || err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&key, "\x00%s\x00%d\x00%d", e.Name(), info.Size(), info.ModTime().UnixNano())
		clips = append(clips, clip{e.Name(), f})
	}
	if len(clips) == 0 {
		return nil, fmt.Errorf("%s holds no .wav or .mp3 file", dir)
	}
	audioDirMemo.mu.Lock()
	defer audioDirMemo.mu.Unlock()
	if audioDirMemo.key == key.String() {
		return audioDirMemo.files, nil
	}
	var out []audioFile
	for _, c := range clips {
		path := filepath.Join(dir, c.name)
		data, err := readAudioFile(path)
		if err != nil {
			return nil, err
		}
		info, err := media.DecodeAudioInfo(data, c.f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, audioFile{path: path, format: c.f, rate: info.SampleRate, channels: info.Channels, dur: info.Duration})
	}
	audioDirMemo.key, audioDirMemo.files = key.String(), out
	return out, nil
}

// audioDirMemo is the last audio_dir listing read and checked, and the names, sizes
// and modification times it was read at; callers share its slice and do not modify it.
var audioDirMemo struct {
	mu    sync.Mutex
	key   string
	files []audioFile
}

// readAudioFile reads a clip of Media.AudioDir (a variable so that a test can count
// the reads).
var readAudioFile = os.ReadFile

// mediaPart is one drawn image or clip: what to make, not the bytes.
type mediaPart struct {
	audio      bool
	path       string // an image file (ImageDir, an input file's image) or a clip (AudioDir)
	url        string // an input file's image URL, sent as it is
	imgFormat  media.ImageFormat
	w, h       int
	audFormat  media.AudioFormat
	rate, ch   int
	dur        time.Duration
	seed       uint64
	tokens     int // under the run's rule; for a file, counted when it is read
	fileFailed error
}

// mediaDrawer draws each request's media from (seed, request index), so a request's
// media do not depend on which worker sends it or when.
type mediaDrawer struct {
	m          Media
	seed       uint64
	files      []string
	audioFiles []audioFile
	imageRule  media.ImageRule
	base       string // the input file's directory: relative image paths start there
	inlined    inlineCache
}

// inlineCache keeps payload bodies with their image files inlined, keyed by the body
// as read, so that a payload sent again (a cycled input file) is not decoded, its
// images read and base64-encoded, and re-encoded on every send. It holds at most
// budget bytes of keys and bodies; past that, bodies are inlined on each send.
type inlineCache struct {
	mu     sync.Mutex
	bodies map[string][]byte
	size   int
	budget int
}

// inlineCacheBytes is the inline cache's budget: a few hundred payloads with
// images of a hundred KiB, or every payload of an in-memory input file.
const inlineCacheBytes = 64 << 20

func newMediaDrawer(cfg *Config, names ...string) (*mediaDrawer, error) {
	d := &mediaDrawer{m: cfg.Media, seed: cfg.Seed, imageRule: media.ImageRuleFor(append([]string{cfg.Model}, names...)...)}
	d.inlined.budget = inlineCacheBytes
	if cfg.InputFile != "" {
		d.base = filepath.Dir(cfg.InputFile)
	}
	if _, ok := adapterOf(cfg.endpoint()).(audioInput); ok && !d.m.audio() {
		// A kind whose input is a clip sends DefaultAudioSeconds ones by default.
		d.m.AudioLength = distribution.Spec{Distribution: distribution.Fixed{Value: DefaultAudioSeconds}}
	}
	if cfg.AudioDir != "" {
		files, err := audioFiles(cfg.AudioDir)
		if err != nil {
			return nil, fmt.Errorf("loadgen: audio_dir: %w", err)
		}
		d.audioFiles = files
	}
	if cfg.ImageDir != "" {
		files, err := imageFiles(cfg.ImageDir)
		if err != nil {
			return nil, fmt.Errorf("loadgen: image_dir: %w", err)
		}
		for _, f := range files { // check every file now, so none fails mid-run
			data, err := os.ReadFile(f)
			if err == nil {
				_, err = media.DecodeImageInfo(data)
			}
			if err != nil {
				return nil, fmt.Errorf("loadgen: image_dir: %s: %w", f, err)
			}
		}
		d.files = files
	}
	return d, nil
}

// draw returns request idx's media parts: its images, then its clips.
func (d *mediaDrawer) draw(idx int) []mediaPart {
	rng := rand.New(rand.NewPCG(d.seed^0x6d656469, uint64(idx)))
	src := rand.NewPCG(d.seed^0x73697a65, uint64(idx))
	var parts []mediaPart
	if d.m.images() {
		var wd, hd distribution.Distribution
		if d.files == nil {
			wd, hd = distribution.WithSrc(d.m.ImageWidth.Distribution, src), distribution.WithSrc(d.m.ImageHeight.Distribution, src)
		}
		for range max(d.m.ImageBatchSize, 1) {
			p := mediaPart{seed: rng.Uint64()}
			if d.files != nil {
				p.path = d.files[rng.IntN(len(d.files))]
			} else {
				p.w = clampInt(wd.Rand(), 1, media.MaxImageSide)
				p.h = clampInt(hd.Rand(), 1, media.MaxImageSide)
				for p.w*p.h > media.MaxImagePixels {
					p.w, p.h = p.w/2, p.h/2
				}
				switch d.m.ImageFormat {
				case "random":
					p.imgFormat = media.ImageFormats[rng.IntN(len(media.ImageFormats))]
				case "":
					p.imgFormat = media.PNG
				default:
					p.imgFormat = media.ImageFormat(d.m.ImageFormat)
				}
				p.tokens, _ = d.imageRule.Tokens(p.w, p.h) // a refused size counts 0: the server refuses it too
			}
			parts = append(parts, p)
		}
	}
	if d.m.audio() && d.audioFiles != nil {
		for range max(d.m.AudioBatchSize, 1) {
			f := d.audioFiles[rng.IntN(len(d.audioFiles))]
			parts = append(parts, mediaPart{audio: true, path: f.path, audFormat: f.format, rate: f.rate, ch: f.channels, dur: f.dur,
				tokens: media.WhisperAudio.Tokens(f.dur)})
		}
	} else if d.m.audio() {
		ld := distribution.WithSrc(d.m.AudioLength.Distribution, src)
		rates := d.m.audioRates()
		for range max(d.m.AudioBatchSize, 1) {
			sec := min(max(ld.Rand(), 0.01), media.MaxAudioDuration.Seconds())
			p := mediaPart{audio: true, seed: rng.Uint64(), audFormat: media.AudioFormat(orStr(d.m.AudioFormat, string(media.WAV))),
				rate: rates[rng.IntN(len(rates))], ch: d.m.audioChannels(), dur: time.Duration(sec * float64(time.Second))}
			p.tokens = media.WhisperAudio.Tokens(media.EncodedDuration(p.audFormat, p.rate, p.dur))
			parts = append(parts, p)
		}
	}
	return parts
}

func clampInt(x float64, lo, hi int) int {
	if math.IsNaN(x) {
		return lo
	}
	return int(min(max(math.Round(x), float64(lo)), float64(hi)))
}

// mediaSentinel stands for the user message's content in the marshalled body until
// appendParts' list replaces it (so the text-only path keeps plain strings).
const mediaSentinel = "\x00perfgate-media\x00"

var mediaSentinelJSON = []byte(`"\u0000perfgate-media\u0000"`)

// appendParts appends the content list of a user message: the text, then each part.
// A file that cannot be read or is not a PNG or JPEG is skipped and noted in
// parts[i].fileFailed (the record gets the error).
func (d *mediaDrawer) appendParts(b []byte, text string, parts []mediaPart) []byte {
	b = append(b, `[{"type":"text","text":`...)
	b = record.AppendJSONString(b, text)
	b = append(b, '}')
	for i := range parts {
		p := &parts[i]
		if p.audio {
			mark := len(b)
			b = append(b, `,{"type":"input_audio","input_audio":{"format":"`...)
			b = append(b, p.audFormat...)
			b = append(b, `","data":"`...)
			if p.path != "" {
				data, err := os.ReadFile(p.path)
				if err != nil {
					p.fileFailed = fmt.Errorf("audio %s: %w", p.path, err)
					b = b[:mark]
					continue
				}
				b = base64.StdEncoding.AppendEncode(b, data)
			} else {
				b, _ = media.AppendAudioBase64(b, p.audFormat, p.rate, p.ch, p.dur, p.seed)
			}
			b = append(b, `"}}`...)
			continue
		}
		mark := len(b)
		b = append(b, `,{"type":"image_url","image_url":{"url":`...)
		if p.url != "" {
			b = append(record.AppendJSONString(b, p.url), `}}`...)
			if strings.HasPrefix(p.url, "data:") {
				p.tokens, _ = media.ImageURLTokens(p.url, d.imageRule)
			}
			continue
		}
		b = append(b, '"')
		if p.path != "" {
			data, err := os.ReadFile(p.path)
			var info media.ImageInfo
			if err == nil {
				info, err = media.DecodeImageInfo(data)
			}
			if err != nil {
				p.fileFailed = fmt.Errorf("image %s: %w", p.path, err)
				b = b[:mark]
				continue
			}
			p.tokens, _ = d.imageRule.Tokens(info.Width, info.Height)
			b = media.AppendDataURI(b, info.Format.MIME(), data)
		} else {
			b, _ = media.AppendImageDataURI(b, p.imgFormat, p.w, p.h, p.seed)
		}
		b = append(b, `"}}`...)
	}
	return append(b, ']')
}

// placeholders is the text the server's normalised content adds for the parts
// ("<image>", "<audio>": internal/openai.Placeholder), which its chat template renders.
func placeholders(parts []mediaPart) string {
	var sb strings.Builder
	for _, p := range parts {
		if p.fileFailed != nil {
			continue
		}
		if p.audio {
			sb.WriteString(openai.Placeholder("input_audio"))
		} else {
			sb.WriteString(openai.Placeholder("image_url"))
		}
	}
	return sb.String()
}

// spliceMedia replaces the sentinel content in body by the parts list.
func spliceMedia(body []byte, d *mediaDrawer, text string, parts []mediaPart) []byte {
	i := bytes.LastIndex(body, mediaSentinelJSON)
	if i < 0 {
		return body
	}
	out := make([]byte, 0, len(body)+1024)
	out = append(out, body[:i]...)
	out = d.appendParts(out, text, parts)
	return append(out, body[i+len(mediaSentinelJSON):]...)
}

// mediaTokens sums the parts' image and audio tokens.
func mediaTokens(parts []mediaPart) (images, audio int) {
	for _, p := range parts {
		switch {
		case p.fileFailed != nil:
		case p.audio:
			audio += p.tokens
		default:
			images += p.tokens
		}
	}
	return images, audio
}

// payloadMedia counts the image and audio tokens of a chat payload's parts as the
// mock does (media.ImageURLTokens, media.InputAudioTokens); a part it cannot count
// (a remote URL, bad data) counts 0.
func payloadMedia(model string, tok *tokenizer.Tokenizer, msgs []openai.Message) (images, audio int) {
	var rule *media.ImageRule
	for _, m := range msgs {
		for _, p := range m.Content.Parts {
			switch {
			case p.ImageURL != nil:
				if rule == nil {
					r := media.ImageRuleFor(model, tok.Name(), tok.Source())
					rule = &r
				}
				n, _ := media.ImageURLTokens(p.ImageURL.URL, *rule)
				images += n
			case p.InputAudio != nil:
				n, _ := media.InputAudioTokens(p.InputAudio.Format, p.InputAudio.Data, media.WhisperAudio)
				audio += n
			}
		}
	}
	return images, audio
}

// isImagePath reports whether an image reference is a file path (or file:// URL)
// rather than an http(s) or data URL.
func isImagePath(ref string) bool {
	i := strings.Index(ref, ":")
	return i < 0 || strings.HasPrefix(ref, "file://") || (i == 1 && len(ref) > 2 && (ref[2] == '\\' || ref[2] == '/')) // C:\ on Windows
}

// resolve is ref's file path: file:// stripped, a relative path joined to the input
// file's directory.
func (d *mediaDrawer) resolve(ref string) string {
	p := strings.TrimPrefix(ref, "file://")
	if !filepath.IsAbs(p) && d.base != "" {
		p = filepath.Join(d.base, p)
	}
	return p
}

// fileParts are the media parts of an input file's image references (Turn.Images).
func (d *mediaDrawer) fileParts(refs []string) []mediaPart {
	parts := make([]mediaPart, 0, len(refs))
	for _, ref := range refs {
		if isImagePath(ref) {
			parts = append(parts, mediaPart{path: d.resolve(ref)})
		} else {
			parts = append(parts, mediaPart{url: ref})
		}
	}
	return parts
}

// inline is inlinePayload through the drawer's cache: the same body (read again from
// a cycled input file) gets the same inlined body, built once. A body that fails is
// not kept (its file may appear later), nor one past the cache's budget.
func (d *mediaDrawer) inline(body []byte) (out []byte, ok bool, err error) {
	c := &d.inlined
	c.mu.Lock()
	out, ok = c.bodies[string(body)]
	c.mu.Unlock()
	if ok {
		return out, true, nil
	}
	if out, ok, err = d.inlinePayload(body); !ok {
		return out, ok, err
	}
	out = out[:len(out):len(out)] // shared by the sends: an append copies
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.bodies[string(body)]; !dup && c.size+len(body)+len(out) <= c.budget {
		if c.bodies == nil {
			c.bodies = map[string][]byte{}
		}
		c.bodies[string(body)] = out
		c.size += len(body) + len(out)
	}
	return out, true, nil
}

// inlinePayload returns a chat payload with each image_url part whose url is a file
// path replaced by the file as a data URI (ok false: nothing to inline). A file that
// cannot be read, or is not a PNG or JPEG, is an error naming it.
func (d *mediaDrawer) inlinePayload(body []byte) (out []byte, ok bool, err error) {
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return nil, false, nil
	}
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(req["messages"], &msgs) != nil {
		return nil, false, nil
	}
	changed := false
	for _, m := range msgs {
		var parts []map[string]json.RawMessage
		if json.Unmarshal(m["content"], &parts) != nil {
			continue
		}
		partsChanged := false
		for _, p := range parts {
			var u openai.ImageURL
			if string(p["type"]) != `"image_url"` || json.Unmarshal(p["image_url"], &u) != nil || u.URL == "" || !isImagePath(u.URL) {
				continue
			}
			path := d.resolve(u.URL)
			data, err := readInlineImage(path)
			var info media.ImageInfo
			if err == nil {
				info, err = media.DecodeImageInfo(data)
			}
			if err != nil {
				return nil, false, fmt.Errorf("image_url %s: %w", u.URL, err)
			}
			u.URL = string(media.AppendDataURI(nil, info.Format.MIME(), data))
			p["image_url"], _ = json.Marshal(u)
			partsChanged = true
		}
		if partsChanged {
			m["content"], _ = json.Marshal(parts)
			changed = true
		}
	}
	if !changed {
		return nil, false, nil
	}
	req["messages"], _ = json.Marshal(msgs)
	out, err = json.Marshal(req)
	return out, err == nil, err
}

// readInlineImage reads a payload's image file (a variable so that a test can count
// the reads).
var readInlineImage = os.ReadFile

// attach sets q's media for a chat request: its synthetic images and clips
// (Config.Media) and its input file's images (Turn.Images), or, for a payload, its
// image file paths inlined (q.t then points at a copy with the inlined body, which is
// sent and counted). A payload whose image cannot be read is not to be sent: attach
// returns why (the request is recorded as failed, record.ErrInvalidBody).
func (md *mediaDrawer) attach(q *turnReq) error {
	q.tc.media = nil
	if q.api.media() {
		switch {
		case q.t.Body == nil:
			if md.m.On() {
				q.tc.media = md.draw(q.idx)
			}
			if len(q.t.Images) > 0 {
				q.tc.media = append(q.tc.media, md.fileParts(q.t.Images)...)
			}
		case bytes.Contains(q.t.Body, []byte(`"image_url"`)):
			if body, ok, err := md.inline(q.t.Body); ok {
				t := *q.t // the inlined body is sent and counted; the source keeps its own
				t.Body = body
				q.t = &t
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}
