package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/record"
)

// transcriptionKind is OpenAI speech to text (/v1/audio/transcriptions): a
// multipart/form-data upload of one audio file, answered with {"text", "usage"} or,
// with stream=true, transcript.text.delta events and a transcript.text.done event.
// The audio (WAV or MP3) is validated and its duration read from its headers
// (internal/media); its tokens, the input, follow media.WhisperAudio's per-second
// rule. The transcript is generated
// text paced like any other output: its length is the duration times
// Config.TranscriptTokensPerSecond, or a draw from Config.OSL when that is set.
type transcriptionKind struct{ generating }

// Limits of one transcription request's form.
const (
	// MaxAudioBytes is the largest audio file accepted: OpenAI's 25 MB.
	MaxAudioBytes = 25 << 20
	maxFormField  = 64 << 10 // a text field
	maxFormParts  = 32
)

// mediaJob is what the media kinds (transcriptions, images) carry from parse to serve.
type mediaJob struct {
	audioSec    float64     // the audio's duration
	audioTokens int         // its tokens (part of the input)
	n           int         // images to generate
	w, h        int         // their size
	url         bool        // response_format url: a data URL instead of b64_json
	retryAfter  int         // seconds, on a 429 for want of image memory
	images      *imageCache // where images come from (nil: processImages)
}

func (transcriptionKind) idPrefix() string { return "trsc-" }

func (transcriptionKind) outputParam(*record.Server) string { return "max_tokens" }

func (transcriptionKind) parse(in *inputs, body, contentType []byte, j *job, rec *record.Server) *apiError {
	form, e := readForm(body, contentType)
	if e != nil {
		return e
	}
	audio, ok := form.files[openai.FormFile]
	if !ok {
		return badRequest("missing_field", openai.FormFile, "you must provide the audio as a file part named %q", openai.FormFile)
	}
	j.model = form.values[openai.FormModel]
	rec.Model = j.model
	switch f := form.values[openai.FormResponseFormat]; f {
	case "", "json":
	default:
		return badRequest("invalid_value", openai.FormResponseFormat, "response_format %q is not served by the mock server; use json (the default)", f)
	}
	if s, ok := form.values[openai.FormStream]; ok {
		v, err := strconv.ParseBool(s)
		if err != nil {
			return badRequest("invalid_value", openai.FormStream, "stream must be true or false, got %q", s)
		}
		j.stream = v
	}
	rec.Stream = j.stream
	if l, ok := form.values[openai.FormLanguage]; ok && !isLanguageCode(l) {
		return badRequest("invalid_value", openai.FormLanguage, "language must be an ISO-639-1 code such as \"en\", got %q", l)
	}
	info, err := decodeAudio(audio)
	if err != nil {
		return badRequest("invalid_value", openai.FormFile, "the audio file is not valid: %v", err)
	}
	secs := info.Duration.Seconds()
	m := &mediaJob{audioSec: secs, audioTokens: media.WhisperAudio.Tokens(info.Duration)}
	j.media = m
	rec.AudioSeconds = secs
	ids, n := in.encodeBounded(form.values[openai.FormPrompt], in.maxModelLen())
	if e := in.checkLen(n+m.audioTokens, openai.FormFile); e != nil {
		return e
	}
	j.ids, rec.ISL, rec.TokenizationMode = ids, n+m.audioTokens, record.ModeTokenizerCall
	rec.AudioTokens, rec.TextISL = m.audioTokens, n // ISL counts the audio, as usage.prompt_tokens does
	// The transcript's length: proportional to the speech, or Config.OSL's draw
	// (decideOSL) within the default cap.
	j.maxOut = orInt(in.cfg.DefaultMaxTokens, DefaultMaxTokens)
	if in.cfg.OSL.IsZero() {
		j.maxOut = max(1, int(math.Round(secs*orFloat(in.cfg.TranscriptTokensPerSecond, DefaultTranscriptTokensPerSecond))))
	}
	return nil
}

