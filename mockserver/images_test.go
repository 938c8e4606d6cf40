package mockserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/perfgate/perfgate/internal/openai"
)

// startImages runs a server whose images come from cache (nil: the process's).
func startImages(t *testing.T, cache *imageCache) *Server {
	t.Helper()
	s, err := New(WithConfig(Config{Fast: true}), WithTokenizer(gpt2(t)))
	if err != nil {
		t.Fatal(err)
	}
	s.in.images = cache // before Start: the handlers see it
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// postImages sends an image generation request and decodes the answer: the images'
// sizes (or an error's message and param).
func postImages(t *testing.T, s *Server, body string) (status int, sizes []string, e openai.ErrorBody, header http.Header) {
	t.Helper()
	resp, b := post(t, s.URL()+openai.PathImages, body)
	if resp.StatusCode != 200 {
		return resp.StatusCode, nil, errorBody(t, b), resp.Header
	}
	var r openai.ImagesResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: answer %.200q: %v", body, b, err)
	}
	for _, d := range r.Data {
		s := strings.TrimPrefix(d.URL, "data:image/png;base64,") + d.B64JSON
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("%s: image: %v", body, err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: image: %v", body, err)
		}
		sizes = append(sizes, fmt.Sprintf("%dx%d", cfg.Width, cfg.Height))
	}
	return 200, sizes, openai.ErrorBody{}, resp.Header
}

// TestImagesPixelBound: n × width × height is bounded per request. The 60-byte request
// for ten 4096x4096 images (a 383 MB answer, and 2 GB of the mock's memory, before the
// bound) is a 400 naming n, both numbers and the limit; a request at the bound is served.
func TestImagesPixelBound(t *testing.T) {
	s := startImages(t, newImageCache(64<<20))
	body := `{"model":"m","prompt":"a cat","n":10,"size":"4096x4096"}`
	status, _, e, _ := postImages(t, s, body)
	param := ""
	if e.Param != nil {
		param = *e.Param
	}
	if status != 400 || param != "n" || !strings.Contains(e.Message, "167772160 pixels") || !strings.Contains(e.Message, "limit of 16777216 pixels") {
		t.Errorf("%s: %d, param %q, %q; want 400 naming n, 167772160 pixels and the limit of 16777216", body, status, param, e.Message)
	}
	if status, _, e, _ := postImages(t, s, `{"model":"m","prompt":"a cat","n":8,"size":"2048x1025"}`); status != 400 || !strings.Contains(e.Message, "16793600 pixels") {
		t.Errorf("8 × 2048x1025, one row over the bound: %d %q; want 400", status, e.Message)
	}
	// 8 × 2048x1024 is the bound exactly; as data URLs, the other way to answer.
	status, sizes, e, _ := postImages(t, s, `{"model":"m","prompt":"a cat","n":8,"size":"2048x1024","response_format":"url"}`)
	if status != 200 || len(sizes) != 8 || sizes[0] != "2048x1024" || sizes[7] != "2048x1024" {
		t.Errorf("8 × 2048x1024, at the bound: %d %v %q; want 8 images of 2048x1024", status, sizes, e.Message)
	}
	s.Close()
	if rej := s.RejectedRecords(); len(rej) != 2 || rej[0].Param != "n" {
		t.Errorf("rejected records %+v; want the two over the bound, naming n", rej)
	}
}

// TestImageCacheBytesBounded: after requests for many sizes, the cache holds at most
// its byte bound (its own accounting), and so does the heap: the images of sizes no
// longer asked for are dropped, least recently used first. Before the bound the cache
// kept 64 sizes for ever, whatever their bytes.
func TestImageCacheBytesBounded(t *testing.T) {
	const limit = 4 << 20
	cache := newImageCache(limit)
	s := startImages(t, cache)
	// One request first, so that the baseline holds what every request allocates once.
	postImages(t, s, `{"model":"m","prompt":"a cat","size":"8x8"}`)
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	before := heap()
	made := 0
	for i := range 40 {
		size := fmt.Sprintf("512x%d", 480+i) // about 0.6 MB of base64 each
		status, sizes, e, _ := postImages(t, s, `{"model":"m","prompt":"a cat","n":2,"size":"`+size+`"}`)
		if status != 200 || len(sizes) != 2 || sizes[1] != size {
			t.Fatalf("%s: %d %v %q", size, status, sizes, e.Message)
		}
		b, held, _ := cache.usage()
		if b > limit || held != 0 {
			t.Fatalf("after %s: the cache holds %d bytes (%d pinned); want at most %d, none pinned once answered", size, b, held, limit)
		}
		img := cache.pin([2]int{512, 480 + i})
		if img == nil {
			t.Fatalf("%s, just served, is not cached", size)
		}
		made += len(img.b64)
		cache.release(img)
	}
	b, _, n := cache.usage()
	if n < 2 || n >= 40 || int64(n)*int64(made/40) > limit+limit/4 {
		t.Errorf("the cache holds %d images (%d bytes); want the few most recent that fit in %d bytes", n, b, limit)
	}
	// The last size is still cached: asking again does not draw it.
	if e := cache.pin([2]int{512, 519}); e == nil {
		t.Errorf("the most recent size was dropped")
	} else {
		cache.release(e)
	}
	if e := cache.pin([2]int{512, 480}); e != nil {
		t.Errorf("the oldest size is still cached")
	}
	// The heap holds the cache, not every image made (about 23 MB); the margin is for
	// the connections' and the runtime's own.
	if grown := int64(heap()) - int64(before); grown > limit+8<<20 {
		t.Errorf("HeapInuse grew by %d bytes over 40 images of %d bytes in all; want at most the cache's %d + 8 MiB", grown, made, limit)
	} else {
		t.Logf("HeapInuse grew by %d bytes over 40 images of %d bytes in all (cache bound %d)", grown, made, limit)
	}
}

