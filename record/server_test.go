package record

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func TestServerAppendJSONMatchesEncodingJSON(t *testing.T) {
	n, m, k := 128, 256, 0
	yes := true
	effort := "high"
	recs := []Server{
		{},
		{TS: 1700000000.123456, RequestID: "req-1", Endpoint: "/v1/chat/completions", Model: "m\"x", ISL: 512,
			RequestedOSL: &m, MaxTokens: &n, MaxCompletionTokens: &m, MinTokens: &k, IgnoreEOS: &yes, ReasoningEffort: &effort,
			Stream: true, TokenizationMode: ModeChatTemplate, Seq: 7, Status: 200, OSL: 256, ReasoningTokens: 100, TargetOSL: 256, FinishReason: "length",
			RecvNS: 1700000000123456789, FirstTokenNS: 1700000000223456789, LastTokenNS: 1700000001223456789, Chunks: 256,
			Fault: "disconnect", ClientGone: true, Session: "job-3/j0.a1.0", Peer: "127.0.0.1:40312", Inputs: 3, NonTextParts: 2, ImageTokens: 393, AudioTokens: 25, TextISL: 94, CachedTokens: 64},
		{TS: 1e-7, Rejected: "invalid_json", Param: "max_tokens", Status: 400, Model: "bad\xffutf8\u2028<>&"},
		{TS: 1e21},
	}
	for i, r := range recs {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		got := r.AppendJSON(nil)
		if string(got) != string(want) {
			t.Errorf("record %d: AppendJSON =\n%s\nwant (encoding/json)\n%s", i, got, want)
		}
		var back Server
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("record %d: decoding AppendJSON output: %v", i, err)
		}
	}
}

func TestServerNullFieldsAsAIPerf(t *testing.T) {
	got := string((&Server{}).AppendJSON(nil))
	for _, f := range []string{`"requested_osl":null`, `"max_tokens":null`, `"max_completion_tokens":null`, `"min_tokens":null`, `"ignore_eos":null`, `"reasoning_effort":null`} {
		if !contains(got, f) {
			t.Errorf("zero record %s lacks %s", got, f)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestServerTTFT(t *testing.T) {
	s := Server{RecvNS: 1000, FirstTokenNS: 1000 + int64(5*time.Millisecond)}
	if got := s.TTFT(); got != 5*time.Millisecond {
		t.Errorf("TTFT = %v, want 5ms", got)
	}
	if got := (&Server{RecvNS: 5}).TTFT(); got != 0 {
		t.Errorf("TTFT with no token = %v, want 0", got)
	}
}

func BenchmarkServerAppendJSON(b *testing.B) {
	n := 128
	r := Server{TS: 1700000000.123456, RequestID: "req-1", Endpoint: "/v1/chat/completions", Model: "meta-llama/Llama-3.1-8B-Instruct", ISL: 512,
		RequestedOSL: &n, MaxTokens: &n, Stream: true, TokenizationMode: ModeChatTemplate, Seq: 7, Status: 200, OSL: 128, RecvNS: 1, FirstTokenNS: 2, LastTokenNS: 3}
	buf := make([]byte, 0, 1024)
	for b.Loop() {
		buf = r.AppendJSON(buf[:0])
	}
}
