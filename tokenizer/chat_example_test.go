package tokenizer_test

import (
	"fmt"
	"time"

	"github.com/perfgate/perfgate/tokenizer"
)

// A model directory holds tokenizer.json and tokenizer_config.json (with its
// chat_template); Load picks up both. The rendering already contains BOS, so count it
// with CountChat (encoding without adding special tokens).
func ExampleTokenizer_ApplyChatTemplate() {
	tok, err := tokenizer.Load("testdata/models/Qwen3-8B") // a directory, a file or a Hub id
	if err != nil {
		fmt.Println(err)
		return
	}
	msgs := []tokenizer.Message{
		{Role: "system", Content: "You are terse."},
		{Role: "user", Content: "Name a prime."},
	}
	opts := tokenizer.ChatOptions{
		AddGenerationPrompt: true,
		Kwargs:              map[string]any{"enable_thinking": false},
		Now:                 func() time.Time { return time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC) },
	}
	text, err := tok.ApplyChatTemplate(msgs, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, _ := tok.CountChat(msgs, opts)
	fmt.Printf("%d tokens:\n%s", n, text)
}

// Without a template, servers fall back to ChatML.
func ExampleRenderChatMLFallback() {
	fmt.Print(tokenizer.RenderChatMLFallback([]tokenizer.Message{
		{Role: "system", Content: "You are terse."},
		{Role: "user", Content: "Hi!"},
	}, true))
	// Output:
	// <|im_start|>system
	// You are terse.<|im_end|>
	// <|im_start|>user
	// Hi!<|im_end|>
	// <|im_start|>assistant
}
