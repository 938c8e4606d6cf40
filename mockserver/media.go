package mockserver

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
)

// countMedia validates the image_url and input_audio parts of a chat request's
// messages and counts their prompt tokens by the served model's rules
// (internal/media, the load generator's too): the image rule is picked from the
// request's model, then the tokenizer's name and source; audio is 25 tokens a second.
// An image is checked from its PNG or JPEG header, a clip from its WAV chunks or MP3
// frame headers; malformed data, a format other than the one declared, or a size
// either side refuses is a 400 naming the part. Image URLs other than data URIs are
// refused: the mock fetches nothing.
func (in *inputs) countMedia(model string, msgs []openai.Message) (images, audio int, e *apiError) {
	var rule *media.ImageRule
	for i, m := range msgs {
		for k, p := range m.Content.Parts {
			param := fmt.Sprintf("messages[%d].content[%d]", i, k)
			switch p.Type {
			case "image_url":
				if p.ImageURL == nil || p.ImageURL.URL == "" {
					return 0, 0, badRequest("missing_field", param+".image_url.url", "%s: an image_url part needs image_url.url", param)
				}
				if rule == nil {
					r := media.ImageRuleFor(model, in.tok.Name(), in.tok.Source())
					rule = &r
				}
				n, err := media.ImageURLTokens(p.ImageURL.URL, *rule)
				if err != nil {
					return 0, 0, badRequest("invalid_image", param+".image_url.url", "%s: %v", param, err)
				}
				images += n
			case "input_audio":
				if p.InputAudio == nil || p.InputAudio.Data == "" {
					return 0, 0, badRequest("missing_field", param+".input_audio.data", "%s: an input_audio part needs input_audio.data", param)
				}
				n, err := media.InputAudioTokens(p.InputAudio.Format, p.InputAudio.Data, media.WhisperAudio)
				if err != nil {
					return 0, 0, badRequest("invalid_audio", param+".input_audio", "%s: %v", param, err)
				}
				audio += n
			}
		}
	}
	return images, audio, nil
}

// addMedia adds a chat request's media tokens to its counted input: ISL (and so
// usage.prompt_tokens) includes them, TextISL keeps the text-only count.
func (in *inputs) addMedia(images, audio int, rec *record.Server) *apiError {
	if images+audio == 0 {
		return nil
	}
	rec.ImageTokens, rec.AudioTokens, rec.TextISL = images, audio, rec.ISL
	rec.ISL += images + audio
	return in.checkLen(rec.ISL, "messages")
}
