package openai

import (
	"encoding/json"
	"strings"
	"testing"
)

// Parse reads a whole Anthropic message's content blocks and a whole Responses
// answer's output_text parts into Text (and thinking into Reasoning), concatenated in
// order, whatever the order of a block's keys, with escapes; other blocks and a
// content that is not an array are skipped. It agrees with encoding/json on the text.
func TestParseWholeBlocks(t *testing.T) {
	var p ChunkParser
	var c StreamChunk
	for _, tc := range []struct {
		body, text, reasoning string
	}{
		{`{"type":"message","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Hello"},{"text":", w\u00f6rld","type":"text"},{"type":"tool_use","id":"t","input":{}},{"type":"thinking","thinking":" ok"}],"usage":{"input_tokens":3,"output_tokens":4}}`, "Hello, wörld", "hm ok"},
		{`{"content":[]}`, "", ""},
		{`{"content":null}`, "", ""},
		{`{"content":"a string"}`, "", ""},
		{`{"object":"response","output":[{"type":"reasoning","summary":[]},{"type":"message","content":[{"type":"output_text","text":"Hi"},{"type":"refusal","refusal":"no"},{"type":"output_text","text":" there"}]},{"type":"message","content":[{"type":"output_text","text":"!"}]}],"text":{"format":{"type":"text"}}}`, "Hi there!", ""},
	} {
		if err := p.Parse([]byte(tc.body), &c); err != nil || string(c.Text) != tc.text || string(c.Reasoning) != tc.reasoning {
			t.Errorf("%s: text %q, reasoning %q, error %v; want %q, %q", tc.body, c.Text, c.Reasoning, err, tc.text, tc.reasoning)
		}
		var v struct {
			Content any `json:"content"`
			Output  []struct {
				Content []struct{ Type, Text string } `json:"content"`
			} `json:"output"`
		}
		if err := json.Unmarshal([]byte(tc.body), &v); err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		var want strings.Builder
		if blocks, ok := v.Content.([]any); ok {
			for _, b := range blocks {
				if m := b.(map[string]any); m["type"] == "text" {
					want.WriteString(m["text"].(string))
				}
			}
		}
		for _, o := range v.Output {
			for _, part := range o.Content {
				if part.Type == "output_text" {
					want.WriteString(part.Text)
				}
			}
		}
		if want.String() != tc.text {
			t.Errorf("%s: encoding/json reads text %q; the case wants %q", tc.body, want.String(), tc.text)
		}
	}
	for _, bad := range []string{`{"content":[{"type":"text","text":"x"}`, `{"output":[{"content":[1,]}]}`} {
		if err := p.Parse([]byte(bad), &c); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	body := []byte(`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"thinking","thinking":"c"}]}`)
	if a := testing.AllocsPerRun(100, func() { _ = p.Parse(body, &c) }); a != 0 {
		t.Errorf("Parse of a whole message allocates %v times per call, want 0", a)
	}
}
