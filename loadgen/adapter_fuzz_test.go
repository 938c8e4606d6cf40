package loadgen

import (
	"testing"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
)

// FuzzAdapterAnswers feeds untrusted bytes to every adapter's answer parsing, whole
// and as a stream event: none may panic, and an answer said to have content must have
// added text or be a tool call (whose arguments may be empty); none keeps more than
// MaxToolCalls calls.
//
//	go test ./loadgen -run '^$' -fuzz FuzzAdapterAnswers -fuzztime 30s
func FuzzAdapterAnswers(f *testing.F) {
	for _, k := range kindSamples() {
		f.Add([]byte(k.whole), []byte(""))
		for _, ev := range k.events {
			f.Add(ev.Data, ev.Type)
		}
	}
	f.Add([]byte(`{"error":{"message":"x"}}`), []byte("error"))
	f.Add([]byte(`{"choices":[{"delta":{"content":"\ud83d\ude00"}}]`), []byte(""))
	// An answer of 100,000 empty tool call entries (300 KB), which took 14.7 s to
	// read when merging calls was quadratic, and a streamed tool call delta.
	f.Add(toolCallsBody(100_000, func(int) string { return `{}` }), []byte(""))
	f.Add(toolCallEvents(1, func(int) string {
		return `{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":"{\"q\": 1}"}}`
	})[0], []byte(""))
	f.Fuzz(func(t *testing.T, data, typ []byte) {
		var p openai.ChunkParser
		var ch openai.StreamChunk
		for _, k := range apis {
			res := &result{}
			content, _, err := k.a.parseWhole(&p, data, &ch, res)
			if err == nil && content && len(res.text) == 0 && len(res.calls) == 0 {
				t.Fatalf("%s: parseWhole says content but added no text and no tool call for %.500q", k.e, data)
			}
			if len(res.calls) > MaxToolCalls {
				t.Fatalf("%s: %d tool calls kept, more than %d, for %.500q", k.e, len(res.calls), MaxToolCalls, data)
			}
			rec := &record.Client{UsagePromptTokens: -1, UsageCompletionTokens: -1}
			if k.a.parseEvent(&p, typ, data, &ch) == nil {
				k.a.event(&ch, rec)
			}
		}
	})
}
