package tokenizer

import "errors"

// chatConfig is filled from tokenizer_config.json / chat_template.jinja. (stub: being built)
type chatConfig struct {
	template string
	bos, eos string
}

// Message is one chat message given to a chat template.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatOptions controls ApplyChatTemplate.
type ChatOptions struct {
	AddGenerationPrompt bool
}

// HasChatTemplate reports whether the tokenizer came with a chat template.
func (t *Tokenizer) HasChatTemplate() bool { return t.chat != nil && t.chat.template != "" }

// ApplyChatTemplate renders messages with the model's chat template. (stub: being built)
func (t *Tokenizer) ApplyChatTemplate(msgs []Message, opts ChatOptions) (string, error) {
	return "", errors.New("tokenizer: chat templates not implemented yet")
}
