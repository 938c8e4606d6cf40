package mockserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/media"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
)

// imagesKind is OpenAI image generation (/v1/images/generations): a prompt in, n PNG
// images of the requested size out, after Config.ImageLatency per image. They come
// as b64_json (the default), or for response_format url as data: URLs, since the mock
// stores nothing to fetch. Streaming (partial images) is refused.
type imagesKind struct{}

// Limits of an image generation request.
const (
	MaxImagesPerRequest = 10   // OpenAI's limit on n
	MaxImageSide        = 4096 // pixels, either side
	DefaultImageSize    = "1024x1024"
)

func (imagesKind) parse(in *inputs, body, _ []byte, j *job, rec *record.Server) *apiError {
	var req openai.ImageRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model, rec.Model = req.Model, req.Model
	if req.Stream {
		return badRequest("invalid_value", "stream", "streamed image generation (partial images) is not served by the mock server")
	}
	if req.Prompt == nil || strings.TrimSpace(*req.Prompt) == "" {
		return badRequest("missing_field", "prompt", "you must provide a prompt parameter")
	}
	m := &mediaJob{n: 1}
	if req.N != nil {
		if *req.N < 1 || *req.N > MaxImagesPerRequest {
			return badRequest("invalid_value", "n", "n must be in [1, %d], got %d", MaxImagesPerRequest, *req.N)
		}
		m.n = *req.N
	}
	size := req.Size
	if size == "" || size == "auto" {
		size = DefaultImageSize
	}
	w, h, ok := parseSize(size)
	if !ok || media.CheckImageSize(w, h) != nil {
		return badRequest("invalid_value", "size", "size must be \"WIDTHxHEIGHT\" with each side in [1, %d] pixels (or \"auto\"), got %q", MaxImageSide, req.Size)
	}
	m.w, m.h = w, h
	switch req.ResponseFormat {
	case "", openai.RespFormatB64JSON:
	case openai.RespFormatURL:
		m.url = true
	default:
		return badRequest("invalid_value", "response_format", "response_format must be %q or %q, got %q", openai.RespFormatB64JSON, openai.RespFormatURL, req.ResponseFormat)
	}
	if f := req.OutputFormat; f != "" && f != "png" {
		return badRequest("invalid_value", "output_format", "output_format %q is not served by the mock server; it makes png", f)
	}
	ids, n := in.encodeBounded(*req.Prompt, in.maxModelLen())
	if e := in.checkLen(n, "prompt"); e != nil {
		return e
	}
	j.media, j.ids, rec.ISL, rec.TokenizationMode = m, ids, n, record.ModeTokenizerCall
	rec.ImagesGenerated = m.n
	if !in.cfg.Fast {
		j.imageLatency = in.cfg.ImageLatency.Distribution
		if j.imageLatency == nil {
			j.imageLatency = distribution.Fixed{Value: DefaultImageLatencyMs}
		}
		j.latencyScale = orFloat(in.cfg.LatencyScale, 1)
	}
	return nil
}

// parseSize reads "WIDTHxHEIGHT".
func parseSize(s string) (w, h int, ok bool) {
	ws, hs, found := strings.Cut(s, "x")
	if !found {
		return 0, 0, false
	}
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil || w < 1 || h < 1 || w > MaxImageSide || h > MaxImageSide {
		return 0, 0, false
	}
	return w, h, true
}

// serve waits Config.ImageLatency for each image, then answers with the images.
func (imagesKind) serve(h host, ctx *fasthttp.RequestCtx, c *call, j *job, rng *rand.Rand) {
	m := j.media
	var wait time.Duration
	if j.imageLatency != nil {
		src := distribution.WithSrc(j.imageLatency, rngSource{rng})
		for range m.n {
			wait += time.Duration(max(src.Rand(), 0) * j.latencyScale * float64(time.Millisecond))
		}
	}
	if !h.sleep(c, wait, ctx.Conn()) {
		return
	}
	b64 := pngBase64(m.w, m.h)
	resp := openai.ImagesResponse{Created: c.recv.Unix(), Size: strconv.Itoa(m.w) + "x" + strconv.Itoa(m.h), OutputFormat: "png",
		Usage: &openai.ImageUsage{InputTokens: c.rec.ISL, TotalTokens: c.rec.ISL}}
	img := openai.ImageData{B64JSON: b64}
	if m.url {
		img = openai.ImageData{URL: "data:image/png;base64," + b64} // one copy for all n
	}
	resp.Data = make([]openai.ImageData, m.n)
	for i := range resp.Data {
		resp.Data[i] = img
	}
	body, _ := json.Marshal(resp)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
	c.rec.Status = 200
	h.finish(c, j.ids)
}

// pngs caches one PNG per size, in base64 as the answer carries it: a load test asks
// for a few sizes many times, and encoding a large image (and its base64) costs more
// than serving it.
var pngs = struct {
	sync.Mutex
	m map[[2]int]string
}{m: map[[2]int]string{}}

// maxCachedSizes bounds the cache; sizes past it are encoded per request.
const maxCachedSizes = 64

// pngBase64 returns a w×h PNG (media.EncodeImage's, seeded by its size) in base64.
func pngBase64(w, h int) string {
	key := [2]int{w, h}
	pngs.Lock()
	b, ok := pngs.m[key]
	pngs.Unlock()
	if ok {
		return b
	}
	var buf bytes.Buffer
	_ = media.EncodeImage(&buf, media.PNG, w, h, uint64(w)<<32|uint64(h)) // parse checked the size
	b = base64.StdEncoding.EncodeToString(buf.Bytes())
	pngs.Lock()
	if len(pngs.m) < maxCachedSizes {
		pngs.m[key] = b
	}
	pngs.Unlock()
	return b
}
