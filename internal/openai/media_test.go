package openai

import (
	"encoding/json"
	"testing"
)

func TestCountImages(t *testing.T) {
	var p ChunkParser
	for _, c := range []struct {
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
		n, err := p.CountImages([]byte(c.body))
		if n != c.n || (err != nil) != c.err {
			t.Errorf("%s: %d images, error %v; want %d, error %v", c.body, n, err, c.n, c.err)
		}
	}
	// Agrees with encoding/json on what the mock writes.
	body, _ := json.Marshal(ImagesResponse{Data: []ImageData{{B64JSON: "QUJD"}, {B64JSON: "QUJD"}, {B64JSON: "QUJD"}}})
	if n, err := p.CountImages(body); n != 3 || err != nil {
		t.Errorf("marshalled response: %d, %v; want 3", n, err)
	}
	if a := testing.AllocsPerRun(100, func() { _, _ = p.CountImages(body) }); a != 0 {
		t.Errorf("CountImages allocates %v times per call, want 0", a)
	}
}
