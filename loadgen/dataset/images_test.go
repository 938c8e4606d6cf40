package dataset

import (
	"slices"
	"strings"
	"testing"
)

// A LLaVA-style ShareGPT conversation's images go to its first human turn, whose text
// loses the "<image>" markers (and is counted without them); a malformed "image" is an
// error naming the conversation.
func TestShareGPTImages(t *testing.T) {
	in := `{"id":"a","image":"x.png","conversations":[{"from":"human","value":"<image>\nWhat?"},{"from":"gpt","value":"A cat."},{"from":"human","value":"And now?"}]}
{"id":"b","image":["y.png","z.jpg"],"images":["w.png"],"conversations":[{"from":"human","value":"Hi"}]}
`
	convs, err := ReadShareGPT(strings.NewReader(in), gpt2(t))
	if err != nil {
		t.Fatal(err)
	}
	a, b := convs[0].Turns, convs[1].Turns
	if !slices.Equal(a[0].Images, []string{"x.png"}) || a[1].Images != nil || a[0].Prompt != "What?" || a[0].ISL != gpt2(t).Count("What?", false) {
		t.Errorf("conversation a: %+v", a)
	}
	if !slices.Equal(b[0].Images, []string{"w.png", "y.png", "z.jpg"}) {
		t.Errorf("conversation b images: %v", b[0].Images)
	}
	_, err = ReadShareGPT(strings.NewReader(`{"image":7,"conversations":[{"from":"human","value":"x"}]}`+"\n"), gpt2(t))
	if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), `"image" is neither a path nor a list`) {
		t.Errorf("image 7: %v", err)
	}
}
