package mockbench

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

// RefChunk is the reference loop's per-token SSE frame: an OpenAI chat chunk with one
// short token, 177 bytes with framing.
var RefChunk = []byte(`data: {"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk","created":1700000000,"model":"mock-model","choices":[{"index":0,"delta":{"content":" the"},"finish_reason":null}]}` + "\n\n")

// StartRef starts the minimal reference server on 127.0.0.1: every POST gets a stream of
// `tokens` RefChunk frames (the count can be overridden per request with ?n=), each
// flushed, then "data: [DONE]". It returns the base URL and a stop function.
func StartRef(tokens int) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	s := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			n := tokens
			if v := ctx.QueryArgs().Peek("n"); v != nil {
				n, _ = strconv.Atoi(string(v))
			}
			ctx.SetContentType("text/event-stream")
			ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
				for range n {
					if _, err := w.Write(RefChunk); err != nil {
						return
					}
					if err := w.Flush(); err != nil {
						return
					}
				}
				w.WriteString("data: [DONE]\n\n")
				w.Flush()
			})
		},
		Logger:          discard{},
		CloseOnShutdown: true,
	}
	go s.Serve(ln)
	return "http://" + ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.ShutdownWithContext(ctx)
	}, nil
}

type discard struct{}

func (discard) Printf(string, ...any) {}

// RefCompletion is the trivial server's whole answer: a chat completion of 16 short
// tokens with usage, the size of the mock's answer to nonStreamBody.
var RefCompletion = []byte(`{"id":"chatcmpl-req-1","object":"chat.completion","created":1700000000,"model":"mock-model","choices":[{"index":0,"message":{"role":"assistant","content":" the the the the the the the the the the the the the the the the"},"finish_reason":"length","logprobs":null}],"usage":{"prompt_tokens":30,"completion_tokens":16,"total_tokens":46}}`)

// StartTrivial starts the trivial non-streaming peer on 127.0.0.1: every request gets
// RefCompletion as application/json, with nothing read from the body. It returns the
// base URL and a stop function.
func StartTrivial() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	s := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("application/json")
			ctx.SetBody(RefCompletion)
		},
		Logger:          discard{},
		CloseOnShutdown: true,
	}
	go s.Serve(ln)
	return "http://" + ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.ShutdownWithContext(ctx)
	}, nil
}
