package openai

import "github.com/perfgate/perfgate/internal/jsonscan"

// The wire facts of the two media kinds: speech to text (/v1/audio/transcriptions,
// a multipart/form-data upload answered with JSON or a stream of transcript events)
// and image generation (/v1/images/generations, JSON both ways). The field and event
// names are those of OpenAI's API reference and of the openai-go SDK
// (audiotranscription.go, image.go), which the mock's tests read its answers with.

// The multipart/form-data fields of a transcription request.
const (
	FormFile           = "file"            // the audio, a file part
	FormModel          = "model"           // the model
	FormResponseFormat = "response_format" // "json" (the default) or "text"
	FormStream         = "stream"          // "true" streams transcript events
	FormLanguage       = "language"        // ISO-639-1 code of the speech, optional
	FormPrompt         = "prompt"          // text that guides the transcript, optional
)

// Transcription stream events: the SSE data of each carries its type in "type" (no
// event line is needed), and the stream ends after the done event, without [DONE].
const (
	EventTranscriptDelta = "transcript.text.delta" // {"type", "delta"}: more text
	EventTranscriptDone  = "transcript.text.done"  // {"type", "text", "usage"}: the whole text
)

// Transcription is the whole answer of a transcription request (response_format
// json).
type Transcription struct {
	Text  string              `json:"text"`
	Usage *TranscriptionUsage `json:"usage,omitempty"`
}

// TranscriptionUsage is a transcription's usage, of type "tokens": the audio (and
// prompt text) in, the transcript out.
type TranscriptionUsage struct {
	Type              string                  `json:"type"`
	InputTokens       int                     `json:"input_tokens"`
	InputTokenDetails *TranscriptionInputUsed `json:"input_token_details,omitempty"`
	OutputTokens      int                     `json:"output_tokens"`
	TotalTokens       int                     `json:"total_tokens"`
}

// TranscriptionInputUsed splits a transcription's input tokens into audio and text.
type TranscriptionInputUsed struct {
	AudioTokens int `json:"audio_tokens"`
	TextTokens  int `json:"text_tokens"`
}

// TranscriptDelta is the data of a [EventTranscriptDelta] event.
type TranscriptDelta struct {
	Type  string `json:"type"`
	Delta string `json:"delta"`
}

// TranscriptDone is the data of a [EventTranscriptDone] event.
type TranscriptDone struct {
	Type  string              `json:"type"`
	Text  string              `json:"text"`
	Usage *TranscriptionUsage `json:"usage,omitempty"`
}

// Image response formats.
const (
	RespFormatB64JSON = "b64_json" // the image's bytes, base64, in data[].b64_json
	RespFormatURL     = "url"      // a URL to fetch the image from, in data[].url
)

// ImageRequest is an image generation request.
type ImageRequest struct {
	Model          string  `json:"model"`
	Prompt         *string `json:"prompt"`
	N              *int    `json:"n,omitempty"`
	Size           string  `json:"size,omitempty"`            // "WIDTHxHEIGHT" or "auto"
	ResponseFormat string  `json:"response_format,omitempty"` // RespFormatB64JSON or RespFormatURL
	OutputFormat   string  `json:"output_format,omitempty"`   // "png" (gpt-image-1's field)
	Quality        string  `json:"quality,omitempty"`
	Style          string  `json:"style,omitempty"`
	Stream         bool    `json:"stream,omitempty"`
	User           string  `json:"user,omitempty"`
}

// ImagesResponse is the answer to an image generation request.
type ImagesResponse struct {
	Created      int64       `json:"created"`
	Data         []ImageData `json:"data"`
	Size         string      `json:"size,omitempty"`
	OutputFormat string      `json:"output_format,omitempty"`
	Usage        *ImageUsage `json:"usage,omitempty"`
}

// ImageData is one generated image: its bytes in base64 or a URL.
type ImageData struct {
	B64JSON       string `json:"b64_json,omitempty"`
	URL           string `json:"url,omitempty"`
	RevisedPrompt string `json:"revised_prompt,omitempty"`
}

// ImageUsage is an image generation's usage (gpt-image-1's shape): the prompt's
// tokens in.
type ImageUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// images counts, into *n, the entries of the array at b[i] whose b64_json or url is
// a non-empty string (StreamChunk.Images); any other value is skipped.
func (p *ChunkParser) images(b []byte, i int, n *int) (int, error) {
	return p.array(b, i, func(b []byte, j int) (int, error) {
		if b[j] != '{' {
			return jsonscan.Skip(b, j)
		}
		img := false
		end, err := jsonscan.Object(b, j, func(k, b []byte, j int) (int, error) {
			if (string(k) == "b64_json" || string(k) == "url") && j+1 < len(b) && b[j] == '"' && b[j+1] != '"' {
				img = true
			}
			return jsonscan.Skip(b, j)
		})
		if img {
			*n++
		}
		return end, err
	})
}
