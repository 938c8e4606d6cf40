package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// EndpointTranscriptions is OpenAI speech to text, AIPerf's audio_transcription.
const EndpointTranscriptions Endpoint = openai.KindTranscriptions // POST /v1/audio/transcriptions

// transcriptionAPI is OpenAI speech to text: each request's audio clip (drawn from
// the Media settings, AudioLength fixed:DefaultAudioSeconds when unset) as the
// multipart/form-data file, with the model, stream=true when streaming, and
// Config.ExtraBody's fields as form fields (language, response_format, prompt,
// temperature, …). The answer is {"text", "usage"} or transcript.text.delta events
// ending with transcript.text.done (no [DONE]); the transcript is the output.
type transcriptionAPI struct{ openaiAPI }

func (transcriptionAPI) path() string       { return openai.PathTranscriptions }
func (transcriptionAPI) generates() bool    { return true }
func (transcriptionAPI) endsWithDone() bool { return false }
func (transcriptionAPI) audioOnly()         {}
func (transcriptionAPI) media() bool        { return true }

func (transcriptionAPI) body(b *bodyBuilder, t *dataset.Turn, tc *turnCtx, stream bool) ([]byte, string) {
	c := firstClip(tc.media)
	est := 512
	if c != nil && c.path == "" && c.audFormat == media.WAV {
		est += int(c.dur.Seconds()*float64(c.rate*c.ch*2)) + 64 // 16-bit PCM
	}
	w := bytes.NewBuffer(make([]byte, 0, est))
	field := func(name, value string) {
		w.WriteString("--" + formBoundary + "\r\nContent-Disposition: form-data; name=\"")
		w.WriteString(quoteEscaper.Replace(name))
		w.WriteString("\"\r\n\r\n")
		w.WriteString(value)
		w.WriteString("\r\n")
	}
	field(openai.FormModel, b.model(t))
	if stream {
		field(openai.FormStream, "true")
	}
	for _, k := range b.formKeys {
		field(k, formValue(b.cfg.ExtraBody[k]))
	}
	if c != nil {
		w.WriteString("--" + formBoundary + "\r\nContent-Disposition: form-data; name=\"" + openai.FormFile + "\"; filename=\"audio." + string(c.audFormat) +
			"\"\r\nContent-Type: " + audioMIME(c.audFormat) + "\r\n\r\n")
		if err := writeClip(w, c); err != nil {
			c.fileFailed = err
			// The clip cannot be read: the request goes out as this text, which the
			// server refuses, so the failure is recorded with the request.
			return []byte("loadgen: audio clip: " + err.Error()), "text/plain"
		}
		w.WriteString("\r\n")
	}
	w.WriteString("--" + formBoundary + "--\r\n")
	return w.Bytes(), formContentType
}

// formBoundary separates the parts of every multipart/form-data body the load
// generator sends. It is fixed, so the same workload gives the same bytes (the dataset
// fingerprint compares runs by them), and long and arbitrary enough that no clip or
// field holds it by chance.
const formBoundary = "perfgate-form-0c5e7d1b9a3f48e6b2d4f1a8c7e9305d"

const formContentType = "multipart/form-data; boundary=" + formBoundary

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

// writeClip writes c's bytes: its file's, or the synthetic clip's.
func writeClip(w io.Writer, c *mediaPart) error {
	if c.path != "" {
		f, err := os.Open(c.path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	}
	return media.EncodeAudio(w, c.audFormat, c.rate, c.ch, c.dur, c.seed)
}

func audioMIME(f media.AudioFormat) string {
	if f == media.MP3 {
		return "audio/mpeg"
	}
	return "audio/wav"
}

// firstClip is the first audio part of parts, nil if none.
func firstClip(parts []mediaPart) *mediaPart {
	for i := range parts {
		if parts[i].audio {
			return &parts[i]
		}
	}
	return nil
}

// recordClip records the clip a request of an audio kind sent: its duration as the
// server reads it back (AudioDuration), and the input as the server counts it, the
// prompt's tokens and the clip's (ISLTemplate, which tokenizer_match compares with the
// server's count). Other kinds' records are left alone.
func recordClip(a adapter, parts []mediaPart, rec *record.Client) {
	if _, ok := a.(audioInput); !ok {
		return
	}
	c := firstClip(parts)
	if c == nil || c.fileFailed != nil {
		return
	}
	rec.AudioDuration = c.dur
	if c.path == "" {
		rec.AudioDuration = media.EncodedDuration(c.audFormat, c.rate, c.dur)
	}
	rec.ISLTemplate = rec.ISL + rec.AudioTokens
}

// audioInput is an adapter whose input is one audio clip (audio_transcription): each
// request gets one from the Media settings, and its turn's prompt is not sent.
type audioInput interface{ audioOnly() }

// DefaultAudioSeconds is the clip duration of an audio kind's requests when
// Media.AudioLength and Media.AudioDir are unset.
const DefaultAudioSeconds = 5.0

// newSource is the run's source of turns: the prompts ([newPromptSource]), without
// their text for a kind whose input is an audio clip (its ISL is then 0, its clip
// counted in AudioTokens).
func newSource(ctx context.Context, cfg *Config, tok *tokenizer.Tokenizer) (dataset.Source, error) {
	src, err := newPromptSource(ctx, cfg, tok)
	if err != nil {
		return nil, err
	}
	if _, ok := adapterOf(cfg.endpoint()).(audioInput); !ok {
		return src, nil
	}
	return noPrompts{src}, nil
}

// noPrompts blanks the prompts of src's turns.
type noPrompts struct{ src dataset.Source }

func (s noPrompts) Next() (dataset.Conversation, bool) {
	c, ok := s.src.Next()
	for i := range c.Turns {
		t := &c.Turns[i]
		t.Prompt, t.ISL, t.RequestedISL, t.Exact = "", 0, 0, true
	}
	return c, ok
}

// formValue is an extra_body value as a form field: a string as it is, anything else
// as its JSON.
func formValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// parseWhole reads {"text": …, "usage": {"input_tokens", "output_tokens", …}} in one
// pass (StreamChunk.Transcript).
func (transcriptionAPI) parseWhole(p *openai.ChunkParser, body []byte, ch *openai.StreamChunk, res *result) (content, choices bool, err error) {
	if err := p.Parse(body, ch); err != nil {
		return false, false, err
	}
	if ch.Transcript == nil {
		return false, false, errors.New("loadgen: transcription has no text")
	}
	res.add(ch.Transcript, nil)
	return len(ch.Transcript) > 0, true, nil
}

// event applies a transcript event: a delta carries output; the done event, usage.
func (transcriptionAPI) event(ch *openai.StreamChunk, rec *record.Client) bool {
	if ch.HasUsage {
		rec.UsagePromptTokens, rec.UsageCompletionTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
	}
	return string(ch.Type) == openai.EventTranscriptDelta
}

// formKeys returns extra's keys sorted, without the fields a form kind sets itself.
func formKeys(extra map[string]any) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if k != openai.FormFile && k != openai.FormModel && k != openai.FormStream {
			out = append(out, k)
		}
	}
	return out
}
