package loadgen

import (
	"fmt"
	"testing"

	"github.com/perfgate/perfgate/internal/sse"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
)

// kindSample is one API kind's request path as the benchmark drives it: a turn to
// render, a whole answer and a streamed one (nil for kinds that do not stream).
type kindSample struct {
	e      Endpoint
	whole  string
	events []sse.Event
}

func kindSamples() []kindSample {
	chunk := func(typ, data string) sse.Event { return sse.Event{Type: []byte(typ), Data: []byte(data)} }
	var chat, cmpl, resp, msgs, trsc []sse.Event
	for range 16 {
		chat = append(chat, chunk("", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" hello"},"finish_reason":null}]}`))
		cmpl = append(cmpl, chunk("", `{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" hello","finish_reason":null,"logprobs":null}]}`))
		resp = append(resp, chunk("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":" hello"}`))
		msgs = append(msgs, chunk("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" hello"}}`))
		trsc = append(trsc, chunk("", `{"type":"transcript.text.delta","delta":" hello"}`))
	}
	trsc = append(trsc, chunk("", `{"type":"transcript.text.done","text":"hello","usage":{"type":"tokens","input_tokens":20,"output_tokens":16,"total_tokens":36}}`))
	chat = append(chat, chunk("", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":16,"total_tokens":36}}`), chunk("", "[DONE]"))
	cmpl = append(cmpl, chunk("", `{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":16,"total_tokens":36}}`), chunk("", "[DONE]"))
	resp = append(resp, chunk("response.completed", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":{"input_tokens":20,"output_tokens":16,"total_tokens":36}}}`))
	msgs = append([]sse.Event{chunk("message_start", `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":20,"output_tokens":1}}}`)}, msgs...)
	msgs = append(msgs, chunk("message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":16}}`), chunk("message_stop", `{"type":"message_stop"}`))
	return []kindSample{
		{EndpointChat, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello world"},"finish_reason":"length","logprobs":null}],"usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22}}`, chat},
		{EndpointCompletions, `{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":"hello world","finish_reason":"length","logprobs":null}],"usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22}}`, cmpl},
		{EndpointResponses, `{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"hello world"}]}],"usage":{"input_tokens":20,"output_tokens":2,"total_tokens":22}}`, resp},
		{EndpointMessages, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hello world"}],"stop_reason":"max_tokens","usage":{"input_tokens":20,"output_tokens":2}}`, msgs},
		{EndpointEmbeddings, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.5]}],"model":"m","usage":{"prompt_tokens":20,"total_tokens":20}}`, nil},
		{EndpointRankings, `{"rankings":[{"index":0,"logit":0.5},{"index":1,"logit":0.25}]}`, nil},
		{EndpointRerank, `{"results":[{"index":0,"relevance_score":0.5},{"index":1,"relevance_score":0.25}]}`, nil},
		{EndpointTranscriptions, `{"text":"hello world","usage":{"type":"tokens","input_tokens":20,"output_tokens":2,"total_tokens":22}}`, trsc},
		{EndpointImages, `{"created":1,"data":[{"b64_json":"iVBORw0KGgo="}],"usage":{"input_tokens":20,"output_tokens":0,"total_tokens":20}}`, nil},
	}
}

// BenchmarkKindPath is the per-request work that depends on the API kind: render the
// body, then parse a whole answer, then (for kinds that generate) a 16-token stream.
// Its allocs/op is the number to keep: the request path must not allocate more for
// the kind dispatch.
func BenchmarkKindPath(b *testing.B) {
	t := &dataset.Turn{Prompt: "the quick brown fox jumps over the lazy dog", Docs: []string{"a", "b"}, OSL: 16}
	tc := &turnCtx{system: "be brief"}
	for _, k := range kindSamples() {
		b.Run(fmt.Sprintf("kind=%s", k.e), func(b *testing.B) {
			cfg := &Config{}
			bb, err := newBodyBuilder(cfg)
			if err != nil {
				b.Fatal(err)
			}
			w := newWorker()
			rec, res := &record.Client{}, &result{}
			a := adapterOf(k.e)
			c := &call{api: a}
			cn := &conn{}
			whole := []byte(k.whole)
			b.ReportAllocs()
			for b.Loop() {
				body, _ := bb.build(a, t, tc, k.events != nil)
				if len(body) == 0 {
					b.Fatal("empty body")
				}
				*rec = record.Client{Chunks: rec.Chunks[:0]}
				res.text, res.ends, res.reasoning, res.content = res.text[:0], res.ends[:0], res.reasoning[:0], res.content[:0]
				w.parseBody(whole, c, rec, res)
				if rec.ErrorKind != "" {
					b.Fatal(rec.Error)
				}
				if k.events == nil {
					continue
				}
				*rec = record.Client{Chunks: rec.Chunks[:0]}
				res.text, res.ends, res.reasoning, res.content = res.text[:0], res.ends[:0], res.reasoning[:0], res.content[:0]
				w.x = exchange{c: c, rec: rec, res: res, cn: cn}
				for _, ev := range k.events {
					w.event(&w.x, ev)
				}
				if rec.ErrorKind != "" || len(res.text) == 0 {
					b.Fatalf("stream: %s %s, %d bytes of text", rec.ErrorKind, rec.Error, len(res.text))
				}
			}
		})
	}
}
