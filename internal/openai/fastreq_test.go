package openai

import (
	"encoding/json"
	"reflect"
	"testing"
)

// chatRequestSeeds are chat bodies in and out of DecodeChatRequest's fast path: the
// shapes load generators send, and every way out of it (escapes, invalid UTF-8,
// repeated and differently cased keys, unknown keys, list content, null where the fast
// path wants a value, numbers it does not read, trailing bytes, wrong types).
var chatRequestSeeds = []string{
	`{"model":"m","messages":[{"role":"user","content":"hello"}]}`,
	`{"model":"mock-model","messages":[{"role":"user","content":"Short question?"}],"max_tokens":16,"ignore_eos":true}`,
	` { "model" : "m" , "messages" : [ { "role" : "system" , "content" : "be brief" } , {"role":"user","content":"日本語 é"} ] , "stream" : true , "stream_options" : { "include_usage" : true } } `,
	`{"model":"m","messages":[],"max_completion_tokens":0,"min_tokens":-0,"n":1,"seed":-42,"temperature":0.7,"top_p":1e-3,"user":"u","reasoning_effort":"low","add_generation_prompt":false}`,
	`{"model":"m","messages":[{"role":"user","content":null,"name":"x"}],"max_tokens":null,"seed":null,"stream_options":null,"reasoning_effort":null,"temperature":null,"ignore_eos":null}`,
	`{"model":"m","messages":[{}],"stream_options":{}}`,
	`{}`, `null`, ``, `[]`, `{"model":"m"} x`, `{"model":"m",}`, `{"model":"m"`, `{"model":1}`,
	`{"model":"m\"q"}`, `{"model":"m\u00e9"}`, "{\"model\":\"m\xff\"}", "{\"model\":\"a\tb\"}",
	`{"model":"a","model":"b"}`, `{"Model":"m"}`, `{"MODEL":"m","model":"n"}`, `{"other":1,"model":"m"}`,
	`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"x"}}]}]}`,
	`{"messages":null}`, `{"messages":[null]}`, `{"messages":[{"role":"user","role":"system"}]}`, `{"messages":[{"Role":"user"}]}`,
	`{"messages":[{"role":"user","tool_call_id":"t"}]}`, `{"messages":[{"role":1}]}`, `{"messages":{"role":"user"}}`,
	`{"max_tokens":1.5}`, `{"max_tokens":1e2}`, `{"max_tokens":01}`, `{"max_tokens":99999999999999999999}`, `{"max_tokens":-}`,
	`{"max_tokens":"16"}`, `{"seed":123456789012345678}`, `{"temperature":1e400}`, `{"temperature":.5}`, `{"temperature":1.}`,
	`{"stream":null}`, `{"stream":1}`, `{"stream_options":{"include_usage":true,"x":1}}`, `{"stream_options":{"include_usage":null}}`,
	`{"stop":["a"]}`, `{"prompt_token_ids":[1,2]}`, `{"tools":[]}`, `{"user":null}`,
}

// FuzzDecodeChatRequest: DecodeChatRequest decodes every body exactly as
// json.Unmarshal does: the same request, or an error with the same text.
func FuzzDecodeChatRequest(f *testing.F) {
	for _, s := range chatRequestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got, want ChatRequest
		gerr := DecodeChatRequest(body, &got)
		werr := json.Unmarshal(body, &want)
		if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Fatalf("%q: error %v, json.Unmarshal's %v", body, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", body, got, want)
		}
	})
}

// TestDecodeChatRequestFast: the bodies load generators send take the fast path
// (decodeChatFast accepts them), so the benchmark measures it, not the fallback.
func TestDecodeChatRequestFast(t *testing.T) {
	for _, s := range chatRequestSeeds[:6] {
		var req ChatRequest
		if !decodeChatFast([]byte(s), &req) {
			t.Errorf("%s: not decoded by the fast path", s)
		}
	}
	for _, s := range []string{`{"model":"m\u00e9"}`, `{"Model":"m"}`, `{"model":"a","model":"b"}`, `{"max_tokens":1.5}`} {
		var req ChatRequest
		if decodeChatFast([]byte(s), &req) {
			t.Errorf("%s: decoded by the fast path, which must leave it to encoding/json", s)
		}
	}
}
