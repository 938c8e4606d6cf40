package record

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/jsonscan"
)

// plain is a recording line as the load generator writes it: no character that needs
// an escape, so DecodeClient's own parser reads it.
func plain() Client {
	c := sample()
	c.Conversation, c.Model, c.Warmup, c.FirstByte = "conv-1", "llama", true, 12
	c.Class = "batch"
	c.ErrorKind, c.Error, c.RequestedISL, c.RequestedOSL = ErrTimeout, "loadgen: idle timeout (5s) – no byte", 100, 8
	c.ReasoningTokens, c.FinishReason, c.Clock = 2, "length", ClockKernel
	c.Chunks = append(c.Chunks, Chunk{T: 61 * time.Millisecond, Tokens: 1, Choices: true, Batched: true})
	c.ISLTemplate, c.TokenizationMode, c.Turn, c.Prefix = 40, "chat_template", 2, 7
	c.Job, c.ThinkTime, c.ToolWait = "job-3", 250*time.Millisecond, 40*time.Millisecond
	c.RunStartUnixNano, c.ResponseBytes, c.Scheduled = 1_767_000_000_000_000_000, 512, -3
	c.FirstOutput, c.UsageReasoningTokens = 70*time.Millisecond, 2
	c.Blocked, c.DNSLookup, c.Connecting, c.TLSHandshaking = 1000, 2000, 3000, 1500
	c.Written, c.ConnReused = 11*time.Millisecond, true
	c.FirstToolCall, c.ToolCalls, c.ToolCallTokens = 65*time.Millisecond, 1, 3
	c.AudioDuration, c.Images = 4500*time.Millisecond, 2
	c.CachedTokens = Some(0) // known, though 0: still written
	c.Server = fullServerData()
	return c
}

// TestPlainSetsEveryField: plain leaves no field zero, so a field the fast parser
// does not read sends TestDecodeClientFastPathReadsAppendJSON to encoding/json and fails it.
func TestPlainSetsEveryField(t *testing.T) {
	v := reflect.ValueOf(plain())
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("plain() leaves Client.%s zero; set it (and read it in parser.client)", v.Type().Field(i).Name)
		}
	}
}

