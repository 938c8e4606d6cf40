package loadgen

import (
	"encoding/json"
	"errors"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/loadgen/dataset"
)

// EndpointImages is OpenAI image generation, AIPerf's image_generation.
const EndpointImages Endpoint = openai.KindImages // POST /v1/images/generations

// imagesAPI is OpenAI image generation: the prompt, response_format b64_json (as
// AIPerf sends), and Config.ExtraBody's fields (n, size, quality, …; they win). The
// answer's images are counted into the record (image_throughput, image_latency);
// nothing is generated as text, and it does not stream.
type imagesAPI struct{ openaiAPI }

func (imagesAPI) path() string { return openai.PathImages }

// imageBody is the request body before Config.ExtraBody's fields.
type imageBody struct {
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	ResponseFormat string `json:"response_format"`
}

func (imagesAPI) body(b *bodyBuilder, t *dataset.Turn, _ *turnCtx, _ bool) ([]byte, string) {
	out, _ := json.Marshal(imageBody{Model: b.model(t), Prompt: t.Prompt, ResponseFormat: openai.RespFormatB64JSON})
	return spliceExtra(out, b.extra), ""
}

// parseWhole reads {"data": [{"b64_json" | "url"}, …], "usage": …} in one pass: the
// images are the entries that carry either (StreamChunk.Images); an answer without any
// is malformed.
func (imagesAPI) parseWhole(p *openai.ChunkParser, body []byte, ch *openai.StreamChunk, res *result) (content, choices bool, err error) {
	if err := p.Parse(body, ch); err != nil {
		return false, false, err
	}
	if ch.Images == 0 {
		return false, false, errors.New("loadgen: the image answer carries no image")
	}
	res.images = ch.Images
	return false, true, nil
}