// TestImageMemoryRefusal: when the images being sent leave no room for a new one, the
// request is a 429 with Retry-After, naming the limit, and recorded as refused; an
// image already held is served all the same.
func TestImageMemoryRefusal(t *testing.T) {
	cache := newImageCache(64 << 10)
	s := startImages(t, cache)
	status, _, e, h := postImages(t, s, `{"model":"m","prompt":"a cat","size":"512x512"}`)
	if status != 429 || h.Get("Retry-After") != "1" || e.Type != openai.ErrRateLimit || !strings.Contains(e.Message, "limit of 65536 bytes") {
		t.Errorf("an image larger than the whole bound: %d (Retry-After %q) %s %q; want 429 naming the limit", status, h.Get("Retry-After"), e.Type, e.Message)
	}
	// A pinned image (an answer being sent) and a second that does not fit beside it.
	small, err := cache.get(64, 64)
	if err != nil {
		t.Fatal(err)
	}
	_, held, _ := cache.usage()
	side := 1
	for ; ; side++ { // the smallest square that does not fit beside it
		if e, err := cache.get(side, side); err != nil {
			break
		} else {
			cache.release(e)
		}
	}
	status, _, e, _ = postImages(t, s, fmt.Sprintf(`{"model":"m","prompt":"a cat","size":"%dx%d"}`, side, side))
	if status != 429 || !strings.Contains(e.Message, fmt.Sprintf("hold %d bytes", held)) {
		t.Errorf("%dx%d beside %d pinned bytes: %d %q; want 429", side, side, held, status, e.Message)
	}
	if status, sizes, e, _ := postImages(t, s, `{"model":"m","prompt":"a cat","n":3,"size":"64x64"}`); status != 200 || len(sizes) != 3 {
		t.Errorf("the pinned size: %d %v %q; want its 3 images", status, sizes, e.Message)
	}
	cache.release(small)
	if status, _, e, _ := postImages(t, s, fmt.Sprintf(`{"model":"m","prompt":"a cat","size":"%dx%d"}`, side, side)); status != 200 {
		t.Errorf("%dx%d once nothing is pinned: %d %q; want 200", side, side, status, e.Message)
	}
	s.Close()
	if rej := s.RejectedRecords(); len(rej) != 2 || rej[0].Rejected != "image_memory" || rej[0].Status != 429 {
		t.Errorf("rejected records %+v; want the two 429s as image_memory", rej)
	}
}

// TestImagesBodyRead: the streamed answer reads the same through Read in small pieces
// as through WriteTo, and is the marshalled answer with the image in each entry.
func TestImagesBodyRead(t *testing.T) {
	img := &cachedImage{b64: []byte("QUJD")}
	answer, _ := json.Marshal(openai.ImagesResponse{Created: 1, Data: []openai.ImageData{{B64JSON: imageMark}, {B64JSON: imageMark}}})
	want, _ := json.Marshal(openai.ImagesResponse{Created: 1, Data: []openai.ImageData{{B64JSON: "QUJD"}, {B64JSON: "QUJD"}}})
	cache := newImageCache(1 << 20)
	var w bytes.Buffer
	b := newImagesBody(answer, img, cache)
	if _, err := b.WriteTo(&w); err != nil || w.String() != string(want) || b.size != len(want) {
		t.Errorf("WriteTo = %s, %v (size %d); want %s", w.Bytes(), err, b.size, want)
	}
	if err := iotest.TestReader(newImagesBody(answer, img, cache), want); err != nil {
		t.Errorf("Read: %v", err)
	}
}
