package mockserver

import (
	"bytes"
	"container/list"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
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
	// MaxImagePixelsPerRequest bounds n × width × height: one 4096x4096 image, or ten
	// 1536x1024 (the largest that OpenAI's image models make). The answer carries n
	// copies of the image in base64, about 2.3 bytes a pixel, so it is at most about
	// 40 MB; a larger request is a 400 naming n.
	MaxImagePixelsPerRequest = MaxImageSide * MaxImageSide
)

// ImageMemory bounds the images the process holds, in bytes of base64 PNG: the ones
// cached for later requests and the ones answers are being sent from, alike (an answer
// streams its n copies from the one it holds). Cached images nobody is sending are
// dropped least recently used first to make room; when the images being sent leave no
// room for a new one, its request is answered 429 with Retry-After. Every mock server
// in a process shares the bound.
const ImageMemory = 256 << 20

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
	if px := m.n * w * h; px > MaxImagePixelsPerRequest {
		return badRequest("invalid_value", "n", "n × size = %d × %dx%d = %d pixels, over the mock server's limit of %d pixels a request (one %dx%d image, or ten 1536x1024); lower n or size",
			m.n, w, h, px, MaxImagePixelsPerRequest, MaxImageSide, MaxImageSide)
	}
	m.w, m.h = w, h
	m.retryAfter, m.images = orInt(in.cfg.Faults.RetryAfterSeconds, DefaultRetryAfterSecs), in.images
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

// serve waits Config.ImageLatency for each image, then answers with the images: the
// JSON around n copies of one image from the process's cache, streamed from it (see
// [imagesBody]), or a 429 when the images being sent leave the cache no room for it.
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
	cache := m.images
	if cache == nil {
		cache = processImages
	}
	img, err := cache.get(m.w, m.h)
	if err != nil {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(m.retryAfter))
		h.reject(ctx, c, &apiError{status: 429, typ: openai.ErrRateLimit, reason: "image_memory", param: "size", code: "rate_limit_exceeded", msg: err.Error()})
		return
	}
	resp := openai.ImagesResponse{Created: c.recv.Unix(), Size: strconv.Itoa(m.w) + "x" + strconv.Itoa(m.h), OutputFormat: "png",
		Usage: &openai.ImageUsage{InputTokens: c.rec.ISL, TotalTokens: c.rec.ISL}}
	entry := openai.ImageData{B64JSON: imageMark}
	if m.url {
		entry = openai.ImageData{URL: "data:image/png;base64," + imageMark}
	}
	resp.Data = make([]openai.ImageData, m.n)
	for i := range resp.Data {
		resp.Data[i] = entry
	}
	body, _ := json.Marshal(resp)
	ib := newImagesBody(body, img, cache)
	ctx.SetContentType("application/json")
	ctx.Response.SetBodyStream(ib, ib.size)
	c.rec.Status = 200
	h.finish(c, j.ids)
}

// imageMark stands for the image in the marshalled answer: a control character, so
// that JSON writes it escaped and nothing else in the answer looks like it.
const imageMark = "\x00"

// imagesBody is an image answer's body: the marshalled answer with each escaped
// imageMark replaced by the image, which is written from the cache entry and never
// copied, so an answer of n images costs the memory of one. fasthttp closes it once the
// answer is written or dropped, which unpins the entry.
type imagesBody struct {
	segs   [][]byte // the answer's pieces: JSON, image, JSON, …
	size   int      // their total length (the Content-Length)
	cache  *imageCache
	img    *cachedImage // nil once released
	i, off int          // read position: segs[i][off:]
}

func newImagesBody(answer []byte, img *cachedImage, cache *imageCache) *imagesBody {
	parts := bytes.Split(answer, []byte(`\u0000`))
	b := &imagesBody{cache: cache, img: img, segs: make([][]byte, 0, 2*len(parts)-1)}
	for k, p := range parts {
		if k > 0 {
			b.segs = append(b.segs, img.b64)
			b.size += len(img.b64)
		}
		b.segs = append(b.segs, p)
		b.size += len(p)
	}
	return b
}

