package loadgen

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/perfgate/perfgate/record"
)

// BenchmarkExchange is one request/response exchange of the load generator's worker
// over a kept-alive in-memory connection (no kernel, no scheduler between client and
// server beyond goroutines): write the request, read and parse a whole chat answer,
// fill the record (its HTTP phases included). It isolates the per-request cost of the
// request path from the network and the pacer; ns/op and allocs/op are the numbers to
// compare before and after a change to it, with cpu_ns/op (the process's CPU time per
// exchange, client and server) the steadier of them on a shared machine.
//
//	go test ./loadgen -run '^$' -bench Exchange -count 5
func BenchmarkExchange(b *testing.B) {
	ln := fasthttputil.NewInmemoryListener()
	body := []byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hello hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}`)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBody(body)
	}}
	go srv.Serve(ln) //nolint:errcheck
	b.Cleanup(func() { _ = srv.Shutdown(); ln.Close() })
	tg, err := newTarget("http://127.0.0.1:8000/v1/chat/completions", &dialer{dial: func(string) (net.Conn, error) { return ln.Dial() }})
	if err != nil {
		b.Fatal(err)
	}
	clock := &runClock{start: time.Now()}
	w := newWorker()
	c := &call{target: tg, body: []byte(`{"model":"m","messages":[{"role":"user","content":"hello"}]}`), requestID: "req-1",
		api: adapterOf(EndpointChat), hdr: newHeaderBlock(nil), timeout: time.Minute}
	var rec record.Client
	var res result
	ctx := context.Background()
	c0 := processCPU()
	for b.Loop() {
		rec = record.Client{Chunks: rec.Chunks[:0]}
		res.text, res.ends = res.text[:0], res.ends[:0]
		w.do(ctx, clock, c, &rec, &res)
		if !rec.OK() {
			b.Fatalf("exchange failed: %s", rec.Error)
		}
	}
	// The process's CPU time per exchange (client and in-memory server): less moved by
	// other processes on a shared machine than the wall time of ns/op.
	b.ReportMetric((processCPU()-c0)/float64(b.N)*1e9, "cpu_ns/op")
}
