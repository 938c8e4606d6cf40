package openai

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// toolCallsAnswer is a chat answer whose message carries n tool_calls entries,
// entry(i) each: with n = 100,000 and "{}", the 300 KB answer whose calls once took
// the client 14.7 s to read.
func toolCallsAnswer(n int, entry func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(entry(i))
	}
	b.WriteString(`]},"finish_reason":"tool_calls"}]}`)
	return []byte(b.String())
}

// blocksAnswer is an Anthropic message of n text blocks, each "a\nb" (an escape, so
// the parser unescapes each block's text).
func blocksAnswer(n int) []byte {
	return []byte(`{"type":"message","content":[` + strings.Repeat(`{"type":"text","text":"a\nb"},`, n-1) + `{"type":"text","text":"a\nb"}]}`)
}

// allocBytes returns the bytes f allocates on the heap, as testing.AllocsPerRun
// counts allocations (one processor, so that little else runs).
func allocBytes(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestParseToolCallsBound: Parse keeps the first MaxToolDeltas tool call entries of
// a chunk; it counts the rest and keeps their arguments' text.
func TestParseToolCallsBound(t *testing.T) {
	var p ChunkParser
	var c StreamChunk
	if err := p.Parse(toolCallsAnswer(100_000, func(int) string { return `{}` }), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Tools) != MaxToolDeltas || c.ToolsDropped != 100_000-MaxToolDeltas || len(c.ToolArgsDropped) != 0 {
		t.Errorf("100,000 empty entries: %d kept, %d dropped (arguments %q); want %d, %d, none",
			len(c.Tools), c.ToolsDropped, c.ToolArgsDropped, MaxToolDeltas, 100_000-MaxToolDeltas)
	}
	args := func(i int) string {
		return fmt.Sprintf(`{"index":%d,"function":{"name":"f","arguments":"\"%d"}}`, i, i%10)
	}
	if err := p.Parse(toolCallsAnswer(MaxToolDeltas+3, args), &c); err != nil {
		t.Fatal(err)
	}
	last := c.Tools[len(c.Tools)-1]
	if len(c.Tools) != MaxToolDeltas || last.Index != MaxToolDeltas-1 || string(last.Args) != `"3` ||
		c.ToolsDropped != 3 || string(c.ToolArgsDropped) != `"4"5"6` {
		t.Errorf("%d entries: %d kept, the last %d(%s), %d dropped with arguments %q; want %d, %d(\"3), 3, \"4\"5\"6",
			MaxToolDeltas+3, len(c.Tools), last.Index, last.Args, c.ToolsDropped, c.ToolArgsDropped, MaxToolDeltas, MaxToolDeltas-1)
	}
}

// TestParseLinear: what Parse allocates grows linearly with an answer's content
// blocks (joined into Text) and tool call entries, a deterministic proxy for its
// work: ten times the entries allocate about ten times the bytes, or less. Text
// joined in the scratch buffer was copied whole at each escaped block: 10,000 blocks
// took 5 s and 40,000 two minutes, allocating the square of the text's length.
func TestParseLinear(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     func(n int) []byte
		n, times int
	}{
		{"content blocks", blocksAnswer, 1_000, 10},
		{"tool call entries", func(n int) []byte { return toolCallsAnswer(n, func(int) string { return `{}` }) }, 10_000, 10},
		{"escaped tool call arguments", func(n int) []byte {
			return toolCallsAnswer(n, func(int) string { return `{"function":{"arguments":"\"q\""}}` })
		}, 10_000, 10},
	} {
		var bytes [2]uint64
		for k, n := range []int{tc.n, tc.n * tc.times} {
			body := tc.body(n)
			bytes[k] = allocBytes(func() {
				var p ChunkParser
				var c StreamChunk
				if err := p.Parse(body, &c); err != nil {
					t.Fatal(err)
				}
			})
		}
		t.Logf("%s: %d bytes allocated for %d, %d for %d", tc.name, bytes[0], tc.n, bytes[1], tc.n*tc.times)
		if bytes[1] > 2*uint64(tc.times)*bytes[0]+64<<10 {
			t.Errorf("%s: %d allocate %d bytes, %d allocate %d: %.0f times as much, want about %d (linear)",
				tc.name, tc.n*tc.times, bytes[1], tc.n, bytes[0], float64(bytes[1])/float64(bytes[0]), tc.times)
		}
	}
}

// TestParseToolDeltaAllocs: a warm parser reads a stream's tool-call chunks without
// allocating.
func TestParseToolDeltaAllocs(t *testing.T) {
	h := ChunkHeader{ID: "chatcmpl-1", Created: 1, Model: "m"}
	first := AppendChatToolCallChunk(nil, h, "assistant", 0, "call_0", "get_weather", "", true)
	next := AppendChatToolCallChunk(nil, h, "", 0, "", "", `{"city": "Paris"}`, true)
	var p ChunkParser
	var c StreamChunk
	if a := testing.AllocsPerRun(100, func() { _, _ = p.Parse(first, &c), p.Parse(next, &c) }); a != 0 {
		t.Errorf("Parse of tool-call chunks allocates %v times per call, want 0", a)
	}
	if err := p.Parse(next, &c); err != nil || len(c.Tools) != 1 || string(c.Tools[0].Args) != `{"city": "Paris"}` {
		t.Errorf("tool-call chunk read as %+v, %v", c.Tools, err)
	}
}
