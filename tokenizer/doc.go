// Package tokenizer counts tokens exactly as Hugging Face tokenizers do, in pure Go, and
// renders chat templates as transformers' apply_chat_template does.
package tokenizer
