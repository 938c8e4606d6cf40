package loadgen

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/perfgate/perfgate/internal/openai"
)

// TestWireBodyMatchesMarshal: appendWireBody writes the bytes encoding/json.Marshal
// writes, for random bodies over every field and every shape the adapters put in
// input and query, and strings with every character class Marshal escapes (HTML,
// control characters, invalid UTF-8, U+2028/9, multi-byte text). Request bodies are
// fingerprinted, so a byte of difference would change every run's fingerprint.
func TestWireBodyMatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 23))
	pieces := []string{"a", "hello world", "<", ">", "&", `"`, `\`, "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
		"é", "日本", "\u2028", "\u2029", "\xff", "\xe2\x82", "😀", "\ufffd", " ", "{}", "\u0085"}
	str := func() string {
		var b bytes.Buffer
		for range rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	intp := func() *int {
		if rng.IntN(2) == 0 {
			return nil
		}
		v := rng.IntN(5000) - 10
		return &v
	}
	for i := range 5000 {
		w := wireBody{Model: str(), System: str(), Stream: rng.IntN(2) == 0,
			MaxTokens: intp(), MaxCompletionTokens: intp(), MaxOutputTokens: intp(), MinTokens: intp()}
		for range rng.IntN(3) {
			m := message{Role: str(), Content: str()}
			switch rng.IntN(4) {
			case 0:
				m.ToolCalls = []openai.ToolCall{{ID: str(), Type: "function", Function: openai.FunctionCall{Name: str(), Arguments: str()}}}
			case 1:
				m.ToolCallID = str()
			}
			w.Messages = append(w.Messages, m)
		}
		if rng.IntN(2) == 0 {
			w.Tools = json.RawMessage(`[ {"type": "function", "function": {"name": "f<1>", "parameters": {"type":"object"}}} ]`)
			w.ToolChoice = []any{"auto", "required", map[string]any{"type": "function", "function": map[string]string{"name": str()}}}[rng.IntN(3)]
		}
		if rng.IntN(2) == 0 {
			p := str()
			w.Prompt = &p
		}
		shapes := []func() any{
			func() any { return nil },
			func() any { return str() },
			func() any { return []string{str(), str()} },
			func() any { return []string(nil) },
			func() any { return textField{Text: str()} },
			func() any { return []message{{Role: "user", Content: str()}} },
			func() any { return []message{{Role: "tool", Content: str(), ToolCallID: str()}} },
			func() any { return []message(nil) },
			func() any { return map[string]int{"k": 1} }, // a shape the encoder leaves to Marshal
		}
		w.Input, w.Query = shapes[rng.IntN(len(shapes))](), shapes[rng.IntN(len(shapes))]()
		for range rng.IntN(3) {
			w.Passages = append(w.Passages, textField{Text: str()})
		}
		for range rng.IntN(3) {
			w.Documents = append(w.Documents, str())
		}
		if rng.IntN(2) == 0 {
			w.StreamOptions = &streamOptions{IncludeUsage: rng.IntN(2) == 0}
		}
		if rng.IntN(2) == 0 {
			v := rng.IntN(2) == 0
			w.IgnoreEOS = &v
		}
		want, err := json.Marshal(&w)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendWireBody(nil, &w); !bytes.Equal(got, want) {
			t.Fatalf("body %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