func (transcriptionKind) usage(j *job, u openai.Usage) *openai.TranscriptionUsage {
	audio := 0
	if j.media != nil {
		audio = j.media.audioTokens
	}
	return &openai.TranscriptionUsage{Type: "tokens", InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		InputTokenDetails: &openai.TranscriptionInputUsed{AudioTokens: audio, TextTokens: u.PromptTokens - audio}}
}

func (k transcriptionKind) whole(dst []byte, rp *reply, _, text string, u openai.Usage) []byte {
	body, _ := json.Marshal(openai.Transcription{Text: text, Usage: k.usage(rp.j, u)})
	return append(dst, body...)
}

func (k transcriptionKind) frames(rp *reply) frames { return &transcriptFrames{k: k, j: rp.j} }

// transcriptFrames writes a transcription stream: a delta event per chunk, then the
// done event with the whole text and the usage.
type transcriptFrames struct {
	k    transcriptionKind
	j    *job
	text strings.Builder
}

func (f *transcriptFrames) start(buf []byte) []byte { return buf }

func (f *transcriptFrames) delta(buf []byte, _, _ bool, text string) []byte {
	f.text.WriteString(text)
	buf = sse.BeginData(buf)
	buf = append(buf, `{"type":"`+openai.EventTranscriptDelta+`","delta":`...)
	buf = openai.AppendString(buf, text)
	buf = append(buf, '}')
	return sse.EndData(buf)
}

func (f *transcriptFrames) finish(buf []byte, _ *gen, _ bool, u openai.Usage) []byte {
	b, _ := json.Marshal(openai.TranscriptDone{Type: openai.EventTranscriptDone, Text: f.text.String(), Usage: f.k.usage(f.j, u)})
	return sse.AppendData(buf, b)
}

// decodeAudio reads an uploaded clip's headers: WAV by its RIFF header, MP3 by an
// ID3 tag or a frame sync.
func decodeAudio(b []byte) (media.AudioInfo, error) {
	switch {
	case bytes.HasPrefix(b, []byte("RIFF")):
		return media.DecodeAudioInfo(b, media.WAV)
	case bytes.HasPrefix(b, []byte("ID3")) || len(b) > 1 && b[0] == 0xff && b[1]&0xe0 == 0xe0:
		return media.DecodeAudioInfo(b, media.MP3)
	}
	return media.AudioInfo{}, errors.New("neither WAV (no RIFF header) nor MP3 (no ID3 tag or frame sync); the mock server reads WAV and MP3")
}

// form is a multipart/form-data body read within bounds: its text fields and its
// file parts' bytes.
type form struct {
	values map[string]string
	files  map[string][]byte
}

// readForm reads a multipart/form-data body: at most maxFormParts parts, text fields
// of at most maxFormField bytes, files of at most MaxAudioBytes, held in memory (the
// server's body limit bounds the whole), never written to disk.
func readForm(body, contentType []byte) (*form, *apiError) {
	mt, params, err := mime.ParseMediaType(string(contentType))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, badRequest("invalid_value", "Content-Type", "want a multipart/form-data body with a boundary, got Content-Type %q", contentType)
	}
	f := &form{values: map[string]string{}, files: map[string][]byte{}}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for n := 0; ; n++ {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, badRequest("invalid_value", "body", "the multipart/form-data body is malformed: %v", err)
		}
		if n >= maxFormParts {
			return nil, badRequest("invalid_value", "body", "the form has more than %d parts", maxFormParts)
		}
		name := p.FormName()
		limit := maxFormField
		if p.FileName() != "" {
			limit = MaxAudioBytes
		}
		b, err := io.ReadAll(io.LimitReader(p, int64(limit)+1))
		if err != nil {
			return nil, badRequest("invalid_value", name, "reading form part %q: %v", name, err)
		}
		if len(b) > limit {
			return nil, badRequest("too_large", name, "form part %q is larger than %d bytes", name, limit)
		}
		if p.FileName() != "" {
			f.files[name] = b
		} else {
			f.values[name] = string(b)
		}
	}
	return f, nil
}

// isLanguageCode reports whether l looks like an ISO-639-1 code (two or three
// lower-case letters, as OpenAI takes).
func isLanguageCode(l string) bool {
	if len(l) < 2 || len(l) > 3 {
		return false
	}
	for _, c := range l {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