// Read reads the answer from where the last read stopped.
func (b *imagesBody) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && b.i < len(b.segs) {
		k := copy(p[n:], b.segs[b.i][b.off:])
		n, b.off = n+k, b.off+k
		if b.off == len(b.segs[b.i]) {
			b.i, b.off = b.i+1, 0
		}
	}
	if n == 0 && b.i == len(b.segs) {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo writes the rest of the answer to w, each piece in one Write (fasthttp's
// buffered writer passes a large one straight to the connection).
func (b *imagesBody) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for ; b.i < len(b.segs); b.i, b.off = b.i+1, 0 {
		n, err := w.Write(b.segs[b.i][b.off:])
		total += int64(n)
		if err != nil {
			b.off += n
			return total, err
		}
	}
	return total, nil
}

// Close unpins the image; it may be called more than once.
func (b *imagesBody) Close() error {
	if b.img != nil {
		b.cache.release(b.img)
		b.img = nil
	}
	return nil
}

// imageCache holds images as answers carry them, PNG in base64, one per size: a load
// test asks for a few sizes many times, and drawing and encoding a large image costs
// more than serving it. Its bytes (each image's base64 plus imageEntryOverhead) stay
// within limit. An image answers are being sent from is pinned (refs > 0) and counts;
// the others are kept in least-recently-used order and dropped from the back to make
// room. One image is drawn at a time, so the transient memory of drawing (about 10
// bytes a pixel) is one image's. Safe for concurrent use.
type imageCache struct {
	limit int64
	draw  sync.Mutex // held while an image is drawn and encoded
	mu    sync.Mutex // guards what follows
	bytes int64      // of every entry
	held  int64      // of the pinned entries
	m     map[[2]int]*cachedImage
	lru   list.List // the entries not pinned, most recently used first
}

// cachedImage is one size's image.
type cachedImage struct {
	key  [2]int
	b64  []byte // read-only once cached
	refs int    // answers being sent from it
	el   *list.Element
}

// imageEntryOverhead is what an entry costs besides its base64: the map slot, the
// entry and its list element. Counting it bounds the entries of tiny images too.
const imageEntryOverhead = 256

func (e *cachedImage) cost() int64 { return int64(len(e.b64)) + imageEntryOverhead }

func newImageCache(limit int64) *imageCache {
	return &imageCache{limit: limit, m: map[[2]int]*cachedImage{}}
}

// processImages is the cache of every mock server in the process, so that
// [ImageMemory] bounds the process.
var processImages = newImageCache(ImageMemory)

// get returns the w × h image (media.EncodeImage's, seeded by its size), pinned until
// [imageCache.release]; an error when the pinned images leave no room for it.
func (c *imageCache) get(w, h int) (*cachedImage, error) {
	key := [2]int{w, h}
	if e := c.pin(key); e != nil {
		return e, nil
	}
	c.draw.Lock()
	defer c.draw.Unlock()
	if e := c.pin(key); e != nil {
		return e, nil // drawn while this request waited for its turn
	}
	var buf bytes.Buffer
	_ = media.EncodeImage(&buf, media.PNG, w, h, uint64(w)<<32|uint64(h)) // parse checked the size
	e := &cachedImage{key: key, b64: make([]byte, base64.StdEncoding.EncodedLen(buf.Len())), refs: 1}
	base64.StdEncoding.Encode(e.b64, buf.Bytes())
	c.mu.Lock()
	defer c.mu.Unlock()
	need := e.cost()
	if c.held+need > c.limit {
		return nil, fmt.Errorf("the mock server's images being sent hold %d bytes, and a %dx%d image (%d bytes of base64) would take them past the limit of %d bytes (mockserver.ImageMemory); retry later",
			c.held, w, h, len(e.b64), c.limit)
	}
	for c.bytes+need > c.limit {
		old := c.lru.Remove(c.lru.Back()).(*cachedImage)
		delete(c.m, old.key)
		c.bytes -= old.cost()
	}
	c.m[key] = e
	c.bytes += need
	c.held += need
	return e, nil
}

// pin returns the cached image of key, pinned, or nil.
func (c *imageCache) pin(key [2]int) *cachedImage {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[key]
	if e == nil {
		return nil
	}
	if e.refs == 0 {
		c.lru.Remove(e.el)
		e.el = nil
		c.held += e.cost()
	}
	e.refs++
	return e
}

// release unpins e: once no answer is sent from it, it is the most recently used of
// the entries that may be dropped.
func (c *imageCache) release(e *cachedImage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		c.held -= e.cost()
		e.el = c.lru.PushFront(e)
	}
}

// usage returns the bytes of every entry and of the pinned ones, and the entries.
func (c *imageCache) usage() (bytes, held int64, entries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.held, len(c.m)
}