// sameClient compares two decoded records, an empty Chunks equal to a nil one.
func sameClient(a, b Client) bool {
	if len(a.Chunks) == 0 && len(b.Chunks) == 0 {
		a.Chunks, b.Chunks = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

func ptr(c Client) *Client { return &c }

func TestDecodeClientMatchesEncodingJSON(t *testing.T) {
	full := plain()
	escaped := plain()
	escaped.Model, escaped.Error = "m\"odel\n\u2028", "bad <html> & \x01 \xff"
	lines := []string{
		string((&Client{}).AppendJSON(nil)),
		string(ptr(sample()).AppendJSON(nil)),
		string(full.AppendJSON(nil)),
		string(escaped.AppendJSON(nil)), // escapes: encoding/json decodes it
		` { "index" : 7 , "chunks" : [ { "n" : 2 , "t" : 9 } ] , "stream" : true } `,
		`{"Index":7,"request_id":"x"}`,                                        // another spelling of a key
		`{"index":7,"extra":{"a":[1,2]}}`,                                     // an unknown key is ignored
		`{"index":7,"chunks":null,"osl":null}`,                                // null leaves the zero value
		`{"index":-0,"chunks":[],"osl":1}`,                                    // -0 and an empty array
		`{"index":1,"index":2,"chunks":[{"t":1}],"chunks":[{"t":2},{"t":3}]}`, // the last wins
	}
	for i, l := range lines {
		var want, got Client
		if err := json.Unmarshal([]byte(l), &want); err != nil {
			t.Fatalf("line %d: encoding/json: %v", i, err)
		}
		got = plain() // a used record: nothing of it may survive
		if err := DecodeClient([]byte(l), &got); err != nil {
			t.Errorf("line %d: DecodeClient(%s) = %v, want nil", i, l, err)
			continue
		}
		if !sameClient(got, want) {
			t.Errorf("line %d: DecodeClient(%s) =\n%+v\nwant (encoding/json)\n%+v", i, l, got, want)
		}
	}
	for i, l := range []string{`{"index":1.5}`, `{"index":1e3}`, `{"index":99999999999999999999}`, `{"index":1}x`,
		`{"index":"1"}`, `{"chunks":[{"t":1},]}`, `{"index":01}`, `[1]`, `{"index":1`, ``} {
		var want, got Client
		werr := json.Unmarshal([]byte(l), &want)
		gerr := DecodeClient([]byte(l), &got)
		if werr == nil || gerr == nil {
			t.Errorf("bad line %d %q: DecodeClient error %v, encoding/json error %v; want both errors", i, l, gerr, werr)
		}
	}
}

// The lines AppendJSON writes, without escapes, take the reflection-free path.
func TestDecodeClientFastPathReadsAppendJSON(t *testing.T) {
	for i, c := range []Client{{}, sample(), plain()} {
		b := c.AppendJSON(nil)
		var got Client
		p := parser{Scanner: jsonscan.Scanner{B: b}, old: &Client{}}
		if !p.client(&got, nil) {
			t.Errorf("record %d: the fast parser gave up on AppendJSON's line %s at byte %d", i, b, p.I)
		} else if !sameClient(got, c) {
			t.Errorf("record %d: fast parser =\n%+v\nwant\n%+v", i, got, c)
		}
	}
}

func TestEachClientReusesOneRecord(t *testing.T) {
	a, b := plain(), sample()
	b.Index, b.Chunks = 9, b.Chunks[:1]
	in := string(a.AppendJSON(nil)) + "\n" + string(b.AppendJSON(nil)) + "\n"
	var got []Client
	var ptrs []*Client
	err := EachClient(strings.NewReader(in), func(c *Client) error {
		cp := *c
		cp.Chunks = append([]Chunk(nil), c.Chunks...)
		got, ptrs = append(got, cp), append(ptrs, c)
		return nil
	})
	if err != nil || len(got) != 2 || !sameClient(got[0], a) || !sameClient(got[1], b) {
		t.Fatalf("EachClient = %+v, %v; want the two records", got, err)
	}
	if ptrs[0] != ptrs[1] {
		t.Errorf("EachClient gave a new record per line; want one reused")
	}
}

func FuzzDecodeClient(f *testing.F) {
	for _, c := range []Client{{}, sample(), plain()} {
		f.Add(c.AppendJSON(nil))
	}
	f.Add([]byte(`{"index":1,"chunks":[{"t":1,"n":2,"c":true,"b":false}],"model":"é"}`))
	f.Add([]byte(`{"url":"\u00e9","error":"a\"b"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want Client
		werr := json.Unmarshal(b, &want)
		got := plain()
		gerr := DecodeClient(b, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("DecodeClient(%q) error = %v, encoding/json error = %v", b, gerr, werr)
		}
		if werr == nil && !sameClient(got, want) {
			t.Fatalf("DecodeClient(%q) =\n%+v\nwant (encoding/json)\n%+v", b, got, want)
		}
	})
}

func BenchmarkDecodeClient(b *testing.B) {
	c := sample()
	c.Chunks = make([]Chunk, 512)
	for i := range c.Chunks {
		c.Chunks[i] = Chunk{T: time.Duration(i) * time.Millisecond, Tokens: 1, Choices: true}
	}
	line := c.AppendJSON(nil)
	b.Run("fast", func(b *testing.B) {
		var got Client
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if err := DecodeClient(line, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			var got Client
			if err := json.Unmarshal(line, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestCachedTokensKnownness: a record without cached_tokens (the server sent none, or a
// recording made before the field existed) reads as unknown, and a reported 0 as a
// known 0, through both the fast parser and encoding/json.
func TestCachedTokensKnownness(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Optional
	}{
		{`{"index":1,"isl":10}`, Optional{}},
		{`{"index":1,"cached_tokens":0}`, Some(0)},
		{`{"index":1,"cached_tokens":48}`, Some(48)},
		{`{"index":1,"cached_tokens":null}`, Optional{}},        // encoding/json's path
		{`{"index":1, "cached_tokens" : 16 , "x":1}`, Some(16)}, // unknown key: encoding/json's path
	} {
		var c Client
		if err := DecodeClient([]byte(tc.line), &c); err != nil {
			t.Fatalf("DecodeClient(%s): %v", tc.line, err)
		}
		if c.CachedTokens != tc.want {
			t.Errorf("DecodeClient(%s).CachedTokens = %+v, want %+v", tc.line, c.CachedTokens, tc.want)
		}
		back := string(c.AppendJSON(nil))
		if has := strings.Contains(back, `"cached_tokens"`); has != tc.want.Known {
			t.Errorf("AppendJSON of %+v = %s: cached_tokens written = %v, want %v", tc.want, back, has, tc.want.Known)
		}
	}
	var c Client
	if err := DecodeClient([]byte(`{"index":1,"cached_tokens":"16"}`), &c); err == nil {
		t.Errorf(`DecodeClient with "cached_tokens":"16" = nil error, want one (a recording holds a number)`)
	}
}
