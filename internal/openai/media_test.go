package openai

import (
	"encoding/json"
	"testing"
)

// Parse counts an image answer's images (StreamChunk.Images) in the one pass that
// reads its usage, without decoding or allocating.
func TestParseImages(t *testing.T) {
	var p ChunkParser
	var c StreamChunk
	for _, tc := range []struct {
		body string
		n    int
		err  bool
	}{
		{`{"created":1,"data":[{"b64_json":"iVBO"},{"url":"data:image/png;base64,AA"}],"usage":{"input_tokens":3}}`, 2, false},
		{`{"data":[{"b64_json":""},{"revised_prompt":"x"},{"url":"https://x/1.png"}]}`, 1, false},
		{`{"data":[]}`, 0, false},
		{`{"created":1}`, 0, false},
		{`{"object":"list","data":[{"object":"embedding","embedding":[0.5]}]}`, 0, false},
		{` { "data" : [ { "b64_json" : "QQ==" } , 7 ] } `, 1, false},
		{`{"data":[{"b64_json":"QQ=="}`, 0, true},
		{`[1]`, 0, true},
	} {
		err := p.Parse([]byte(tc.body), &c)
		if (err != nil) != tc.err || (err == nil && c.Images != tc.n) {
			t.Errorf("%s: %d images, error %v; want %d, error %v", tc.body, c.Images, err, tc.n, tc.err)
		}
	}
	// Agrees with encoding/json on what the mock writes.
	body, _ := json.Marshal(ImagesResponse{Data: []ImageData{{B64JSON: "QUJD"}, {B64JSON: "QUJD"}, {B64JSON: "QUJD"}}, Usage: &ImageUsage{InputTokens: 3, TotalTokens: 3}})
	if err := p.Parse(body, &c); c.Images != 3 || !c.HasUsage || c.Usage.PromptTokens != 3 || err != nil {
		t.Errorf("marshalled response: %d images, usage %v %+v, %v; want 3 and prompt tokens 3", c.Images, c.HasUsage, c.Usage, err)
	}
	if a := testing.AllocsPerRun(100, func() { _ = p.Parse(body, &c) }); a != 0 {
		t.Errorf("Parse of an image answer allocates %v times per call, want 0", a)
	}
}

// Parse reads a transcription's top-level text (StreamChunk.Transcript) with its
// usage: nil when absent or not a string, empty for "".
func TestParseTranscript(t *testing.T) {
	var p ChunkParser
	var c StreamChunk
	for _, tc := range []struct {
		body, text string
		present    bool
	}{
		{`{"text":"hello \u00e9","usage":{"type":"tokens","input_tokens":12,"output_tokens":3}}`, "hello é", true},
		{`{"text":""}`, "", true},
		{`{"text":null}`, "", false},
		{`{"text":{"format":{"type":"text"}}}`, "", false}, // a Responses answer's text config
		{`{"task":"transcribe"}`, "", false},
	} {
		if err := p.Parse([]byte(tc.body), &c); err != nil || (c.Transcript != nil) != tc.present || string(c.Transcript) != tc.text {
			t.Errorf("%s: transcript %q (nil %v), error %v; want %q, present %v", tc.body, c.Transcript, c.Transcript == nil, err, tc.text, tc.present)
		}
	}
}
