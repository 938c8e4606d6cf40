package record

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
)

// BenchmarkEncoderEncode is the collector's cost per record line written: the
// Encoder's pooled line, AppendJSON and the buffered write.
func BenchmarkEncoderEncode(b *testing.B) {
	c := Client{
		Index: 33, RequestID: "req-33", URL: "http://127.0.0.1:18290/v1/chat/completions", Endpoint: "chat", Model: "m",
		RunStartUnixNano: 1796161920989744025, Scheduled: 1841774, Sent: 24474150, FirstByte: 26482281,
		FirstOutput: 26500924, Done: 26500924, Chunks: []Chunk{{T: 26500924, Tokens: 2, Choices: true}},
		Blocked: 10978, Written: 24482675, ConnReused: true, Status: 200, ISL: 8, ISLTemplate: 35,
		TokenizationMode: "chat_template_fallback", ISLExact: true, RequestedISL: 8, OSL: 2,
		UsagePromptTokens: 8, UsageCompletionTokens: 2, FinishReason: "stop", ResponseBytes: 231,
	}
	e := NewEncoder(io.Discard)
	for b.Loop() {
		c.Index++
		if err := e.Encode(&c); err != nil {
			b.Fatal(err)
		}
	}
}

// AppendJSONString writes what encoding/json writes for every byte, alone and around
// others, and for the runes it treats specially, with HTML escaping off
// (AppendJSONString, as the Encoder; but for \b and \f, which records have always had
// as \u0008 and \u000c) and on (AppendJSONStringHTML, as json.Marshal).
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	var cases []string
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
	}
	cases = append(cases, "", "plain text", "\u2028\u2029", "é€𝄞", "\xff\xfe", "a\xc3", "<a href=\"x\">&amp;</a>\\\n\t\r\b\f")
	for _, s := range cases {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n") // no case has a backslash before b or f
		want = strings.NewReplacer(`\b`, `\u0008`, `\f`, `\u000c`).Replace(want)
		if got := string(AppendJSONString(nil, s)); got != want {
			t.Errorf("AppendJSONString(%q) = %s; encoding/json %s", s, got, want)
		}
		m, _ := json.Marshal(s)
		if got := string(AppendJSONStringHTML(nil, s)); got != string(m) {
			t.Errorf("AppendJSONStringHTML(%q) = %s; json.Marshal %s", s, got, m)
		}
	}
}

// Lines written from many goroutines at once (the pooled path) and from one (the
// encoder's own line) are the same whole lines.
func TestEncoderConcurrentLines(t *testing.T) {
	var out bytes.Buffer
	e := NewEncoder(&out)
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				c := Client{Index: w*each + i, RequestID: strings.Repeat("r", i%300), Chunks: make([]Chunk, i%40)}
				if err := e.Encode(&c); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for i := range each { // alone: the uncontended path
		c := Client{Index: workers*each + i, RequestID: strings.Repeat("r", i%300), Chunks: make([]Chunk, i%40)}
		if err := e.Encode(&c); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadClient(&out)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, (workers+1)*each)
	for _, r := range recs {
		i := r.Index % each
		if seen[r.Index] || len(r.RequestID) != i%300 || len(r.Chunks) != i%40 {
			t.Fatalf("record %d: duplicate or wrong (%d-byte id, %d chunks)", r.Index, len(r.RequestID), len(r.Chunks))
		}
		seen[r.Index] = true
	}
	if len(recs) != len(seen) || e.Count() != len(seen) {
		t.Fatalf("%d records read, Count %d; want %d", len(recs), e.Count(), len(seen))
	}
}
