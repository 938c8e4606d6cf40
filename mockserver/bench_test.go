package mockserver

import (
	"math/rand/v2"
	"testing"
	"time"

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
		if _, e := s.parse(kindChat, body, nil, &c.rec); e != nil {
			b.Fatal(e)
		}
	}
}
