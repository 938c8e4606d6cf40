package mockserver

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perfgate/perfgate/internal/openai"
)

// BenchmarkTokenWork measures the server's own per-token work on the streaming path
// (draw a token, build its chat chunk with SSE framing, read the clock), excluding the
// socket.
func BenchmarkTokenWork(b *testing.B) {
	g, err := newGenerator(gpt2(b))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	h := openai.ChunkHeader{ID: "chatcmpl-req-1", Created: 1700000000, Model: "mock-model"}
	buf := make([]byte, 0, 512)
	i := 0
	for b.Loop() {
		_, piece := g.next(rng, zipfPair{}, i)
		buf = append(buf[:0], "data: "...)
		buf = openai.AppendChatChunk(buf, h, "", piece, "", false)
		buf = append(buf, "\n\n"...)
		_ = time.Now()
		i++
	}
}

// BenchmarkParseChat measures per-request input handling for a 1k-token chat prompt:
// JSON decoding, validation, ChatML rendering and gpt2 encoding.
func BenchmarkParseChat(b *testing.B) {
	s, err := New(WithTokenizer(gpt2(b)))
	if err != nil {
		b.Fatal(err)
	}
	text := ""
	for len(text) < 4500 {
		text += "The quick brown fox jumps over the lazy dog, again and again. "
	}
	body := []byte(`{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"` + text + `"}],"max_tokens":100,"stream":true}`)
	for b.Loop() {
		var c call
		if _, e := s.parse(kindChat, body, nil, &c.rec, &c.job); e != nil {
			b.Fatal(e)
		}
	}
}

// BenchmarkWholeChat measures the non-streaming chat handler alone (no socket): decode,
// render and count the input, generate 16 tokens, write the answer, record to a file;
// allocs/op is what the request leaves to the garbage collector.
func BenchmarkWholeChat(b *testing.B) {
	s := start(b, Config{Fast: true, DiscardRecords: true, RecordFile: filepath.Join(b.TempDir(), "r.jsonl")})
	body := []byte(`{"model":"mock-model","messages":[{"role":"user","content":"Short question?"}],"max_tokens":16,"ignore_eos":true}`)
	var ctx fasthttp.RequestCtx
	b.ReportAllocs()
	for b.Loop() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI("/v1/chat/completions")
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.SetBody(body)
		s.handle(&ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}
