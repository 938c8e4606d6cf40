package check

import (
	"strings"
	"testing"
)

// Image and audio tokens are part of the client's expected count: a request whose
// server count includes them matches, and one whose server left them out does not;
// the evidence names the media apart from the chat template.
func TestTokenizerMatchMedia(t *testing.T) {
	reqs := []Request{
		{ID: "1", ISL: 20, Overhead: 10 + 393, Media: 393, ServerISL: 20 + 10 + 393},
		{ID: "2", ISL: 25, Overhead: 10, ServerISL: 35},
	}
	v := TokenizerMatch(reqs, 0)
	text := v.String()
	if !v.Pass || !strings.Contains(text, "+10 tokens beyond the message contents") || !strings.Contains(text, "1 requests carried images or audio: their 393 image and audio tokens") {
		t.Errorf("with media counted alike: %s", text)
	}
	reqs[0].ServerISL = 30 // a server that does not count the image
	if v := TokenizerMatch(reqs, 0); v.Pass || !strings.Contains(v.String(), "#1 client=20+403 server=30 (-393)") {
		t.Errorf("a server that drops the image's tokens: %s", v.String())
	}
}
